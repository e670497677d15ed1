// check_kernels: a graph goes to code only where every node has a kernel on
// the target's backend that computes its dtypes; every node that lacks one
// is named in one error.
#include <gtest/gtest.h>

#include <string>

#include "graph_builders.h"
#include "ir/error.h"
#include "ops/op.h"
#include "ops/op_kernel.h"
#include "passes/passes.h"
#include "pipeline.h"
#include "targets/target.h"

namespace hybgen {
namespace {

using testing::attrs_of;
using testing::make_node;

// An op with a C++ kernel and none for CUDA (a backend that lacks an op).
const OpRegistrar cpp_only_op([] {
  OpDef d;
  d.name = "_test_cpp_only";
  d.summary = "identity with a C++ kernel alone (check_kernels tests)";
  d.input_names = {"data"};
  d.infer = [](const Attrs&, const std::vector<TensorType>& in) { return std::vector<TensorType>{in[0]}; };
  d.reference = [](const KernelIO&) {};
  return d;
}());
const KernelRegistrar cpp_only_cpp(Backend::kCpp, "_test_cpp_only",
                                   OpKernel{[](const EmitContext&) { return KernelCall{}; }});

// x -> a (_test_cpp_only) -> b (relu) -> c (_test_cpp_only)
Graph cpp_only_chain() {
  Graph g;
  g.add_input("x", {{2, 3}});
  g.nodes.push_back(make_node("a", "_test_cpp_only", {"x"}));
  g.nodes.push_back(make_node("b", "Activation", {"a"}, attrs_of({{"act_type", std::string("relu")}})));
  g.nodes.push_back(make_node("c", "_test_cpp_only", {"b"}));
  g.outputs = {"c"};
  return g;
}

std::string check_error(Graph g, const std::string& target) {
  validate(g);
  infer_shapes(g);
  try {
    check_kernels(g, find_target(target));
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(CheckKernels, PassesWhereEveryNodeHasAKernel) { EXPECT_EQ(check_error(cpp_only_chain(), "generic"), ""); }

TEST(CheckKernels, NamesEveryNodeWhoseOpTheBackendLacks) {
  EXPECT_EQ(check_error(cpp_only_chain(), "cuda"),
            "target cuda (CUDA backend) cannot compute these nodes:\n"
            "  node 'a' (_test_cpp_only): no kernel for the op\n"
            "  node 'c' (_test_cpp_only): no kernel for the op");
}

TEST(CheckKernels, NamesEveryValueOfADtypeTheKernelLacks) {
  Graph g;
  g.add_input("x", {{4}, DType::kInt64});
  g.nodes.push_back(make_node("y", "broadcast_add", {"x", "x"}));
  g.outputs = {"y"};
  EXPECT_EQ(check_error(g, "generic"),
            "target generic (C++ backend) cannot compute these nodes:\n"
            "  node 'y' (broadcast_add): input 'x' is int64; input 'x' is int64; output 'y' is int64 (its kernel "
            "computes float32, int8, uint8)");
}

// float64, int16, uint16, uint32 and uint64 are element types the importers
// read and fold; no kernel of any backend declares them, so a graph value of
// one never reaches generated code, even through an op whose reference moves
// every dtype (Reshape).
TEST(CheckKernels, NoKernelComputesTheStorageOnlyDtypes) {
  for (Backend backend : all_backends()) {
    for (const OpDef* op : all_ops()) {
      const OpKernel* kernel = find_kernel(backend, op->name);
      if (!kernel) continue;
      for (DType d : kernel->dtypes) {
        EXPECT_FALSE(is_storage_only_dtype(d)) << op->name << " on " << backend_name(backend) << ": " << dtype_name(d);
      }
    }
  }
  for (DType d : all_dtypes()) {
    if (!is_storage_only_dtype(d)) continue;
    for (const Target& target : all_targets()) {
      SCOPED_TRACE(dtype_name(d) + " on " + target.name);
      Graph g;
      g.add_input("x", {{2, 3}, d});
      g.nodes.push_back(make_node("r", "Reshape", {"x"}, attrs_of({{"shape", std::vector<int64_t>{6}}})));
      g.outputs = {"r"};
      const std::string error = check_error(g, target.name);
      EXPECT_NE(error.find("node 'r' (Reshape): input 'x' is " + dtype_name(d) + "; output 'r' is " + dtype_name(d)),
                std::string::npos)
          << error;
    }
  }
}

// compile_graph runs it on the optimized and the unoptimized pipeline.
TEST(CheckKernels, RunsInBothPipelines) {
  for (bool optimize : {true, false}) {
    SCOPED_TRACE(optimize ? "optimized" : "unoptimized");
    const std::vector<std::string> passes = pass_names(CompileOptions::for_target(find_target("cuda"), optimize));
    EXPECT_NE(std::find(passes.begin(), passes.end(), "check_kernels"), passes.end());
    try {
      compile_graph(cpp_only_chain(), CompileOptions::for_target(find_target("cuda"), optimize));
      ADD_FAILURE() << "compiled for CUDA";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("node 'c' (_test_cpp_only)"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace hybgen
