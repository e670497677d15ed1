// Import-time evaluation: the ONNX ops that compute shapes and indices
// (what torch.onnx.export writes around Reshape, Flatten and view) evaluated
// on OnnxConst values when their inputs are constants, Shape and Size of any
// value (every shape is known at import), and Constant nodes. The runtime
// forms of Gather, Slice, Cast, Where, Expand ... are other files'; these
// registrations merge with theirs (io/onnx_ops.h).
#include <algorithm>
#include <cmath>
#include <functional>

#include "io/onnx/onnx_ops.h"
#include "ir/error.h"
#include "ir/limits.h"

namespace hybgen {
namespace {

using onnx_util::normalize_axis;

constexpr int64_t kMaxElements = int64_t{1} << 22;

// Elements of a shape computed at import, refused past kMaxElements.
int64_t checked_count(OnnxContext& c, const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) c.fail("negative dimension in " + shape_str(shape));
    if (d != 0 && n > kMaxElements / d)
      throw OnnxFoldTooLarge(c.where() + ": a tensor of shape " + shape_str(shape) + " is too large to compute at import");
    n *= d;
  }
  if (shape.size() > limits::kMaxRank) c.fail("rank " + std::to_string(shape.size()) + " is too large");
  return n;
}

std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (std::size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}

// For each element of `out`, the flat index of the element of `in` it reads
// under numpy broadcasting.
std::vector<int64_t> broadcast_index(const Shape& in, const Shape& out) {
  const int64_t n = num_elements(out);
  std::vector<int64_t> idx(static_cast<std::size_t>(n));
  const auto in_st = strides_of(in);
  const auto out_st = strides_of(out);
  const std::size_t off = out.size() - in.size();
  for (int64_t i = 0; i < n; ++i) {
    int64_t rem = i, src = 0;
    for (std::size_t d = 0; d < out.size(); ++d) {
      const int64_t coord = rem / out_st[d];
      rem %= out_st[d];
      if (d >= off && in[d - off] != 1) src += coord * in_st[d - off];
    }
    idx[static_cast<std::size_t>(i)] = src;
  }
  return idx;
}

const OnnxConverterRegistrar constant_reg(OnnxConverter("Constant")
    .folds([](OnnxContext& c) {
          if (c.has_attr("value")) return c.set_constant(0, c.attr_tensor("value"));
          if (c.has_attr("value_float")) return c.set_constant(0, OnnxConst::scalar_float(c.attr_float("value_float", 0)));
          if (c.has_attr("value_floats")) {
            auto v = c.attr_floats("value_floats", {});
            return c.set_constant(0, OnnxConst::of_floats({static_cast<int64_t>(v.size())}, v));
          }
          if (c.has_attr("value_int")) return c.set_constant(0, OnnxConst::scalar_int(c.attr_int("value_int", 0)));
          if (c.has_attr("value_ints")) {
            auto v = c.attr_ints("value_ints", {});
            return c.set_constant(0, OnnxConst::of_ints({static_cast<int64_t>(v.size())}, v));
          }
          c.fail("has none of the attributes value, value_float(s), value_int(s) hybgen reads");
        })
    .handles({"value", "value_float", "value_floats", "value_int", "value_ints"})
    .checks([](OnnxCheck& k) {
          for (const char* a : {"sparse_value", "value_string", "value_strings"})
            if (k.has_attr(a)) k.refuse(a, "string and sparse constants are not supported");
        }));

// Shape (with start/end from opset 15) and Size read only the input's type.
const OnnxConverterRegistrar shape_reg(OnnxConverter("Shape")
    .folds([](OnnxContext& c) {
          const Shape s = c.shape(0);
          const int64_t rank = static_cast<int64_t>(s.size());
          auto clampi = [&](int64_t v) { return std::clamp(v < 0 ? v + rank : v, int64_t{0}, rank); };
          const int64_t start = clampi(c.attr_int("start", 0)), end = clampi(c.attr_int("end", rank));
          std::vector<int64_t> v;
          for (int64_t i = start; i < end; ++i) v.push_back(s[static_cast<std::size_t>(i)]);
          c.set_constant(0, OnnxConst::of_ints({static_cast<int64_t>(v.size())}, v));
        })
    .always_fold()
    .handles({"start", "end"}));

