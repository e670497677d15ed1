// Pooling, 2-D, NCHW: max, avg and sum windows; global pooling; MXNet's
// "valid" (floor) and "full" (ceil) output sizes; count_include_pad for avg.
#include <algorithm>
#include <cfloat>

#include "ir/error.h"
#include "ops/op.h"
#include "ops/op_util.h"

namespace hybgen {
namespace {

struct PoolGeometry {
  int64_t n, c, h, w, kh, kw, oh, ow, sh, sw, ph, pw;
  int type;  // 0 max, 1 avg, 2 sum
  bool count_include_pad;
};

int64_t out_size(int64_t in, int64_t k, int64_t p, int64_t s, bool full) {
  const int64_t span = in + 2 * p - k;
  return (full ? (span + s - 1) / s : span / s) + 1;
}

PoolGeometry geometry(const Attrs& a, const Shape& data) {
  if (data.size() != 4) throw Error("data must be NCHW (4 dims), got " + shape_str(data));
  PoolGeometry g{};
  g.n = data[0], g.c = data[1], g.h = data[2], g.w = data[3];
  const std::string& type = a.get_string("pool_type");
  g.type = type == "max" ? 0 : type == "avg" ? 1 : 2;
  g.count_include_pad = a.get_bool("count_include_pad");
  if (a.get_bool("global_pool")) {
    g.kh = g.h, g.kw = g.w, g.sh = g.sw = 1, g.ph = g.pw = 0, g.oh = g.ow = 1;
    return g;
  }
  const auto& k = a.get_ints("kernel");
  if (k.size() != 2) throw Error("only 2-D pooling is supported (kernel " + shape_str(k) + ")");
  const auto& s = a.get_ints("stride");
  const auto& p = a.get_ints("pad");
  if ((!s.empty() && s.size() != 2) || (!p.empty() && p.size() != 2)) throw Error("stride and pad need 2 values");
  g.kh = k[0], g.kw = k[1];
  g.sh = s.empty() ? 1 : s[0], g.sw = s.empty() ? 1 : s[1];
  g.ph = p.empty() ? 0 : p[0], g.pw = p.empty() ? 0 : p[1];
  if (g.kh <= 0 || g.kw <= 0 || g.sh <= 0 || g.sw <= 0 || g.ph < 0 || g.pw < 0)
    throw Error("kernel and stride must be positive, pad non-negative");
  if (g.kh > g.h + 2 * g.ph || g.kw > g.w + 2 * g.pw)
    throw Error("kernel " + shape_str(k) + " is larger than the padded input " + shape_str(data));
  const bool full = a.get_string("pooling_convention") == "full";
  g.oh = out_size(g.h, g.kh, g.ph, g.sh, full);
  g.ow = out_size(g.w, g.kw, g.pw, g.sw, full);
  return g;
}

// One output value; the same arithmetic as templates/kernels/pool2d.inc.
float pool_window(const PoolGeometry& g, const float* plane, int64_t oy, int64_t ox) {
  int64_t y0 = oy * g.sh - g.ph, x0 = ox * g.sw - g.pw;
  int64_t y1 = std::min(y0 + g.kh, g.h + g.ph), x1 = std::min(x0 + g.kw, g.w + g.pw);
  const int64_t padded_count = (y1 - y0) * (x1 - x0);
  y0 = std::max<int64_t>(y0, 0), x0 = std::max<int64_t>(x0, 0);
  y1 = std::min(y1, g.h), x1 = std::min(x1, g.w);
  float acc = g.type == 0 ? -FLT_MAX : 0.0f;
  for (int64_t y = y0; y < y1; ++y)
    for (int64_t x = x0; x < x1; ++x) {
      const float v = plane[y * g.w + x];
      acc = g.type == 0 ? std::max(acc, v) : acc + v;
    }
  if (g.type != 1) return acc;
  const int64_t count = g.count_include_pad ? padded_count : (y1 - y0) * (x1 - x0);
  return count > 0 ? acc / static_cast<float>(count) : 0.0f;
}

void reference(const KernelIO& io) {
  const PoolGeometry g = geometry(io.attrs, io.in_types[0].shape);
  for (int64_t p = 0; p < g.n * g.c; ++p)
    for (int64_t oy = 0; oy < g.oh; ++oy)
      for (int64_t ox = 0; ox < g.ow; ++ox)
        io.out[0][(p * g.oh + oy) * g.ow + ox] = pool_window(g, io.in[0] + p * g.h * g.w, oy, ox);
}

KernelCall emit_cpp(const EmitContext& ctx) {
  const PoolGeometry g = geometry(ctx.node.attrs, ctx.in_types[0].shape);
  const std::vector<int64_t> dims{g.n * g.c, g.h,  g.w,  g.kh,   g.kw, g.oh, g.ow,
                                  g.sh,      g.sw, g.ph, g.pw, g.type, g.count_include_pad ? 1 : 0};
  return {{"pool2d"}, "{\n  static const long geometry[] = " + cpp_int_list(dims) + ";\n  hg_pool2d(" + ctx.in[0] +
                          ", " + ctx.out[0] + ", geometry, " + ctx.pool + ");\n}"};
}

Attrs pool(const std::string& type, std::vector<int64_t> kernel, std::vector<int64_t> stride,
           std::vector<int64_t> pad, const std::string& convention, bool global = false, bool include_pad = true) {
  Attrs a;
  a.set("pool_type", type);
  a.set("kernel", std::move(kernel));
  a.set("stride", std::move(stride));
  a.set("pad", std::move(pad));
  a.set("pooling_convention", convention);
  a.set("global_pool", global);
  a.set("count_include_pad", include_pad);
  return a;
}

const OpRegistrar reg([] {
  OpDef d;
  d.name = "Pooling";
  d.summary = "2-D max/avg/sum pooling, NCHW (Gluon MaxPool2D, AvgPool2D, GlobalAvgPool2D)";
  d.input_names = {"data"};
  d.attrs = {{"kernel", AttrKind::kInts, std::vector<int64_t>{}, "(kh, kw); ignored with global_pool", {}},
             {"pool_type", AttrKind::kString, std::string("max"), "window reduction", {"max", "avg", "sum"}},
             {"global_pool", AttrKind::kBool, false, "pool the whole plane to 1x1", {}},
             {"pooling_convention", AttrKind::kString, std::string("valid"), "valid: floor, full: ceil",
              {"valid", "full"}},
             {"stride", AttrKind::kInts, std::vector<int64_t>{}, "(sh, sw); default 1", {}},
             {"pad", AttrKind::kInts, std::vector<int64_t>{}, "(ph, pw); default 0", {}},
             {"count_include_pad", AttrKind::kBool, true, "avg divides by the padded window size", {}},
             {"cudnn_off", AttrKind::kBool, false, "ignored", {}},
             {"layout", AttrKind::kString, std::string("NCHW"), "data layout", {"NCHW"}}};
  d.fusion = FusionClass::kOpaque;
  d.infer = [](const Attrs& a, const std::vector<TensorType>& in) {
    const PoolGeometry g = geometry(a, in[0].shape);
    return std::vector<TensorType>{TensorType{{g.n, g.c, g.oh, g.ow}, in[0].dtype}};
  };
  d.reference = reference;
  d.emit_cpp = emit_cpp;
  d.flops = [](const Attrs& a, const std::vector<TensorType>& in, const std::vector<TensorType>&) {
    const PoolGeometry g = geometry(a, in[0].shape);
    return static_cast<double>(g.n * g.c * g.oh * g.ow * g.kh * g.kw);
  };
  d.examples = {
      {pool("max", {2, 2}, {2, 2}, {}, "valid"), {{1, 3, 6, 7}}},
      {pool("max", {3, 3}, {2, 2}, {1, 1}, "valid"), {{2, 2, 7, 7}}},
      {pool("avg", {3, 3}, {2, 2}, {1, 1}, "full"), {{1, 2, 6, 6}}},
      {pool("avg", {3, 3}, {2, 2}, {1, 1}, "full", false, false), {{1, 2, 6, 6}}},
      {pool("max", {3, 3}, {2, 2}, {}, "full"), {{1, 2, 8, 8}}},
      {pool("avg", {1, 1}, {}, {}, "valid", true), {{2, 3, 5, 4}}},
      {pool("sum", {2, 2}, {1, 1}, {}, "valid"), {{1, 1, 2, 3}}},
      // Rows wider than a vector for the kernel's row-at-a-time interior
      // path; global pooling of planes longer than its 16 partial results.
      {pool("max", {3, 3}, {2, 2}, {1, 1}, "valid"), {{1, 2, 19, 37}}},
      {pool("avg", {2, 2}, {2, 2}, {}, "valid"), {{1, 3, 12, 33}}},
      {pool("avg", {3, 3}, {1, 1}, {1, 1}, "valid", false, false), {{1, 2, 5, 40}}},
      {pool("avg", {1, 1}, {}, {}, "valid", true), {{1, 3, 9, 9}}},
      {pool("max", {1, 1}, {}, {}, "valid", true), {{1, 2, 7, 11}}},
  };
  return d;
}());

}  // namespace
}  // namespace hybgen
