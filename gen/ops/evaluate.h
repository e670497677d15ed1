// Evaluating one node now, with its op's reference kernel, on constant
// inputs of any dtype the reference lists (OpDef::reference_dtypes): what
// the fold_constants pass and the ONNX importer's import-time evaluation
// share.
//
//   if (reference_computes(def, in_types, out_types))
//     std::vector<Constant> out = evaluate_node(node, {&a, &b}, out_types);
#pragma once

#include <vector>

#include "ir/error.h"
#include "ir/graph.h"
#include "ops/op.h"

namespace hybgen {

// True when `def`'s reference kernel computes every dtype among `in` and `out`.
bool reference_computes(const OpDef& def, const std::vector<TensorType>& in, const std::vector<TensorType>& out);

// evaluate_node's refusal of a dtype the op's reference does not compute.
struct NoReferenceForDType : Error {
  using Error::Error;
};

// Runs the reference of `node`'s op on `inputs` (constants holding data) and
// returns its outputs as constants of `out_types` (what its shape rule
// gave). Throws NoReferenceForDType ("node 'n' (op): its reference kernel
// computes float32, not int64") when reference_computes is false, and the
// kernel's Error (an integer division by zero) prefixed by the node's label.
std::vector<Constant> evaluate_node(const Node& node, const std::vector<const Constant*>& inputs,
                                    const std::vector<TensorType>& out_types);

}  // namespace hybgen