const OnnxConverterRegistrar size_reg(OnnxConverter("Size")
    .folds([](OnnxContext& c) { c.set_constant(0, OnnxConst::scalar_int(num_elements(c.shape(0)))); })
    .always_fold());

// Elementwise ops with numpy broadcasting on constants.
using BinaryFn = std::function<void(const OnnxConst& a, const OnnxConst& b, int64_t ia, int64_t ib, OnnxConst& out, int64_t i)>;

OnnxConst broadcast_binary(OnnxContext& c, const OnnxConst& a, const OnnxConst& b, int32_t out_dtype, const BinaryFn& fn) {
  const Shape shape = onnx_util::broadcast_shapes(a.shape, b.shape, c.where());
  const int64_t n = checked_count(c, shape);
  OnnxConst out;
  out.dtype = out_dtype;
  out.shape = shape;
  if (out.is_float()) out.floats.resize(static_cast<std::size_t>(n));
  else out.ints.resize(static_cast<std::size_t>(n));
  const auto ia = broadcast_index(a.shape, shape), ib = broadcast_index(b.shape, shape);
  for (int64_t i = 0; i < n; ++i) fn(a, b, ia[static_cast<std::size_t>(i)], ib[static_cast<std::size_t>(i)], out, i);
  return out;
}

double round_float(double v, int32_t dtype) {
  return dtype == onnx_dtype::kDouble ? v : static_cast<double>(static_cast<float>(v));
}

void arithmetic(const char* op_type, char op) {
  static std::vector<OnnxConverterRegistrar> regs;
  regs.emplace_back(OnnxConverter(op_type)
    .folds([op](OnnxContext& c) {
            const OnnxConst& a = c.constant(0);
            const OnnxConst& b = c.constant(1);
            if (a.is_float() != b.is_float()) c.fail("inputs of dtypes " + std::to_string(a.dtype) + " and " + std::to_string(b.dtype) + " differ");
            c.set_constant(0, broadcast_binary(c, a, b, a.dtype, [&](const OnnxConst& x, const OnnxConst& y, int64_t i, int64_t j, OnnxConst& out, int64_t k) {
              if (out.is_float()) {
                const double p = x.floats[static_cast<std::size_t>(i)], q = y.floats[static_cast<std::size_t>(j)];
                const double r = op == '+' ? p + q : op == '-' ? p - q : op == '*' ? p * q : p / q;
                out.floats[static_cast<std::size_t>(k)] = round_float(r, out.dtype);
              } else {
                const int64_t p = x.ints[static_cast<std::size_t>(i)], q = y.ints[static_cast<std::size_t>(j)];
                if (op == '/' && q == 0) c.fail("integer division by zero");
                // Wrapping two's-complement arithmetic, as the runtimes do.
                const uint64_t up = static_cast<uint64_t>(p), uq = static_cast<uint64_t>(q);
                int64_t r;
                if (op == '+') r = static_cast<int64_t>(up + uq);
                else if (op == '-') r = static_cast<int64_t>(up - uq);
                else if (op == '*') r = static_cast<int64_t>(up * uq);
                else if (p == INT64_MIN && q == -1) r = INT64_MIN;
                else r = p / q;  // truncates toward zero, as ONNX Runtime's integer Div
                out.ints[static_cast<std::size_t>(k)] = r;
              }
            }));
          }));
}

void comparison(const char* op_type, int kind) {
  static std::vector<OnnxConverterRegistrar> regs;
  regs.emplace_back(OnnxConverter(op_type)
    .folds([kind](OnnxContext& c) {
            c.set_constant(0, broadcast_binary(c, c.constant(0), c.constant(1), onnx_dtype::kBool,
                                               [&](const OnnxConst& x, const OnnxConst& y, int64_t i, int64_t j, OnnxConst& out, int64_t k) {
                                                 const double p = x.at_double(i), q = y.at_double(j);
                                                 bool r;
                                                 if (!x.is_float() && !y.is_float()) {
                                                   const int64_t a = x.ints[static_cast<std::size_t>(i)], b = y.ints[static_cast<std::size_t>(j)];
                                                   r = kind == 0 ? a == b : kind == 1 ? a < b : kind == 2 ? a > b : kind == 3 ? (a && b) : (a || b);
                                                 } else {
                                                   r = kind == 0 ? p == q : kind == 1 ? p < q : kind == 2 ? p > q : kind == 3 ? (p != 0 && q != 0) : (p != 0 || q != 0);
                                                 }
                                                 out.ints[static_cast<std::size_t>(k)] = r;
                                               }));
          }));
}

