// Schema-level checks over every registered op: what the registry promises
// before any kernel runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <iterator>

#include "ir/error.h"
#include "ops/op.h"

namespace hybgen {
namespace {

TEST(Registry, EveryOpIsComplete) {
  ASSERT_FALSE(all_ops().empty());
  for (const OpDef* op : all_ops()) {
    SCOPED_TRACE(op->name);
    EXPECT_TRUE(op->infer) << "no shape rule";
    EXPECT_TRUE(op->reference) << "no reference kernel";
    if (op->emit_scalar) {
      EXPECT_TRUE(op->fusion == FusionClass::kElementwise || op->fusion == FusionClass::kBroadcast)
          << "a scalar expression makes the op fusable as elementwise";
      EXPECT_TRUE(op->inplace) << "an elementwise loop reads each element before writing it";
    }
    EXPECT_FALSE(op->summary.empty());
    EXPECT_FALSE(op->examples.empty()) << "the generic op test needs examples";
    EXPECT_EQ(lookup_op(op->name), op);
    for (const auto& alias : op->aliases) EXPECT_EQ(lookup_op(alias), op) << alias;
  }
}

// Ops that only a fusion pass makes, and only for a backend with a kernel
// for them (the pass asks find_kernel): other backends run the nodes the op
// would replace, so they need no kernel of it.
const char* const kFusedWhereAKernelIs[] = {"_attention"};  // fuse_attention

bool fused_where_a_kernel_is(const std::string& op) {
  return std::find(std::begin(kFusedWhereAKernelIs), std::end(kFusedWhereAKernelIs), op) !=
         std::end(kFusedWhereAKernelIs);
}

// Per op and backend, the dtypes its kernel declares, printed as a table
// (`hybgen ops --json` shows the same under "kernels"). Each backend has a
// kernel for every op (but kFusedWhereAKernelIs, which some backend has), a
// printer unless the backend's fused loop prints the op, and declares only
// dtypes the reference computes and the generic op test
// (tests/codegen/registry_ops_test.cpp, which runs every example on every
// target against the reference) makes data for.
TEST(Registry, EveryOpHasAKernelOnEveryBackendWithItsDtypes) {
  std::string table;
  for (const OpDef* op : all_ops()) {
    if (fused_where_a_kernel_is(op->name)) {
      const std::vector<Backend> backends = all_backends();
      EXPECT_TRUE(
          std::any_of(backends.begin(), backends.end(), [&](Backend b) { return find_kernel(b, op->name) != nullptr; }))
          << op->name << " has no kernel on any backend";
    }
    // The dtypes the op's examples hold (inputs and outputs): what the generic op test runs.
    std::vector<DType> tested;
    for (const OpExample& ex : op->examples) {
      std::vector<TensorType> in;
      for (std::size_t i = 0; i < ex.inputs.size(); ++i) in.push_back(ex.input_type(i));
      std::vector<TensorType> values = op->infer(normalize_attrs(*op, ex.attrs), in);
      values.insert(values.end(), in.begin(), in.end());
      for (const TensorType& t : values)
        if (std::find(tested.begin(), tested.end(), t.dtype) == tested.end()) tested.push_back(t.dtype);
    }
    std::string row = op->name;
    for (Backend backend : all_backends()) {
      SCOPED_TRACE(op->name + " on " + backend_name(backend));
      const OpKernel* kernel = find_kernel(backend, op->name);
      if (!kernel && fused_where_a_kernel_is(op->name)) continue;
      ASSERT_NE(kernel, nullptr) << "no kernel";
      if (!op->emit_scalar) {
        EXPECT_TRUE(kernel->emit) << "no printer";
      }
      EXPECT_FALSE(kernel->dtypes.empty());
      std::string dtypes;
      for (DType d : kernel->dtypes) {
        dtypes += (dtypes.empty() ? "" : " ") + dtype_name(d);
        // float16 and bfloat16 as storage for float32 (--precision fp16/bf16): the
        // half-precision generic op tests run the float32 examples in them.
        const bool float32_kernel =
            std::find(kernel->dtypes.begin(), kernel->dtypes.end(), DType::kFloat32) != kernel->dtypes.end();
        if ((d == DType::kFloat16 || d == DType::kBFloat16) && float32_kernel) d = DType::kFloat32;
        EXPECT_NE(std::find(op->reference_dtypes.begin(), op->reference_dtypes.end(), d), op->reference_dtypes.end())
            << dtype_name(d) << ": the reference cannot check it";
        EXPECT_NE(std::find(tested.begin(), tested.end(), d), tested.end())
            << dtype_name(d) << ": no example of the op holds it, so the generic op test never runs it";
      }
      row += " | " + backend_name(backend) + ": " + dtypes;
    }
    table += row + "\n";
  }
  std::printf("%s", table.c_str());
}

// Every kernel is registered under an op's canonical name (or a backend's
// fused loop), so none is silently never found.
TEST(Registry, KernelsAreRegisteredUnderCanonicalOpNames) {
  ASSERT_FALSE(all_kernels().empty());
  for (const RegisteredKernel& k : all_kernels()) {
    if (k.op == kElementwiseLoop) continue;
    const OpDef* op = lookup_op(k.op);
    ASSERT_NE(op, nullptr) << backend_name(k.backend) << " kernel of unknown op '" << k.op << "'";
    EXPECT_EQ(op->name, k.op) << "registered under an alias";
  }
}

TEST(Registry, ExamplesSatisfyTheirOwnSchema) {
  for (const OpDef* op : all_ops()) {
    for (const auto& ex : op->examples) {
      SCOPED_TRACE(op->name);
      Attrs attrs = normalize_attrs(*op, ex.attrs);
      auto [lo, hi] = expected_inputs(*op, attrs);
      EXPECT_GE(static_cast<int>(ex.inputs.size()), lo);
      if (hi >= 0) {
        EXPECT_LE(static_cast<int>(ex.inputs.size()), hi);
      }
      std::vector<TensorType> in;
      for (std::size_t i = 0; i < ex.inputs.size(); ++i) in.push_back(ex.input_type(i));
      auto out = op->infer(attrs, in);
      EXPECT_EQ(static_cast<int>(out.size()), output_count(*op, attrs));
    }
  }
}

TEST(Registry, UnknownOpNamesTheOp) {
  try {
    find_op("NoSuchOp");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("NoSuchOp"), std::string::npos);
  }
}

TEST(Registry, NormalizeFillsDefaultsAndRejectsUnknown) {
  const OpDef& fc = find_op("FullyConnected");
  Attrs a;
  a.set("num_hidden", int64_t{4});
  Attrs full = normalize_attrs(fc, a);
  EXPECT_FALSE(full.get_bool("no_bias"));
  EXPECT_TRUE(full.get_bool("flatten"));
  a.set("bogus", int64_t{1});
  EXPECT_THROW(normalize_attrs(fc, a), Error);
  EXPECT_THROW(normalize_attrs(fc, Attrs{}), Error);  // num_hidden is required
  Attrs act;
  act.set("act_type", std::string("swish"));
  EXPECT_THROW(normalize_attrs(find_op("Activation"), act), Error);
}

TEST(Registry, MxnetAliasesResolve) {
  EXPECT_EQ(&find_op("elemwise_add"), &find_op("broadcast_add"));
  EXPECT_EQ(&find_op("flatten"), &find_op("Flatten"));
}

}  // namespace
}  // namespace hybgen
