// Dropout: the identity at inference (mode=training, the default), removed
// by passes/remove_identities before code generation. mode=always would drop
// at random during inference, which deterministic generated code cannot
// reproduce, so it is rejected.
#include <algorithm>

#include "ir/error.h"
#include "ops/op.h"

namespace hybgen {
namespace {

const OpRegistrar dropout_op([] {
  OpDef d;
  d.name = "Dropout";
  d.summary = "identity at inference";
  d.input_names = {"data"};
  d.attrs = {{"p", AttrKind::kFloat, 0.5, "drop probability in training", {}},
             {"mode", AttrKind::kString, std::string("training"), "when to drop", {"training", "always"}},
             {"axes", AttrKind::kInts, std::vector<int64_t>{}, "axes sharing one mask", {}},
             {"cudnn_off", AttrKind::kBool, false, "ignored", {}}};
  d.fusion = FusionClass::kElementwise;
  d.inplace = true;
  d.infer = [](const Attrs& a, const std::vector<TensorType>& in) {
    if (a.get_string("mode") == "always")
      throw Error("mode=always drops at random during inference; hybgen generates deterministic inference code");
    return std::vector<TensorType>{in[0]};
  };
  d.reference = [](const KernelIO& io) {
    std::copy(io.input<float>(0), io.input<float>(0) + io.in_types[0].num_elements(), io.output<float>(0));
  };
  register_kernel(Backend::kCpp, d.name, OpKernel{[](const EmitContext& ctx) {
                    return KernelCall{{"copy"},
                                      "hg_copy(" + ctx.in[0] + ", " + ctx.out[0] + ", " +
                                          std::to_string(ctx.out_types[0].num_elements()) + ");"};
                  }});
  d.flops = [](const Attrs&, const std::vector<TensorType>&, const std::vector<TensorType>&) { return 0.0; };
  d.is_identity = [](const Attrs&) { return true; };
  Attrs a;
  a.set("p", 0.3);
  d.examples = {{a, {{4, 6}}}};
  return d;
}());

}  // namespace
}  // namespace hybgen
