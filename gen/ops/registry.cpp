#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

#include "ir/error.h"
#include "ir/names.h"
#include "ops/op.h"

namespace hybgen {

std::string fusion_class_name(FusionClass fusion) {
  switch (fusion) {
    case FusionClass::kElementwise: return "elementwise";
    case FusionClass::kBroadcast: return "broadcast";
    case FusionClass::kInjective: return "injective";
    case FusionClass::kReduction: return "reduction";
    case FusionClass::kOutElemwiseFusable: return "out-elemwise-fusable";
    case FusionClass::kOpaque: return "opaque";
  }
  return "opaque";
}

namespace {

struct Registry {
  std::map<std::string, std::unique_ptr<OpDef>> ops;
  std::map<std::string, const OpDef*> by_name;  // names and aliases
  std::map<std::pair<Backend, std::string>, OpKernel> kernels;  // (backend, canonical op name) -> its kernel
};

// Function-local static: registrars in other translation units may run first.
Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

OpRegistrar::OpRegistrar(OpDef def) {
  Registry& r = registry();
  auto owned = std::make_unique<OpDef>(std::move(def));
  const OpDef* ptr = owned.get();
  std::vector<std::string> names = ptr->aliases;
  names.push_back(ptr->name);
  for (const auto& n : names) {
    if (r.by_name.count(n)) throw Error("op '" + n + "' registered twice");
    r.by_name[n] = ptr;
  }
  r.ops[ptr->name] = std::move(owned);
}

const char* const kElementwiseLoop = "(elementwise loop)";

void register_kernel(Backend backend, const std::string& op, OpKernel kernel) {
  if (!registry().kernels.emplace(std::make_pair(backend, op), std::move(kernel)).second)
    throw Error(backend_name(backend) + " kernel of op '" + op + "' registered twice");
}

namespace {

// An elementwise op (OpDef::emit_scalar) computes on a backend the dtypes
// both its expression (OpDef::scalar_dtypes) and the backend's fused loop
// handle: its kernel there, registered (a vector epilogue) or not, gets
// those. Done once, at the first lookup, when every registrar has run.
Registry& registry_with_elementwise_kernels() {
  static std::once_flag once;
  std::call_once(once, [] {
    Registry& r = registry();
    for (const auto& [name, def] : r.ops) {
      if (!def->emit_scalar) continue;
      for (Backend backend : all_backends()) {
        auto loop = r.kernels.find({backend, kElementwiseLoop});
        if (loop == r.kernels.end()) continue;
        const std::vector<DType>& in_loop = loop->second.dtypes;
        auto loop_has = [&](DType d) { return std::find(in_loop.begin(), in_loop.end(), d) != in_loop.end(); };
        std::vector<DType> dtypes;
        for (DType d : def->scalar_dtypes)
          if (loop_has(d)) dtypes.push_back(d);
        // A loop that stores halves holds them as floats (exact loads, rounded
        // stores), so an expression written for float32 serves them too.
        const bool float32 = std::find(dtypes.begin(), dtypes.end(), DType::kFloat32) != dtypes.end();
        for (DType half : {DType::kFloat16, DType::kBFloat16})
          if (float32 && loop_has(half) && std::find(dtypes.begin(), dtypes.end(), half) == dtypes.end())
            dtypes.push_back(half);
        if (dtypes.empty()) continue;
        OpKernel& kernel = r.kernels[{backend, name}];
        if (!kernel.emit) kernel.dtypes = dtypes;
      }
    }
  });
  return registry();
}

}  // namespace

const OpKernel* find_kernel(Backend backend, const std::string& op) {
  const Registry& r = registry_with_elementwise_kernels();
  auto it = r.kernels.find({backend, op});
  return it == r.kernels.end() ? nullptr : &it->second;
}

std::vector<RegisteredKernel> all_kernels() {
  std::vector<RegisteredKernel> result;
  for (const auto& [key, kernel] : registry_with_elementwise_kernels().kernels)
    result.push_back({key.first, key.second, &kernel});
  return result;
}

OpExample quantized_example(Attrs attrs, std::vector<TensorType> inputs) {
  OpExample example{std::move(attrs), {}, std::move(inputs)};
  for (const TensorType& t : example.input_types) example.inputs.push_back(t.shape);
  return example;
}

KernelSite kernel_site(const Graph& graph, const Node& node, const Target& target, const std::string& algorithm) {
  KernelSite site{node.attrs, {}, {}, {}, target, algorithm};
  for (const auto& v : node.inputs) {
    site.in.push_back(graph.type(v));
    site.in_constant.push_back(graph.is_constant(v) && graph.constants.at(v).has_data());
  }
  for (const auto& v : node.outputs) site.out.push_back(graph.type(v));
  return site;
}

namespace {

// The fused loops that print every elementwise op (OpDef::emit_scalar):
// gen/emit/cpp_fused.cpp and gen/emit/cuda_emitter.cpp.
const KernelRegistrar cpp_elementwise_loop(Backend::kCpp, kElementwiseLoop, [] {
  OpKernel loop;
  loop.dtypes = {DType::kFloat32, DType::kInt8, DType::kUInt8, DType::kInt32};
  return loop;
}());
const KernelRegistrar cuda_elementwise_loop(Backend::kCuda, kElementwiseLoop, [] {
  OpKernel loop;
  loop.dtypes = {DType::kFloat32, DType::kFloat16, DType::kBFloat16};
  return loop;
}());

}  // namespace

const OpDef* lookup_op(const std::string& name) {
  const Registry& r = registry();
  auto it = r.by_name.find(name);
  return it == r.by_name.end() ? nullptr : it->second;
}

const OpDef& find_op(const std::string& name) {
  if (const OpDef* def = lookup_op(name)) return *def;
  throw Error("unknown op " + quoted_name(name) + " (`hybgen ops` lists the supported ones)");
}

std::vector<const OpDef*> all_ops() {
  std::vector<const OpDef*> result;
  for (const auto& [name, def] : registry().ops) result.push_back(def.get());
  return result;
}

Attrs normalize_attrs(const OpDef& def, const Attrs& attrs) {
  Attrs out;
  for (const auto& [name, value] : attrs.values()) {
    auto spec = std::find_if(def.attrs.begin(), def.attrs.end(), [&name = name](const AttrSpec& s) { return s.name == name; });
    if (spec == def.attrs.end()) {
      std::string known;
      for (const auto& s : def.attrs) known += (known.empty() ? "" : ", ") + s.name;
      throw Error("unknown attribute " + quoted_name(name) + " (" + def.name + " takes: " + (known.empty() ? "none" : known) + ")");
    }
    AttrKind kind = attr_kind_of(value);
    AttrValue converted = value;
    if (kind != spec->kind) {
      if (spec->kind == AttrKind::kFloat && kind == AttrKind::kInt) {
        converted = static_cast<double>(std::get<int64_t>(value));
      } else if (spec->kind == AttrKind::kFloats && kind == AttrKind::kInts) {
        const auto& ints = std::get<std::vector<int64_t>>(value);
        converted = std::vector<double>(ints.begin(), ints.end());
      } else if (spec->kind == AttrKind::kInts && kind == AttrKind::kInt) {
        converted = std::vector<int64_t>{std::get<int64_t>(value)};
      } else {
        throw Error("attribute " + quoted_name(name) + " is a " + attr_kind_name(kind) + ", expected " +
                    attr_kind_name(spec->kind));
      }
    }
    if (!spec->choices.empty()) {
      const auto& s = std::get<std::string>(converted);
      if (std::find(spec->choices.begin(), spec->choices.end(), s) == spec->choices.end()) {
        std::string allowed;
        for (const auto& c : spec->choices) allowed += (allowed.empty() ? "" : ", ") + c;
        throw Error("attribute " + quoted_name(name) + " is " + quoted_name(s) + ", expected one of: " + allowed);
      }
    }
    out.set(name, converted);
  }
  for (const auto& spec : def.attrs) {
    if (out.has(spec.name) || (!spec.default_value && spec.optional)) continue;
    if (!spec.default_value) throw Error("required attribute '" + spec.name + "' is missing");
    out.set(spec.name, *spec.default_value);
  }
  return out;
}

std::pair<int, int> expected_inputs(const OpDef& def, const Attrs& attrs) {
  if (def.arity) {
    int n = def.arity(attrs);
    return {n, n};
  }
  return {def.min_inputs, def.max_inputs};
}

std::string input_count_mismatch(const OpDef& def, const Attrs& attrs, int given) {
  const auto [lo, hi] = expected_inputs(def, attrs);
  if (given >= lo && (hi < 0 || given <= hi)) return "";
  return "has " + std::to_string(given) + " inputs, expected " + std::to_string(lo) +
         (hi == lo ? ""
          : hi < 0 ? " or more"
                   : " to " + std::to_string(hi));
}

int output_count(const OpDef& def, const Attrs& attrs) {
  return def.output_arity ? def.output_arity(attrs) : def.num_outputs;
}

double op_flops(const OpDef& def, const Attrs& attrs, const std::vector<TensorType>& in,
                const std::vector<TensorType>& out) {
  if (def.flops) return def.flops(attrs, in, out);
  double n = 0;
  for (const auto& t : out) n += static_cast<double>(t.num_elements());
  return n;
}

}  // namespace hybgen