const int arithmetic_regs = [] {
  arithmetic("Add", '+');
  arithmetic("Sub", '-');
  arithmetic("Mul", '*');
  arithmetic("Div", '/');
  comparison("Equal", 0);
  comparison("Less", 1);
  comparison("Greater", 2);
  comparison("And", 3);
  comparison("Or", 4);
  return 0;
}();

const OnnxConverterRegistrar not_reg(OnnxConverter("Not")
    .folds([](OnnxContext& c) {
          OnnxConst v = c.constant(0).cast(onnx_dtype::kBool);
          for (auto& x : v.ints) x = !x;
          c.set_constant(0, std::move(v));
        }));

const OnnxConverterRegistrar neg_fold_reg(OnnxConverter("Neg")
    .folds([](OnnxContext& c) {
          OnnxConst v = c.constant(0);
          for (auto& x : v.floats) x = -x;
          for (auto& x : v.ints) x = static_cast<int64_t>(0 - static_cast<uint64_t>(x));
          c.set_constant(0, std::move(v));
        }));

const OnnxConverterRegistrar where_reg(OnnxConverter("Where")
    .folds([](OnnxContext& c) {
          const OnnxConst& cond = c.constant(0);
          const OnnxConst& x = c.constant(1);
          const OnnxConst& y = c.constant(2);
          if (x.is_float() != y.is_float()) c.fail("X and Y have different dtypes");
          const Shape shape = onnx_util::broadcast_shapes(onnx_util::broadcast_shapes(cond.shape, x.shape, c.where()), y.shape, c.where());
          const int64_t n = checked_count(c, shape);
          const auto ic = broadcast_index(cond.shape, shape), ix = broadcast_index(x.shape, shape), iy = broadcast_index(y.shape, shape);
          OnnxConst out;
          out.dtype = x.dtype;
          out.shape = shape;
          for (int64_t i = 0; i < n; ++i) {
            const std::size_t k = static_cast<std::size_t>(i);
            const bool t = cond.at_double(ic[k]) != 0;
            if (out.is_float()) out.floats.push_back(t ? x.floats[static_cast<std::size_t>(ix[k])] : y.floats[static_cast<std::size_t>(iy[k])]);
            else out.ints.push_back(t ? x.ints[static_cast<std::size_t>(ix[k])] : y.ints[static_cast<std::size_t>(iy[k])]);
          }
          c.set_constant(0, std::move(out));
        }));

// Gathers rows of `data` along `axis` (shared by Gather's fold).
OnnxConst gather(OnnxContext& c, const OnnxConst& data, const OnnxConst& indices, int64_t axis_attr) {
  const int64_t rank = static_cast<int64_t>(data.shape.size());
  if (rank == 0) c.fail("data is a scalar");
  const int64_t axis = normalize_axis(axis_attr, rank, c.where());
  const int64_t dim = data.shape[static_cast<std::size_t>(axis)];
  Shape out_shape(data.shape.begin(), data.shape.begin() + axis);
  out_shape.insert(out_shape.end(), indices.shape.begin(), indices.shape.end());
  out_shape.insert(out_shape.end(), data.shape.begin() + axis + 1, data.shape.end());
  checked_count(c, out_shape);
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= data.shape[static_cast<std::size_t>(i)];
  for (int64_t i = axis + 1; i < rank; ++i) inner *= data.shape[static_cast<std::size_t>(i)];
  const std::vector<int64_t> idx = indices.as_ints();
  OnnxConst out;
  out.dtype = data.dtype;
  out.shape = out_shape;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t raw : idx) {
      const int64_t j = raw < 0 ? raw + dim : raw;
      if (j < 0 || j >= dim) c.fail("index " + std::to_string(raw) + " is out of range for axis " + std::to_string(axis) + " of size " + std::to_string(dim));
      for (int64_t q = 0; q < inner; ++q) {
        const int64_t src = (o * dim + j) * inner + q;
        if (data.is_float()) out.floats.push_back(data.floats[static_cast<std::size_t>(src)]);
        else out.ints.push_back(data.ints[static_cast<std::size_t>(src)]);
      }
    }
  return out;
}

const OnnxConverterRegistrar gather_reg(OnnxConverter("Gather")
    .folds([](OnnxContext& c) { c.set_constant(0, gather(c, c.constant(0), c.constant(1), c.attr_int("axis", 0))); })
    .handles({"axis"}));

