#include "ops/conv_geometry.h"

#include <string>
#include <vector>

#include "ir/error.h"

namespace hybgen {
namespace {

int64_t pair_at(const std::vector<int64_t>& v, std::size_t i, int64_t fallback) {
  return v.empty() ? fallback : v[i];
}

}  // namespace

ConvGeometry conv_geometry(const Attrs& a, const Shape& data) {
  const auto& kernel = a.get_ints("kernel");
  if (kernel.size() != 2) throw Error("only 2-D convolution is supported (kernel " + shape_str(kernel) + ")");
  for (const char* name : {"stride", "dilate", "pad"}) {
    const auto& v = a.get_ints(name);
    if (!v.empty() && v.size() != 2) throw Error(std::string(name) + " must have 2 values, got " + shape_str(v));
  }
  if (data.size() != 4) throw Error("data must be NCHW (4 dims), got " + shape_str(data));
  ConvGeometry g{};
  g.n = data[0], g.c = data[1], g.h = data[2], g.w = data[3];
  g.f = a.get_int("num_filter");
  g.kh = kernel[0], g.kw = kernel[1];
  g.sh = pair_at(a.get_ints("stride"), 0, 1), g.sw = pair_at(a.get_ints("stride"), 1, 1);
  g.dh = pair_at(a.get_ints("dilate"), 0, 1), g.dw = pair_at(a.get_ints("dilate"), 1, 1);
  g.ph = pair_at(a.get_ints("pad"), 0, 0), g.pw = pair_at(a.get_ints("pad"), 1, 0);
  g.groups = a.get_int("num_group");
  if (g.f <= 0 || g.kh <= 0 || g.kw <= 0 || g.sh <= 0 || g.sw <= 0 || g.dh <= 0 || g.dw <= 0 || g.ph < 0 ||
      g.pw < 0 || g.groups <= 0)
    throw Error("num_filter, kernel, stride, dilate and num_group must be positive and pad non-negative");
  if (g.c % g.groups || g.f % g.groups)
    throw Error("num_group " + std::to_string(g.groups) + " must divide channels " + std::to_string(g.c) +
                " and num_filter " + std::to_string(g.f));
  g.oh = (g.h + 2 * g.ph - (g.dh * (g.kh - 1) + 1)) / g.sh + 1;
  g.ow = (g.w + 2 * g.pw - (g.dw * (g.kw - 1) + 1)) / g.sw + 1;
  if (g.oh <= 0 || g.ow <= 0)
    throw Error("kernel " + shape_str(kernel) + " does not fit input " + shape_str(data) + " with this padding");
  return g;
}

}  // namespace hybgen
