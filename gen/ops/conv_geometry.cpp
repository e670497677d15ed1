#include "ops/conv_geometry.h"

#include <string>
#include <vector>

#include "ir/error.h"

namespace hybgen {
namespace {

const char* layout_name(int spatial) { return spatial == 1 ? "NCW" : spatial == 2 ? "NCHW" : "NCDHW"; }

// The value of axis i of a per-axis attribute with `rank` values (empty: fallback).
int64_t axis_value(const std::vector<int64_t>& v, std::size_t i, int64_t fallback) {
  return v.empty() ? fallback : v[i];
}

constexpr int64_t kMaxWindow = (int64_t{1} << 31) - 1;

// The end padding of a node: attribute pad_end where it has one and it is
// not empty, else the begin padding `pad` (MXNet's symmetric padding).
const std::vector<int64_t>& end_pad(const Attrs& a, const std::vector<int64_t>& pad) {
  if (a.has("pad_end") && !a.get_ints("pad_end").empty()) return a.get_ints("pad_end");
  return pad;
}

}  // namespace

void check_layout(const std::string& attr, int spatial) {
  if (attr != "None" && attr != layout_name(spatial))
    throw Error("layout " + attr + " does not match a " + std::to_string(spatial) + "-D kernel (expected " +
                layout_name(spatial) + ")");
}

ConvGeometry conv_geometry(const Attrs& a, const Shape& data) {
  const auto& kernel = a.get_ints("kernel");
  const std::size_t rank = kernel.size();
  if (rank < 1 || rank > 3)
    throw Error("only 1-D, 2-D and 3-D convolutions are supported (kernel " + shape_str(kernel) + ")");
  for (const char* name : {"stride", "dilate", "pad", "pad_end"}) {
    if (!a.has(name)) continue;
    const auto& v = a.get_ints(name);
    if (!v.empty() && v.size() != rank)
      throw Error(std::string(name) + " must have " + std::to_string(rank) + " values, got " + shape_str(v));
  }
  const int spatial = static_cast<int>(rank);
  if (a.has("layout")) check_layout(a.get_string("layout"), spatial);
  if (data.size() != rank + 2)
    throw Error("data must be " + std::string(layout_name(spatial)) + " (" + std::to_string(rank + 2) +
                " dims) for a " + std::to_string(rank) + "-D kernel, got " + shape_str(data));
  const auto& stride = a.get_ints("stride");
  const auto& dilate = a.get_ints("dilate");
  const auto& pad = a.get_ints("pad");
  const auto& pad_end = end_pad(a, pad);
  ConvGeometry g{};
  g.spatial = spatial;
  g.n = data[0], g.c = data[1];
  g.f = a.get_int("num_filter");
  g.groups = a.get_int("num_group");
  // The last axis is the width, the one before it (if any) the height, the
  // first of three the depth; missing axes have size 1 and no padding.
  const std::size_t x = rank - 1;
  g.w = data[2 + x], g.kw = kernel[x], g.sw = axis_value(stride, x, 1), g.dw = axis_value(dilate, x, 1),
  g.pw = axis_value(pad, x, 0), g.pw_end = axis_value(pad_end, x, 0);
  g.h = 1, g.kh = 1, g.sh = 1, g.dh = 1, g.ph = 0;
  if (rank >= 2) {
    const std::size_t y = rank - 2;
    g.h = data[2 + y], g.kh = kernel[y], g.sh = axis_value(stride, y, 1), g.dh = axis_value(dilate, y, 1),
    g.ph = axis_value(pad, y, 0), g.ph_end = axis_value(pad_end, y, 0);
  }
  if (rank == 3) g.d = data[2], g.kd = kernel[0], g.sd = axis_value(stride, 0, 1), g.dd = axis_value(dilate, 0, 1),
                 g.pd = axis_value(pad, 0, 0), g.pd_end = axis_value(pad_end, 0, 0);
  if (g.f <= 0 || g.kd <= 0 || g.kh <= 0 || g.kw <= 0 || g.sd <= 0 || g.sh <= 0 || g.sw <= 0 || g.dd <= 0 ||
      g.dh <= 0 || g.dw <= 0 || g.pd < 0 || g.ph < 0 || g.pw < 0 || g.pd_end < 0 || g.ph_end < 0 || g.pw_end < 0 ||
      g.groups <= 0)
    throw Error("num_filter, kernel, stride, dilate and num_group must be positive and pad, pad_end non-negative");
  // Bounded so that the size arithmetic below cannot overflow.
  for (int64_t v : {g.kd, g.kh, g.kw, g.sd, g.sh, g.sw, g.dd, g.dh, g.dw, g.pd, g.ph, g.pw, g.pd_end, g.ph_end, g.pw_end})
    if (v > kMaxWindow) throw Error("kernel, stride, dilate and pad must be at most " + std::to_string(kMaxWindow));
  for (int64_t v : data)
    if (v <= 0) throw Error("data must have positive sizes, got " + shape_str(data));
  if (g.c % g.groups || g.f % g.groups)
    throw Error("num_group " + std::to_string(g.groups) + " must divide channels " + std::to_string(g.c) +
                " and num_filter " + std::to_string(g.f));
  // Floor division: a negative span (kernel past the padded input) must not round up to 0.
  auto out_size = [](int64_t in, int64_t k, int64_t b, int64_t e, int64_t s) {
    const int64_t span = in + b + e - k;
    return span < 0 ? 0 : span / s + 1;
  };
  g.od = out_size(g.d, g.dd * (g.kd - 1) + 1, g.pd, g.pd_end, g.sd);
  g.oh = out_size(g.h, g.dh * (g.kh - 1) + 1, g.ph, g.ph_end, g.sh);
  g.ow = out_size(g.w, g.dw * (g.kw - 1) + 1, g.pw, g.pw_end, g.sw);
  if (g.od <= 0 || g.oh <= 0 || g.ow <= 0)
    throw Error("kernel " + shape_str(kernel) + " does not fit input " + shape_str(data) + " with this padding");
  return g;
}

Shape conv_output_shape(const ConvGeometry& g) {
  if (g.spatial == 1) return {g.n, g.f, g.ow};
  if (g.spatial == 2) return {g.n, g.f, g.oh, g.ow};
  return {g.n, g.f, g.od, g.oh, g.ow};
}

Shape conv_weight_shape(const ConvGeometry& g) {
  const int64_t cg = g.c / g.groups;
  if (g.spatial == 1) return {g.f, cg, g.kw};
  if (g.spatial == 2) return {g.f, cg, g.kh, g.kw};
  return {g.f, cg, g.kd, g.kh, g.kw};
}

namespace {

int64_t pool_out_size(int64_t in, int64_t k, int64_t p, int64_t p_end, int64_t s, bool full) {
  const int64_t span = in + p + p_end - k;
  return (full ? (span + s - 1) / s : span / s) + 1;
}

}  // namespace

PoolGeometry pool_geometry(const Attrs& a, const Shape& data) {
  const bool global = a.get_bool("global_pool");
  const auto& k = a.get_ints("kernel");
  if (!global && (k.size() < 1 || k.size() > 3))
    throw Error("only 1-D, 2-D and 3-D pooling is supported (kernel " + shape_str(k) + ")");
  const std::size_t rank = global ? (data.size() >= 3 ? data.size() - 2 : 0) : k.size();
  if (rank < 1 || rank > 3 || data.size() != rank + 2)
    throw Error(global ? "global pooling needs NCW, NCHW or NCDHW data (3 to 5 dims), got " + shape_str(data)
                       : "data must be " + std::string(layout_name(static_cast<int>(rank))) + " (" +
                             std::to_string(rank + 2) + " dims) for a " + std::to_string(rank) + "-D kernel, got " +
                             shape_str(data));
  for (int64_t v : data)
    if (v <= 0) throw Error("data must have positive sizes, got " + shape_str(data));
  PoolGeometry g{};
  g.spatial = static_cast<int>(rank);
  check_layout(a.get_string("layout"), g.spatial);
  const std::string& type = a.get_string("pool_type");
  g.type = type == "max" ? 0 : type == "avg" ? 1 : 2;
  g.count_include_pad = a.get_bool("count_include_pad");
  g.n = data[0], g.c = data[1];
  g.w = data[data.size() - 1];
  if (rank >= 2) g.h = data[data.size() - 2];
  else g.h = 1;
  if (rank == 3) g.d = data[2];
  if (global) {
    g.kd = g.d, g.kh = g.h, g.kw = g.w, g.sh = g.sw = 1, g.ph = g.pw = 0, g.od = g.oh = g.ow = 1;
    return g;
  }
  const auto& s = a.get_ints("stride");
  const auto& p = a.get_ints("pad");
  const auto& pe = end_pad(a, p);
  if ((!s.empty() && s.size() != rank) || (!p.empty() && p.size() != rank) || (!pe.empty() && pe.size() != rank))
    throw Error("stride, pad and pad_end need " + std::to_string(rank) + " values like the kernel, got " +
                shape_str(s) + ", " + shape_str(p) + " and " + shape_str(pe));
  const std::size_t x = rank - 1;
  g.kw = k[x], g.sw = axis_value(s, x, 1), g.pw = axis_value(p, x, 0), g.pw_end = axis_value(pe, x, 0);
  g.kh = 1, g.sh = 1, g.ph = 0;
  if (rank >= 2)
    g.kh = k[x - 1], g.sh = axis_value(s, x - 1, 1), g.ph = axis_value(p, x - 1, 0),
    g.ph_end = axis_value(pe, x - 1, 0);
  if (rank == 3) g.kd = k[0], g.sd = axis_value(s, 0, 1), g.pd = axis_value(p, 0, 0), g.pd_end = axis_value(pe, 0, 0);
  if (g.kd <= 0 || g.kh <= 0 || g.kw <= 0 || g.sd <= 0 || g.sh <= 0 || g.sw <= 0 || g.pd < 0 || g.ph < 0 ||
      g.pw < 0 || g.pd_end < 0 || g.ph_end < 0 || g.pw_end < 0)
    throw Error("kernel and stride must be positive, pad and pad_end non-negative");
  for (int64_t v : {g.kd, g.kh, g.kw, g.sd, g.sh, g.sw, g.pd, g.ph, g.pw, g.pd_end, g.ph_end, g.pw_end})
    if (v > kMaxWindow) throw Error("kernel, stride and pad must be at most " + std::to_string(kMaxWindow));
  if (g.kd > g.d + g.pd + g.pd_end || g.kh > g.h + g.ph + g.ph_end || g.kw > g.w + g.pw + g.pw_end)
    throw Error("kernel " + shape_str(k) + " is larger than the padded input " + shape_str(data));
  const bool full = a.get_string("pooling_convention") == "full";
  g.od = pool_out_size(g.d, g.kd, g.pd, g.pd_end, g.sd, full);
  g.oh = pool_out_size(g.h, g.kh, g.ph, g.ph_end, g.sh, full);
  g.ow = pool_out_size(g.w, g.kw, g.pw, g.pw_end, g.sw, full);
  return g;
}

Shape pool_output_shape(const PoolGeometry& g) {
  if (g.spatial == 1) return {g.n, g.c, g.ow};
  if (g.spatial == 2) return {g.n, g.c, g.oh, g.ow};
  return {g.n, g.c, g.od, g.oh, g.ow};
}

}  // namespace hybgen