const OnnxConverterRegistrar concat_fold_reg(OnnxConverter("Concat")
    .folds([](OnnxContext& c) {
          std::vector<const OnnxConst*> in;
          for (int i = 0; i < c.num_inputs(); ++i)
            if (c.has_input(i)) in.push_back(&c.constant(i));
          if (in.empty()) c.fail("has no inputs");
          const int64_t rank = static_cast<int64_t>(in[0]->shape.size());
          if (rank == 0) c.fail("cannot concatenate scalars");
          const int64_t axis = normalize_axis(c.attr_int("axis"), rank, c.where());
          Shape shape = in[0]->shape;
          shape[static_cast<std::size_t>(axis)] = 0;
          for (const OnnxConst* k : in) {
            if (static_cast<int64_t>(k->shape.size()) != rank || k->is_float() != in[0]->is_float())
              c.fail("inputs of different ranks or dtypes");
            for (int64_t d = 0; d < rank; ++d)
              if (d != axis && k->shape[static_cast<std::size_t>(d)] != in[0]->shape[static_cast<std::size_t>(d)])
                c.fail("input shapes " + shape_str(in[0]->shape) + " and " + shape_str(k->shape) + " differ off the axis");
            shape[static_cast<std::size_t>(axis)] += k->shape[static_cast<std::size_t>(axis)];
          }
          checked_count(c, shape);
          int64_t outer = 1;
          for (int64_t d = 0; d < axis; ++d) outer *= shape[static_cast<std::size_t>(d)];
          OnnxConst out;
          out.dtype = in[0]->dtype;
          out.shape = shape;
          for (int64_t o = 0; o < outer; ++o)
            for (const OnnxConst* k : in) {
              const int64_t block = outer ? k->size() / outer : 0;
              for (int64_t q = 0; q < block; ++q) {
                if (out.is_float()) out.floats.push_back(k->floats[static_cast<std::size_t>(o * block + q)]);
                else out.ints.push_back(k->ints[static_cast<std::size_t>(o * block + q)]);
              }
            }
          c.set_constant(0, std::move(out));
        })
    .handles({"axis"}));

