#include "ops/evaluate.h"

#include <algorithm>

#include "ir/names.h"

namespace hybgen {

bool reference_computes(const OpDef& def, const std::vector<TensorType>& in, const std::vector<TensorType>& out) {
  auto listed = [&](const TensorType& t) {
    return std::find(def.reference_dtypes.begin(), def.reference_dtypes.end(), t.dtype) != def.reference_dtypes.end();
  };
  return def.reference && std::all_of(in.begin(), in.end(), listed) && std::all_of(out.begin(), out.end(), listed);
}

std::vector<Constant> evaluate_node(const Node& node, const std::vector<const Constant*>& inputs,
                                    const std::vector<TensorType>& out_types) {
  const OpDef& def = find_op(node.op);
  const std::string label = node_label(node.name, node.op);
  std::vector<TensorType> in_types;
  for (const Constant* c : inputs) {
    if (c->data.size() != c->type.bytes())
      throw Error(label + ": an input holds " + std::to_string(c->data.size()) + " bytes for " + c->type.str());
    in_types.push_back(c->type);
  }
  if (!reference_computes(def, in_types, out_types)) {
    std::string found;
    const std::vector<TensorType>* lists[] = {&in_types, &out_types};
    for (const auto* types : lists)
      for (const TensorType& t : *types)
        if (std::find(def.reference_dtypes.begin(), def.reference_dtypes.end(), t.dtype) == def.reference_dtypes.end() &&
            found.empty())
          found = dtype_name(t.dtype);
    throw NoReferenceForDType(label + ": its reference kernel computes " + dtype_names(def.reference_dtypes) +
                              ", not " + found);
  }
  const Attrs attrs = normalize_attrs(def, node.attrs);
  std::vector<Constant> results(out_types.size());
  // An empty tensor's vector has no storage (data() may be null); kernels
  // get a valid pointer they never read or write through instead, as the
  // interpreter's arena gives them, so memcpy(p, q, 0) stays defined.
  alignas(8) static unsigned char no_elements[8];
  auto bytes_of = [](std::vector<uint8_t>& data) { return data.empty() ? no_elements : data.data(); };
  KernelIO io{attrs, {}, in_types, {}, out_types};
  for (const Constant* c : inputs)
    io.in.push_back(reinterpret_cast<const float*>(c->data.empty() ? no_elements : c->data.data()));
  for (std::size_t i = 0; i < out_types.size(); ++i) {
    results[i].type = out_types[i];
    results[i].data.assign(out_types[i].bytes(), 0);
    io.out.push_back(reinterpret_cast<float*>(bytes_of(results[i].data)));
  }
  try {
    def.reference(io);
  } catch (const Error& e) {
    throw Error(label + ": " + e.what());
  }
  return results;
}

}  // namespace hybgen
