#include "lower/lowering.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "ir/error.h"
#include "ir/fnv1a.h"
#include "ir/names.h"
#include "ir/quantization_json.h"
#include "version.h"

namespace hybgen {
namespace {

const std::set<std::string> kReserved = {
    "alignas", "alignof", "and", "asm", "auto", "bool", "break", "case", "catch", "char", "class", "const",
    "constexpr", "continue", "decltype", "default", "delete", "do", "double", "else", "enum", "explicit", "export",
    "extern", "false", "float", "for", "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new",
    "noexcept", "not", "nullptr", "operator", "or", "private", "protected", "public", "register", "return", "short",
    "signed", "sizeof", "static", "struct", "switch", "template", "this", "throw", "true", "try", "typedef",
    "typename", "union", "unsigned", "using", "virtual", "void", "volatile", "while", "xor",
    // names the generated code uses itself, and fused kernels' locals
    "arena", "pool", "weights", "kernels", "detail", "run", "std", "epilogue", "channel", "index", "v", "o"};

// Names the CUDA code gives its own locals and functions, which a value's
// variable must not take (a model may still be named so: `model::init`).
// `restrict`: the header's parameters are C names too.
const std::set<std::string> kReservedForValues = {"stream",   "model",    "init",    "release", "capture",
                                                  "replay",   "status",   "batch",   "dim3",    "threadIdx",
                                                  "blockIdx", "blockDim", "gridDim", "restrict"};

// Fused kernels name their scalars x0, v1, ... and loop counters i0, ...
bool is_kernel_local(const std::string& name) {
  if (name.size() < 2 || (name[0] != 'x' && name[0] != 'v' && name[0] != 'i')) return false;
  return std::all_of(name.begin() + 1, name.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

// Names a macro of generated code could take: a header's sizes of any model
// (MNIST_ARENA_BYTES, MNIST_INPUT0_FLOATS, MNIST_ARENA_ALIGNMENT), its guard
// and the kernels' own (HYBGEN_..., HG_...); and the names C and C++ keep for
// the implementation (_Bool, __x).
bool is_macro_like(const std::string& name) {
  auto ends_with = [&](const std::string& suffix) {
    return name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  const bool reserved =
      name.size() > 1 && name[0] == '_' && (name[1] == '_' || std::isupper(static_cast<unsigned char>(name[1])));
  return reserved || name.rfind("HG_", 0) == 0 || name.rfind("HYBGEN_", 0) == 0 || ends_with("_BYTES") ||
         ends_with("_FLOATS") || ends_with("_ALIGNMENT");
}

std::size_t align_up(std::size_t n, std::size_t a) { return (n + a - 1) / a * a; }

}  // namespace

std::string c_identifier(const std::string& name) {
  std::string out;
  for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "v_" + out;
  return out;
}

bool is_reserved_name(const std::string& name) { return kReserved.count(name) != 0; }

std::string hex64(uint64_t v) {
  char text[19];
  std::snprintf(text, sizeof text, "0x%016llx", static_cast<unsigned long long>(v));
  return text;
}

std::string shape_initializer(const Shape& s) {
  std::string out = "{";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return (s.empty() ? std::string("{1") : out) + "}";
}

// Unique C++ variable names for graph values: the value's name with every
// character outside [A-Za-z0-9_] replaced, cut to kMaxIdentifierBytes, and
// numbered where two come out alike; one a keyword, a name the code uses
// itself or a macro could take is changed first.
const std::string& LoweredModel::variable(const std::string& value) {
  auto it = names_.find(value);
  if (it != names_.end()) return it->second;
  constexpr std::size_t kMaxIdentifierBytes = 48;
  std::string base = c_identifier(value.substr(0, kMaxIdentifierBytes));
  if (kReserved.count(base) || kReservedForValues.count(base) || is_kernel_local(base) || base.rfind("hg_", 0) == 0)
    base += "_";
  if (is_macro_like(base)) base = "v" + base;
  std::string name = base;
  for (int& i = next_suffix_.emplace(base, 2).first->second; taken_.count(name); ++i)
    name = base + "_" + std::to_string(i);
  taken_.insert(name);
  return names_[value] = name;
}

std::string LoweredModel::weight_variable(const std::string& key) const {
  return weights[weight_of_.at(key)].variable;
}

void LoweredModel::add_weight(const std::string& key, const std::string& variable, DType dtype, const uint8_t* bytes,
                              std::size_t size, const std::string& what) {
  if (weight_of_.count(key)) return;
  blob.resize(align_up(blob.size(), 64), 0);
  weight_of_[key] = weights.size();
  weights.push_back({key, variable, what, blob.size(), size, dtype});
  blob.insert(blob.end(), bytes, bytes + size);
}

std::string LoweredModel::pointer(const std::string& value) {
  read_.insert(value);
  if (weight_of_.count(value)) return weight_variable(value);
  if (in_item_loop_ && batched_.count(value)) {
    const std::string item = "hg_item_" + variable(value);
    item_pointers_.emplace(item, "auto* const " + item + " = " + variable(value) + " + hg_item * " +
                                     std::to_string(graph.type(value).num_elements()) + ";");
    return item;
  }
  return variable(value);
}

void LoweredModel::begin_item_loop() {
  in_item_loop_ = true;
  item_pointers_.clear();
}

std::map<std::string, std::string> LoweredModel::end_item_loop() {
  in_item_loop_ = false;
  return std::move(item_pointers_);
}

bool LoweredModel::runs_per_item(const LoweredKernel& k) const {
  auto holds_items = [&](const std::vector<std::string>& values) {
    return std::any_of(values.begin(), values.end(), [&](const std::string& v) { return batched_.count(v) != 0; });
  };
  return holds_items(k.kernel->inputs) || holds_items(k.kernel->outputs);
}

LoweredModel::LoweredModel(const CompiledGraph& c, const LowerOptions& options)
    : compiled(c), graph(c.graph), target(c.target), name(options.name),
      ns(options.ns.empty() ? options.name : options.ns), source(options.source),
      external_weights(options.external_weights) {
  const Graph& g = graph;
  if (name.empty() || c_identifier(name) != name)
    throw Error("model name '" + name + "' is not a C identifier (use --name)");
  if (kReserved.count(name))
    throw Error("model name '" + name + "' is a C++ keyword or a name the generated code uses itself (use --name)");
  if (c_identifier(ns) != ns) throw Error("namespace '" + ns + "' is not a C identifier");
  if (kReserved.count(ns)) throw Error("namespace '" + ns + "' is a C++ keyword or a name the generated code uses itself");
  if (source.empty()) source = "a hybgen graph";
  batched_ = batch_values(g);

  std::set<std::string> param_values;
  for (const auto& in : g.inputs)
    if (param_values.insert(in).second) params.push_back({in, variable(in), g.type(in), false});
  for (const auto& out : g.outputs)
    if (param_values.insert(out).second) params.push_back({out, variable(out), g.type(out), true});

  // A weight that is also a graph output keeps the output's parameter name;
  // its data pointer gets another.
  auto add_constant = [&](const std::string& value) {
    if (weight_of_.count(value)) return;
    const Constant& constant = g.constants.at(value);
    if (constant.data.size() != constant.type.bytes())
      throw Error("weight '" + value + "' has no data (load the .safetensors beside the model)");
    add_weight(value, g.is_output(value) ? variable(value + "_weight") : variable(value), constant.type.dtype,
               constant.data.data(), constant.data.size(),
               dtype_name(constant.type.dtype) + shape_str(constant.type.shape));
  };

  const MemoryPlan& plan = compiled.plan;
  for (std::size_t step = 0; step < compiled.kernels.size(); ++step) {
    const Kernel& kernel = compiled.kernels[step];
    LoweredKernel lowered;
    lowered.step = static_cast<int>(step);
    lowered.kernel = &kernel;
    const Node& first = g.nodes[kernel.nodes.front()];
    lowered.heading = "kernel " + std::to_string(step) + " (" + kernel_kind_name(kernel.kind) + "): ";
    for (std::size_t i = 0; i < kernel.nodes.size(); ++i) {
      const Node& node = g.nodes[kernel.nodes[i]];
      lowered.heading += (i ? " + " : "") + comment_text(node.name) + " (" + node.op + ")";
    }
    std::string out_shapes;
    for (const auto& out : kernel.outputs) out_shapes += (out_shapes.empty() ? "" : ", ") + shape_str(g.type(out).shape);
    lowered.heading += " -> " + out_shapes;

    const bool op_kernel = kernel.kind == KernelKind::kOp || kernel.kind == KernelKind::kEpilogue;
    try {
      for (std::size_t n = 0; n < kernel.nodes.size(); ++n) {
        const Node& node = g.nodes[kernel.nodes[n]];
        const bool anchor = op_kernel && n == 0;
        // The anchor's kernel packs constants it reads (C++'s GEMM panels); the site it packs for, once.
        const OpKernel* packing = anchor ? find_kernel(target.backend, find_op(node.op).name) : nullptr;
        if (packing && !packing->pack_constant) packing = nullptr;
        std::optional<KernelSite> site;
        for (int i = 0; i < static_cast<int>(node.inputs.size()); ++i) {
          const std::string& in = node.inputs[i];
          if (!g.is_constant(in)) {
            if (anchor) lowered.op.in.push_back(in), lowered.op.in_packed.push_back(false);
            continue;
          }
          // Re-laid out at generation time into the layout the target's
          // kernel reads (C++'s packed GEMM panels).
          std::optional<Constant> packed;
          if (packing && g.constants.at(in).has_data()) {
            if (!site) site.emplace(kernel_site(g, node, target, kernel.algorithm));
            packed = packing->pack_constant(*site, i, g.constants.at(in));
          }
          if (!packed) {
            add_constant(in);
            if (anchor) lowered.op.in.push_back(in), lowered.op.in_packed.push_back(false);
            continue;
          }
          const std::string key = in + " packed for " + node.name;
          const std::string elements =
              packed->type.dtype == DType::kFloat32 ? " floats" : " " + dtype_name(packed->type.dtype) + " values";
          add_weight(
              key, variable(key), packed->type.dtype, packed->data.data(), packed->data.size(),
              std::to_string(packed->type.num_elements()) + elements + ", " + in + " re-laid out for " + node.name);
          lowered.op.in.push_back(key);
          lowered.op.in_packed.push_back(true);
        }
      }
      if (op_kernel) {
        const OpDef& def = find_op(first.op);
        const bool fused = kernel.kind == KernelKind::kEpilogue;
        for (const auto& out : first.outputs)
          lowered.op.out.push_back(fused ? g.nodes[kernel.nodes.back()].outputs[0] : out);
        if (const BufferPlacement* scratch = plan.find(scratch_value(kernel))) {
          lowered.op.scratch = scratch_value(kernel);
          scratch_dtype_[lowered.op.scratch] = g.type(first.outputs[0]).dtype;
          lowered.op.scratch_bytes = static_cast<int64_t>(scratch->bytes);
        }
        if (def.input_placement) {
          std::vector<TensorType> in_types;
          for (const auto& in : first.inputs) in_types.push_back(g.type(in));
          const BufferPlacement* out = plan.find(first.outputs[0]);
          const auto offsets = def.input_placement(first.attrs, in_types, g.type(first.outputs[0]));
          for (std::size_t i = 0; i < offsets.size(); ++i) {
            const BufferPlacement* in = plan.find(first.inputs[i]);
            lowered.op.in_placed.push_back(out && in && in->offset == out->offset + offsets[i]);
          }
          lowered.already_in_place =
              kernel.kind == KernelKind::kOp && !lowered.op.in_placed.empty() &&
              std::all_of(lowered.op.in_placed.begin(), lowered.op.in_placed.end(), [](bool placed) { return placed; });
        }
      }
    } catch (const Error& e) {
      throw Error(node_label(first.name, first.op) + ": " + e.what());
    }
    kernels.push_back(std::move(lowered));
  }
  // Outputs the graph passes straight through from a weight.
  for (const auto& out : g.outputs)
    if (g.is_constant(out)) {
      add_constant(out);
      constant_outputs.emplace_back(out, out);
    }
}

EmitContext LoweredModel::op_context(const LoweredKernel& k) {
  const Node& node = graph.nodes[k.kernel->nodes.front()];
  EmitContext ctx{node, target, {}, {}, {}, {}, {}, {}, {}, {}, "pool"};
  for (std::size_t i = 0; i < k.op.in.size(); ++i) {
    const bool placed = i < k.op.in_placed.size() && k.op.in_placed[i];
    // A placed input's bytes are already where they go: the code need not read it.
    ctx.in.push_back(placed ? variable(k.op.in[i]) : pointer(k.op.in[i]));
    ctx.in_types.push_back(graph.type(node.inputs[i]));
  }
  ctx.in_packed = k.op.in_packed;
  ctx.algorithm = k.kernel->algorithm;
  ctx.in_placed = k.op.in_placed;
  for (std::size_t i = 0; i < k.op.out.size(); ++i) {
    ctx.out.push_back(pointer(k.op.out[i]));
    ctx.out_types.push_back(graph.type(node.outputs[i]));
  }
  if (!k.op.scratch.empty()) {
    ctx.scratch = pointer(k.op.scratch);
    ctx.scratch_bytes = k.op.scratch_bytes;
  }
  return ctx;
}

std::vector<const WeightEntry*> LoweredModel::read_weights() const {
  std::vector<const WeightEntry*> out;
  for (const auto& w : weights)
    if (read_.count(w.key)) out.push_back(&w);
  return out;
}

std::vector<LoweredModel::ArenaPointer> LoweredModel::read_buffers() const {
  std::vector<ArenaPointer> out;
  for (const auto& b : compiled.plan.buffers) {
    if (!read_.count(b.value)) continue;
    const auto name = names_.find(b.value);
    if (name == names_.end()) continue;
    const bool typed = graph.types.count(b.value) != 0;
    const std::string shape = typed ? shape_str(graph.type(b.value).shape) : std::to_string(b.bytes) + " bytes";
    const auto scratch = scratch_dtype_.find(b.value);
    const DType dtype = typed                             ? graph.type(b.value).dtype
                        : scratch != scratch_dtype_.end() ? scratch->second
                                                          : DType::kUInt8;
    const std::string offset_code =
        b.per_item ? std::to_string(compiled.plan.fixed_bytes) + " + " + std::to_string(b.offset) + " * batch"
                   : std::to_string(b.offset);
    out.push_back({name->second,
                   (b.per_item ? "per item " : "") + shape + ", steps " + std::to_string(b.first_step) + "-" +
                       std::to_string(b.last_step),
                   b.offset, offset_code, dtype});
  }
  return out;
}

std::vector<std::string> LoweredModel::unread_inputs() const {
  std::vector<std::string> out;
  for (const auto& in : graph.inputs)
    if (!read_.count(in)) out.push_back(names_.at(in));
  return out;
}

// FNV-1a, 64 bits: lets a program check that a weights file it loaded is the
// one this code was generated with.
uint64_t LoweredModel::weights_fnv1a64() const { return fnv1a64(blob.data(), blob.size()); }

nlohmann::ordered_json LoweredModel::manifest(const std::string& weights_file) const {
  nlohmann::ordered_json m;
  m["format"] = "hybgen-manifest";
  m["hybgen_version"] = kVersion;
  m["name"] = name;
  m["namespace"] = ns;
  m["source"] = source;
  m["entry"] = name + "_run";
  m["target"] = target.name;
  m["backend"] = backend_name(target.backend);
  m["precision"] = precision_name(target.precision);  // --precision: the float products' arithmetic
  m["arena_bytes"] = compiled.plan.arena_bytes;
  if (graph.batch.variable()) {  // a run-time batch: the arena at both bounds
    m["batch"] = {{"min", graph.batch.min},
                  {"max", graph.batch.max},
                  {"inputs", graph.batch.inputs},
                  {"arena_bytes_at_min", compiled.plan.arena_bytes_at(graph.batch.min)},
                  {"arena_bytes_at_max", compiled.plan.arena_bytes_at(graph.batch.max)},
                  {"arena_fixed_bytes", compiled.plan.fixed_bytes},
                  {"arena_item_bytes", compiled.plan.item_bytes}};
  }
  m["arena_alignment"] = compiled.plan.alignment;
  m["weights_bytes"] = blob.size();
  m["weights_storage"] = external_weights ? "external" : "embedded";
  m["weights_file"] = weights_file;
  m["weights_fnv1a64"] = hex64(weights_fnv1a64());
  auto io_list = [&](bool outputs) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const auto& v : outputs ? graph.outputs : graph.inputs) {
      const TensorType& type = graph.type(v);
      nlohmann::ordered_json entry = {
          {"name", v}, {"c_name", names_.at(v)}, {"shape", type.shape}, {"dtype", dtype_name(type.dtype)}};
      // Its shape is one item's; at n items the first dimension is n times that.
      if (batched_.count(v)) entry["per_item"] = true;
      if (!type.quantization.empty()) entry["quantization"] = quantization_to_json(type.quantization);
      list.push_back(entry);
    }
    return list;
  };
  m["inputs"] = io_list(false);
  m["outputs"] = io_list(true);
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& k : kernels) {
    nlohmann::ordered_json nodes = nlohmann::ordered_json::array();
    for (int index : k.kernel->nodes) nodes.push_back(graph.nodes[index].name);
    list.push_back({{"kernel", k.step}, {"kind", kernel_kind_name(k.kernel->kind)}, {"nodes", nodes}});
  }
  m["kernels"] = list;
  m["memory_plan"] = nlohmann::ordered_json::parse(compiled.plan.to_json().dump());
  return m;
}

LoweredModel lower(const CompiledGraph& compiled, const LowerOptions& options) {
  return LoweredModel(compiled, options);
}

}  // namespace hybgen
