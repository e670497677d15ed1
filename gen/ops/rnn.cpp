// RNN: MXNet's fused recurrent layer (what Gluon's rnn.LSTM, rnn.GRU and
// rnn.RNN export): `num_layers` stacked layers of LSTM, GRU or a plain
// tanh/ReLU cell, one direction or two, over data (T, N, C) in time-major
// order. Inputs: data, the flat `parameters` vector in MXNet's layout
// (gen/ops/rnn.h), the initial state (L*D, N, H) and, for LSTM, the initial
// cell (L*D, N, H). Outputs: (T, N, D*H), the forward direction in the first
// H of the last axis; with state_outputs also the last hidden state and, for
// LSTM, the last cell, both (L*D, N, H).
//
//   LSTM: i, f, g, o = sig, sig, tanh, sig(W_i x + b_i + W_h h + b_h)
//         c' = f c + i g,  h' = o tanh(c')
//   GRU:  r, z = sig(W_ir x + b_ir + W_hr h + b_hr), sig(... z ...)
//         n = tanh(W_in x + b_in + r (W_hn h + b_hn)),  h' = (1 - z) n + z h
//   rnn_tanh / rnn_relu: h' = act(W_i x + b_i + W_h h + b_h)
//
// Dropout between layers (p) is identity at inference. The generated C++
// kernel (templates/kernels/rnn.inc) runs the input projection of all time
// steps as one GEMM per layer and direction and one h2h GEMM per step, over
// weights packed at generation time when `parameters` is a constant.
#include "ops/rnn.h"

#include <cmath>
#include <cstring>
#include <optional>
#include <utility>

#include "ir/error.h"
#include "ir/limits.h"
#include "ops/gemm_pack.h"
#include "ops/op.h"
#include "ops/op_util.h"

