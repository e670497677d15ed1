// Schema-level checks over every registered op: what the registry promises
// before any kernel runs.
#include <gtest/gtest.h>

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
    EXPECT_TRUE(op->emit_cpp || op->emit_scalar) << "no C++ printer";
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
      for (const auto& s : ex.inputs) in.push_back(TensorType{s});
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
