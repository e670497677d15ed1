// MXNet symbol files using the reduction, selection, shape and indexing ops
// import with MXNet's attribute strings (None for an unset optional axis,
// "True", tuples) and get the output shapes MXNet gives them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "io/mxnet/mxnet_symbol.h"
#include "ir/error.h"
#include "passes/passes.h"
#include "targets/target.h"

namespace hybgen {
namespace {

Graph import_text(const std::string& text, const std::map<std::string, Shape>& shapes) {
  MxnetImportOptions options;
  options.input_shapes = shapes;
  Graph g = import_mxnet_symbol(nlohmann::json::parse(text), "t-symbol.json", nullptr, "", options);
  infer_shapes(g);
  return g;
}

TEST(MxnetShapeOps, ImportWithMxnetAttributeStrings) {
  const Graph g = import_text(R"json({"nodes": [
      {"op": "null", "name": "data", "inputs": []},
      {"op": "null", "name": "len", "inputs": []},
      {"op": "amp_cast", "name": "half", "attrs": {"dtype": "float16"}, "inputs": [[0, 0, 0]]},
      {"op": "Cast", "name": "single", "attrs": {"dtype": "float32"}, "inputs": [[2, 0, 0]]},
      {"op": "argmax", "name": "am", "attrs": {"axis": "None", "keepdims": "False"}, "inputs": [[3, 0, 0]]},
      {"op": "topk", "name": "tk", "attrs": {"axis": "-1", "k": "2", "ret_typ": "both", "is_ascend": "False"},
       "inputs": [[3, 0, 0]]},
      {"op": "max", "name": "mx", "attrs": {"axis": "(1,)", "keepdims": "True"}, "inputs": [[3, 0, 0]]},
      {"op": "norm", "name": "nm", "attrs": {"ord": "2", "axis": "None", "out_dtype": "None"}, "inputs": [[3, 0, 0]]},
      {"op": "SequenceMask", "name": "sm", "attrs": {"use_sequence_length": "True", "value": "-1e4", "axis": "1"},
       "inputs": [[3, 0, 0], [1, 0, 0]]},
      {"op": "repeat", "name": "rp", "attrs": {"repeats": "2", "axis": "None"}, "inputs": [[3, 0, 0]]},
      {"op": "Reshape", "name": "r4", "attrs": {"shape": "(1, 1, 2, 5)"}, "inputs": [[3, 0, 0]]},
      {"op": "Pad", "name": "pd", "attrs": {"mode": "reflect", "pad_width": "(0, 0, 0, 0, 1, 1, 1, 1)"},
       "inputs": [[10, 0, 0]]},
      {"op": "flip", "name": "fl", "attrs": {"axis": "(0, 1)"}, "inputs": [[3, 0, 0]]},
      {"op": "one_hot", "name": "oh", "attrs": {"depth": "4", "on_value": "1.0", "off_value": "0.0", "dtype": "float32"},
       "inputs": [[1, 0, 0]]}],
    "arg_nodes": [0, 1], "heads": [[4, 0, 0], [5, 0, 0], [5, 1, 0], [6, 0, 0], [7, 0, 0], [8, 0, 0], [9, 0, 0],
                                    [11, 0, 0], [12, 0, 0], [13, 0, 0]]})json",
                              {{"data", {2, 5}}, {"len", {2}}});
  auto type_of = [&](std::size_t head) { return g.type(g.outputs.at(head)).shape; };
  EXPECT_EQ(type_of(0), (Shape{1}));     // argmax over all elements
  EXPECT_EQ(type_of(1), (Shape{2, 2}));  // topk values
  EXPECT_EQ(type_of(2), (Shape{2, 2}));  // topk indices
  EXPECT_EQ(type_of(3), (Shape{2, 1}));
  EXPECT_EQ(type_of(4), (Shape{}));
  EXPECT_EQ(type_of(5), (Shape{2, 5}));
  EXPECT_EQ(type_of(6), (Shape{20}));
  EXPECT_EQ(type_of(7), (Shape{1, 1, 4, 7}));
  EXPECT_EQ(type_of(8), (Shape{2, 5}));
  EXPECT_EQ(type_of(9), (Shape{2, 4}));
}

// The Cast's output is int32: C++ computes it, CUDA (float32 only) refuses
// it, naming the node, as check_kernels checks it.
TEST(MxnetShapeOps, CastToAnIntegerTypeIsRefusedByNameWhereNotComputed) {
  const Graph g = import_text(R"json({"nodes": [
        {"op": "null", "name": "data", "inputs": []},
        {"op": "Cast", "name": "to_int", "attrs": {"dtype": "int32"}, "inputs": [[0, 0, 0]]}],
      "arg_nodes": [0], "heads": [[1, 0, 0]]})json",
                              {{"data", {3}}});
  EXPECT_NO_THROW(check_kernels(g, default_target()));
  try {
    check_kernels(g, find_target("cuda"));
    FAIL() << "CUDA code for a Cast to int32";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("to_int"), std::string::npos) << message;
    EXPECT_NE(message.find("int32"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace hybgen