namespace hybgen {

int64_t RnnDims::i2h_weight(int64_t layer, int64_t dir) const {
  int64_t offset = 0;
  for (int64_t l = 0; l < layer; ++l) offset += dirs * weights_of(l);
  return offset + dir * weights_of(layer);
}

int64_t RnnDims::weight_floats() const { return i2h_weight(layers, 0); }

RnnDims rnn_dims(const Attrs& a, const Shape& data) {
  if (a.get_int("projection_size") != 0)
    throw Error("projection_size is not supported (MXNet runs LSTM projections on cuDNN only)");
  if (a.get_string("lstm_state_clip_min") != "None" || a.get_string("lstm_state_clip_max") != "None")
    throw Error("lstm_state_clip_min/max are not supported (MXNet clips LSTM states on cuDNN only)");
  if (a.get_bool("use_sequence_length"))
    throw Error("use_sequence_length is not supported: every sequence runs all T steps");
  const double p = a.get_float("p");
  if (!(p >= 0.0 && p <= 1.0)) throw Error("p must be in [0, 1], got " + std::to_string(p));
  RnnDims d;
  d.mode = a.get_string("mode");
  d.layers = a.get_int("num_layers");
  d.hidden = a.get_int("state_size");
  d.dirs = a.get_bool("bidirectional") ? 2 : 1;
  if (d.layers < 1 || d.layers > 1024) throw Error("num_layers must be in [1, 1024], got " + std::to_string(d.layers));
  if (d.hidden < 1 || d.hidden > (int64_t{1} << 20))
    throw Error("state_size must be in [1, 2^20], got " + std::to_string(d.hidden));
  if (data.size() != 3) throw Error("data must be (T, N, C), got " + shape_str(data));
  for (int64_t s : data)
    if (s < 1) throw Error("data must be (T, N, C) with every size positive, got " + shape_str(data));
  d.steps = data[0];
  d.batch = data[1];
  d.input = data[2];
  // Sizes in double first: with absurd attributes the exact products overflow.
  const double g = static_cast<double>(d.gates()), h = static_cast<double>(d.hidden), dirs = static_cast<double>(d.dirs);
  const double floats = dirs * g * h * (static_cast<double>(d.input) + h + 2.0) +
                        (static_cast<double>(d.layers) - 1.0) * dirs * g * h * (dirs * h + h + 2.0);
  const double gates = static_cast<double>(d.steps) * static_cast<double>(d.batch) * g * h * dirs;
  if (floats > static_cast<double>(limits::kMaxTensorElements))
    throw Error("the parameters would take " + std::to_string(floats) + " floats, more than a tensor may hold");
  if (gates > static_cast<double>(limits::kMaxTensorElements))
    throw Error("the gates of all steps would take " + std::to_string(gates) + " floats, more than a tensor may hold");
  return d;
}

namespace {

float sigmoid(double x) { return static_cast<float>(1.0 / (1.0 + std::exp(-x))); }

// The reference: MXNet's recurrence written out, sums in double.
void rnn_reference(const KernelIO& io) {
  const RnnDims d = rnn_dims(io.attrs, io.in_types[0].shape);
  const int64_t T = d.steps, N = d.batch, H = d.hidden, G = d.gates(), D = d.dirs, GH = G * H;
  const bool lstm = d.mode == "lstm", gru = d.mode == "gru";
  const float* w = io.input<float>(1);
  const float* hx = io.input<float>(2);
  const float* cx = lstm ? io.input<float>(3) : nullptr;
  const bool states = io.out.size() > 1;
  std::vector<float> layer_in(io.input<float>(0), io.input<float>(0) + T * N * d.input),
      layer_out(static_cast<std::size_t>(T * N * D * H));
  std::vector<float> h(static_cast<std::size_t>(H)), c(static_cast<std::size_t>(H)), pre(static_cast<std::size_t>(GH)),
      hpart(static_cast<std::size_t>(GH));
  for (int64_t l = 0; l < d.layers; ++l) {
    const int64_t I = d.layer_input(l);
    for (int64_t dir = 0; dir < D; ++dir) {
      const float* wi = w + d.i2h_weight(l, dir);
      const float* wh = w + d.h2h_weight(l, dir);
      const float* bi = w + d.i2h_bias(l, dir);
      const float* bh = w + d.h2h_bias(l, dir);
      for (int64_t n = 0; n < N; ++n) {
        const int64_t state = (l * D + dir) * N * H + n * H;
        for (int64_t j = 0; j < H; ++j) h[j] = hx[state + j], c[j] = lstm ? cx[state + j] : 0.0f;
        for (int64_t s = 0; s < T; ++s) {
          const int64_t t = dir == 0 ? s : T - 1 - s;
          const float* x = layer_in.data() + (t * N + n) * I;
          for (int64_t g = 0; g < GH; ++g) {
            double xi = bi[g], hh = bh[g];
            for (int64_t k = 0; k < I; ++k) xi += static_cast<double>(wi[g * I + k]) * x[k];
            for (int64_t k = 0; k < H; ++k) hh += static_cast<double>(wh[g * H + k]) * h[k];
            pre[g] = static_cast<float>(xi);
            hpart[g] = static_cast<float>(hh);
          }
          for (int64_t j = 0; j < H; ++j) {
            if (lstm) {
              auto gate = [&](int64_t k) { return static_cast<double>(pre[k * H + j]) + hpart[k * H + j]; };
              const float i = sigmoid(gate(0)), f = sigmoid(gate(1)), o = sigmoid(gate(3));
              const float cand = static_cast<float>(std::tanh(gate(2)));
              c[j] = f * c[j] + i * cand;
              h[j] = o * static_cast<float>(std::tanh(static_cast<double>(c[j])));
            } else if (gru) {
              const float r = sigmoid(static_cast<double>(pre[j]) + hpart[j]);
              const float z = sigmoid(static_cast<double>(pre[H + j]) + hpart[H + j]);
              const float cand = static_cast<float>(std::tanh(static_cast<double>(pre[2 * H + j]) + r * hpart[2 * H + j]));
              h[j] = (1.0f - z) * cand + z * h[j];
            } else {
              const double v = static_cast<double>(pre[j]) + hpart[j];
              h[j] = static_cast<float>(d.mode == "rnn_tanh" ? std::tanh(v) : (v > 0.0 ? v : 0.0));
            }
          }
          std::memcpy(layer_out.data() + (t * N + n) * D * H + dir * H, h.data(), sizeof(float) * H);
        }
        if (states) std::memcpy(io.output<float>(1) + state, h.data(), sizeof(float) * H);
        if (states && lstm) std::memcpy(io.output<float>(2) + state, c.data(), sizeof(float) * H);
      }
    }
    layer_in = layer_out;
  }
  std::memcpy(io.output<float>(0), layer_out.data(), sizeof(float) * layer_out.size());
}

std::vector<TensorType> rnn_infer(const Attrs& a, const std::vector<TensorType>& in) {
  const RnnDims d = rnn_dims(a, in[0].shape);
  const Shape params{d.param_floats()};
  if (in[1].shape != params)
    throw Error("parameters has shape " + shape_str(in[1].shape) + ", expected " + shape_str(params) + " for " +
                d.mode + " of " + std::to_string(d.layers) + " layer(s), " + std::to_string(d.dirs) +
                " direction(s), input size " + std::to_string(d.input) + " and state_size " + std::to_string(d.hidden));
  const Shape state{d.layers * d.dirs, d.batch, d.hidden};
  for (std::size_t i = 2; i < in.size(); ++i)
    if (in[i].shape != state)
      throw Error(std::string(i == 2 ? "state" : "state_cell") + " has shape " + shape_str(in[i].shape) + ", expected " +
                  shape_str(state));
  std::vector<TensorType> out{TensorType{{d.steps, d.batch, d.dirs * d.hidden}, in[0].dtype}};
  if (a.get_bool("state_outputs")) {
    out.push_back(TensorType{state, in[0].dtype});
    if (d.mode == "lstm") out.push_back(TensorType{state, in[0].dtype});
  }
  return out;
}

// `parameters` re-laid out for the kernel: per layer and direction, W_i2h^T
// then W_h2h^T in hg_gemm_packed_b's column panels; then the biases as they are.
std::optional<std::vector<float>> pack_parameters(const KernelSite& site, int index, const float* data) {
  if (index != 1) return std::nullopt;
  const RnnDims d = rnn_dims(site.attrs, site.in[0].shape);
  const Target& target = site.target;
  const int64_t GH = d.gates() * d.hidden;
  std::vector<float> out;
  for (int64_t l = 0; l < d.layers; ++l)
    for (int64_t dir = 0; dir < d.dirs; ++dir) {
      for (const auto& [offset, k] : {std::make_pair(d.i2h_weight(l, dir), d.layer_input(l)),
                                      std::make_pair(d.h2h_weight(l, dir), d.hidden)}) {
        const std::vector<float> panels = pack_w_transposed_panels(data + offset, GH, k, target.gemm_nr);
        out.insert(out.end(), panels.begin(), panels.end());
      }
    }
  out.insert(out.end(), data + d.weight_floats(), data + d.param_floats());
  return out;
}

int64_t rnn_scratch_bytes(const KernelSite& site) {
  const RnnDims d = rnn_dims(site.attrs, site.in[0].shape);
  const int64_t GH = d.gates() * d.hidden, TN = d.steps * d.batch;
  return (TN * GH + d.batch * GH + (d.mode == "lstm" ? d.batch * d.hidden : 0) +
          (d.layers > 1 ? TN * d.dirs * d.hidden : 0)) *
         kFloatBytes;
}

KernelCall rnn_emit_cpp(const EmitContext& ctx) {
  const RnnDims d = rnn_dims(ctx.node.attrs, ctx.in_types[0].shape);
  const bool packed = ctx.in_packed.size() > 1 && ctx.in_packed[1];
  const bool lstm = d.mode == "lstm";
  auto n = [](int64_t v) { return std::to_string(v); };
  const std::string none = "static_cast<float*>(nullptr)";
  return {{"rnn"}, "hg_rnn<" + n(d.mode_index()) + ">(" + ctx.in[0] + ", " + ctx.in[1] + ", " +
                       (packed ? "true" : "false") + ", " + ctx.in[2] + ", " +
                       (lstm ? ctx.in[3] : "static_cast<const float*>(nullptr)") + ", " + ctx.out[0] + ", " +
                       (ctx.out.size() > 1 ? ctx.out[1] : none) + ", " + (ctx.out.size() > 2 ? ctx.out[2] : none) +
                       ", " + ctx.scratch + ", " + n(d.layers) + ", " + n(d.dirs) + ", " + n(d.steps) + ", " +
                       n(d.batch) + ", " + n(d.input) + ", " + n(d.hidden) + ", " + ctx.pool + ");"};
}

Attrs rnn_attrs(const std::string& mode, int64_t layers, int64_t hidden, bool bidirectional, bool state_outputs) {
  Attrs a;
  a.set("mode", mode);
  a.set("num_layers", layers);
  a.set("state_size", hidden);
  a.set("bidirectional", bidirectional);
  a.set("state_outputs", state_outputs);
  return a;
}

// The inputs of an example: data (T, N, C), parameters, state(s).
std::vector<Shape> example_inputs(const Attrs& a, int64_t T, int64_t N, int64_t C) {
  Attrs full = a;
  for (const auto& [key, value] : std::vector<std::pair<std::string, AttrValue>>{
           {"p", 0.0}, {"projection_size", int64_t{0}}, {"lstm_state_clip_min", std::string("None")},
           {"lstm_state_clip_max", std::string("None")}, {"use_sequence_length", false}})
    full.set(key, value);
  const RnnDims d = rnn_dims(full, {T, N, C});
  std::vector<Shape> in{{T, N, C}, {d.param_floats()}, {d.layers * d.dirs, N, d.hidden}};
  if (d.mode == "lstm") in.push_back({d.layers * d.dirs, N, d.hidden});
  return in;
}

const OpRegistrar rnn_op([] {
  OpDef d;
  d.name = "RNN";
  // Its data is (steps, batch, channels): axis 0 is time.
  d.mixes_first_axis = [](const Attrs&, const std::vector<TensorType>&, const std::vector<bool>&) { return true; };
  d.summary = "fused recurrent layers: LSTM, GRU, tanh/ReLU RNN (MXNet's RNN)";
  d.input_names = {"data", "parameters", "state", "state_cell"};
  d.min_inputs = 3;
  d.max_inputs = 4;
  d.attrs = {{"state_size", AttrKind::kInt, std::nullopt, "hidden units per layer and direction (H)", {}},
             {"num_layers", AttrKind::kInt, std::nullopt, "stacked layers (L)", {}},
             {"mode", AttrKind::kString, std::nullopt, "the cell", {"rnn_relu", "rnn_tanh", "lstm", "gru"}},
             {"bidirectional", AttrKind::kBool, false, "also run each layer backwards in time (D = 2)", {}},
             {"p", AttrKind::kFloat, 0.0, "dropout between layers: training only", {}},
             {"state_outputs", AttrKind::kBool, false, "also output the last state (and cell)", {}},
             {"projection_size", AttrKind::kInt, int64_t{0}, "LSTM projection (cuDNN only): 0 or None", {}},
             {"lstm_state_clip_min", AttrKind::kString, std::string("None"), "cuDNN only: None", {}},
             {"lstm_state_clip_max", AttrKind::kString, std::string("None"), "cuDNN only: None", {}},
             {"lstm_state_clip_nan", AttrKind::kBool, false, "cuDNN only", {}},
             {"use_sequence_length", AttrKind::kBool, false, "per-sequence lengths: not supported", {}}};
  d.fusion = FusionClass::kOpaque;
  d.arity = [](const Attrs& a) {
    return (a.get_string("mode") == "lstm" ? 4 : 3) + (a.get_bool("use_sequence_length") ? 1 : 0);
  };
  d.output_arity = [](const Attrs& a) {
    return a.get_bool("state_outputs") ? (a.get_string("mode") == "lstm" ? 3 : 2) : 1;
  };
  d.infer = rnn_infer;
  d.reference = rnn_reference;
  d.flops = [](const Attrs& a, const std::vector<TensorType>& in, const std::vector<TensorType>&) {
    const RnnDims r = rnn_dims(a, in[0].shape);
    double total = 0;
    for (int64_t l = 0; l < r.layers; ++l)
      total += 2.0 * static_cast<double>(r.dirs * r.steps * r.batch * r.weights_of(l));
    return total;
  };
  d.weight_shapes = [](const Attrs& a, const Shape& data) {
    const RnnDims r = rnn_dims(a, data);
    const Shape state{r.layers * r.dirs, r.batch, r.hidden};
    std::vector<Shape> shapes{{r.param_floats()}, state};
    if (r.mode == "lstm") shapes.push_back(state);
    return shapes;
  };
  // Panels of 4, 8 and 16 columns crossed (G*H = 36, 15); odd sizes; a
  // single step, unit and batch; stacked bidirectional layers.
  const Attrs lstm = rnn_attrs("lstm", 1, 4, false, true), lstm2 = rnn_attrs("lstm", 2, 9, true, true),
              lstm1 = rnn_attrs("lstm", 1, 1, false, false), gru = rnn_attrs("gru", 2, 5, true, true),
              tanh_rnn = rnn_attrs("rnn_tanh", 1, 3, true, false), relu = rnn_attrs("rnn_relu", 2, 3, false, true);
  d.examples = {{lstm, example_inputs(lstm, 3, 1, 5)},  {lstm2, example_inputs(lstm2, 2, 2, 3)},
                {lstm1, example_inputs(lstm1, 1, 1, 1)}, {gru, example_inputs(gru, 3, 2, 3)},
                {tanh_rnn, example_inputs(tanh_rnn, 4, 3, 2)},   {relu, example_inputs(relu, 2, 1, 4)}};
  return d;
}());

const KernelRegistrar rnn_cpp(Backend::kCpp, "RNN", [] {
  OpKernel k{rnn_emit_cpp};
  k.pack_constant = float32_packing(pack_parameters);
  k.scratch_bytes = rnn_scratch_bytes;
  return k;
}());

}  // namespace
}  // namespace hybgen