// Slice: starts/ends/axes attributes before opset 10; inputs (with steps) after.
const OnnxConverterRegistrar slice_reg(OnnxConverter("Slice")
    .folds([](OnnxContext& c) {
          const OnnxConst& data = c.constant(0);
          onnx_util::SliceArgs args = onnx_util::slice_args(c);
          std::vector<int64_t> &starts = args.starts, &ends = args.ends, &axes = args.axes, &steps = args.steps;
          const int64_t rank = static_cast<int64_t>(data.shape.size());
          if (axes.empty())
            for (std::size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
          if (steps.empty()) steps.assign(starts.size(), 1);
          if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
            c.fail("starts, ends, axes and steps have different lengths");
          std::vector<int64_t> begin(static_cast<std::size_t>(rank), 0), step(static_cast<std::size_t>(rank), 1);
          Shape shape = data.shape;
          std::vector<bool> seen(static_cast<std::size_t>(rank), false);
          for (std::size_t i = 0; i < starts.size(); ++i) {
            const std::size_t a = static_cast<std::size_t>(normalize_axis(axes[i], rank, c.where()));
            if (seen[a]) c.fail("axes repeat axis " + std::to_string(a));
            seen[a] = true;
            const int64_t dim = data.shape[a], s = steps[i];
            if (s == 0) c.fail("step 0");
            auto fix = [&](int64_t v) {
              v = std::clamp(v, INT64_MIN / 2, INT64_MAX / 2);  // INT64_MAX means "to the end"
              if (v < 0) v += dim;
              // Clamped as ONNX says: [0, dim] for positive steps, [-1, dim-1] for negative ones.
              return s > 0 ? std::clamp(v, int64_t{0}, dim) : std::clamp(v, int64_t{-1}, dim - 1);
            };
            const int64_t st = fix(starts[i]), en = fix(ends[i]);
            const int64_t len = s > 0 ? (en > st ? (en - st + s - 1) / s : 0) : (st > en ? (st - en + (-s) - 1) / (-s) : 0);
            begin[a] = st;
            step[a] = s;
            shape[a] = len;
          }
          const int64_t n = checked_count(c, shape);
          const auto in_st = strides_of(data.shape), out_st = strides_of(shape);
          OnnxConst out;
          out.dtype = data.dtype;
          out.shape = shape;
          for (int64_t i = 0; i < n; ++i) {
            int64_t rem = i, src = 0;
            for (std::size_t d = 0; d < shape.size(); ++d) {
              const int64_t coord = rem / out_st[d];
              rem %= out_st[d];
              src += (begin[d] + coord * step[d]) * in_st[d];
            }
            if (data.is_float()) out.floats.push_back(data.floats[static_cast<std::size_t>(src)]);
            else out.ints.push_back(data.ints[static_cast<std::size_t>(src)]);
          }
          c.set_constant(0, std::move(out));
        })
    .handles({"starts", "ends", "axes"}));

const OnnxConverterRegistrar cast_reg(OnnxConverter("Cast")
    .folds([](OnnxContext& c) {
          try {
            c.set_constant(0, c.constant(0).cast(static_cast<int32_t>(c.attr_int("to"))));
          } catch (const Error& e) {
            c.fail(e.what());
          }
        })
    .handles({"to"})
    .ignores({"saturate"}));

const OnnxConverterRegistrar constant_of_shape_reg(OnnxConverter("ConstantOfShape")
    .folds([](OnnxContext& c) {
          const std::vector<int64_t> dims = c.has_input(0) ? c.constant(0).as_ints() : std::vector<int64_t>{};
          const Shape shape(dims.begin(), dims.end());
          const int64_t n = checked_count(c, shape);
          OnnxConst value = c.has_attr("value") ? c.attr_tensor("value") : OnnxConst::scalar_float(0.0);
          if (value.size() != 1) c.fail("value must hold one element");
          OnnxConst out;
          out.dtype = value.dtype;
          out.shape = shape;
          if (out.is_float()) out.floats.assign(static_cast<std::size_t>(n), value.floats[0]);
          else out.ints.assign(static_cast<std::size_t>(n), value.ints[0]);
          c.set_constant(0, std::move(out));
        })
    .handles({"value"}));

const OnnxConverterRegistrar range_reg(OnnxConverter("Range")
    .folds([](OnnxContext& c) {
          const OnnxConst& s = c.constant(0);
          const OnnxConst& l = c.constant(1);
          const OnnxConst& d = c.constant(2);
          if (s.size() != 1 || l.size() != 1 || d.size() != 1) c.fail("start, limit and delta must be scalars");
          const double start = s.at_double(0), limit = l.at_double(0), delta = d.at_double(0);
          if (delta == 0) c.fail("delta is 0");
          const double count = std::max(std::ceil((limit - start) / delta), 0.0);
          if (!(count <= static_cast<double>(kMaxElements))) c.fail("the range is too long to compute at import");
          const int64_t n = static_cast<int64_t>(count);
          OnnxConst out;
          out.dtype = s.dtype;
          out.shape = {n};
          for (int64_t i = 0; i < n; ++i) {
            if (s.is_float()) out.floats.push_back(round_float(start + static_cast<double>(i) * delta, s.dtype));
            else  // wrapping, as the runtimes' int arithmetic
              out.ints.push_back(static_cast<int64_t>(static_cast<uint64_t>(s.ints[0]) +
                                                      static_cast<uint64_t>(i) * static_cast<uint64_t>(d.at_int(0))));
          }
          c.set_constant(0, std::move(out));
        }));

const OnnxConverterRegistrar expand_reg(OnnxConverter("Expand")
    .folds([](OnnxContext& c) {
          const OnnxConst& data = c.constant(0);
          const std::vector<int64_t> dims = c.constant(1).as_ints();
          const Shape shape = onnx_util::broadcast_shapes(data.shape, Shape(dims.begin(), dims.end()), c.where());
          const int64_t n = checked_count(c, shape);
          const auto idx = broadcast_index(data.shape, shape);
          OnnxConst out;
          out.dtype = data.dtype;
          out.shape = shape;
          for (int64_t i = 0; i < n; ++i) {
            if (data.is_float()) out.floats.push_back(data.floats[static_cast<std::size_t>(idx[static_cast<std::size_t>(i)])]);
            else out.ints.push_back(data.ints[static_cast<std::size_t>(idx[static_cast<std::size_t>(i)])]);
          }
          c.set_constant(0, std::move(out));
        }));

}  // namespace
}  // namespace hybgen
