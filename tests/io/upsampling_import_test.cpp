// MXNet exports of Gluon's transposed convolutions and upsampling ops:
// attribute strings as Gluon writes them (layout, cudnn and workspace keys,
// None for unset optionals) import into Deconvolution, UpSampling and
// _contrib_BilinearResize2D nodes, random weights take the shapes the ops ask for.
#include <gtest/gtest.h>

#include "io/json_util.h"
#include "io/mxnet/mxnet_symbol.h"
#include "ir/error.h"

namespace hybgen {
namespace {

TEST(MxnetUpsamplingImport, GluonAttributeStringsImport) {
  const auto symbol = parse_json(R"json({"nodes": [
      {"op": "null", "name": "data"},
      {"op": "null", "name": "t_weight"},
      {"op": "null", "name": "t_bias"},
      {"op": "Deconvolution", "name": "t", "attrs": {"adj": "(1,)", "cudnn_off": "False", "cudnn_tune": "None",
        "dilate": "(1,)", "kernel": "(3,)", "layout": "NCW", "no_bias": "False", "num_filter": "4",
        "num_group": "1", "pad": "(1,)", "stride": "(2,)", "target_shape": "(0,)", "workspace": "1024"},
       "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]},
      {"op": "Reshape", "name": "r", "attrs": {"shape": "(1, 4, 2, -1)"}, "inputs": [[3, 0, 0]]},
      {"op": "UpSampling", "name": "u", "attrs": {"num_args": "1", "sample_type": "nearest", "scale": "2",
        "workspace": "512"}, "inputs": [[4, 0, 0]]},
      {"op": "null", "name": "b_weight"},
      {"op": "UpSampling", "name": "b", "attrs": {"num_args": "2", "num_filter": "4", "sample_type": "bilinear",
        "scale": "2"}, "inputs": [[5, 0, 0], [6, 0, 0]]},
      {"op": "_contrib_BilinearResize2D", "name": "z", "attrs": {"align_corners": "False", "height": "1",
        "mode": "like", "scale_height": "None", "scale_width": "None", "width": "1"},
       "inputs": [[4, 0, 0], [7, 0, 0]]}],
      "arg_nodes": [0, 1, 2, 6], "heads": [[8, 0, 0]]})json",
                                 "up-symbol.json");
  MxnetImportOptions options;
  options.random_weights_seed = 1;
  options.input_shapes["data"] = {1, 3, 5};
  const Graph g = import_mxnet_symbol(symbol, "up-symbol.json", nullptr, "", options);
  ASSERT_EQ(g.nodes.size(), 5u);
  EXPECT_EQ(g.nodes[0].op, "Deconvolution");
  EXPECT_EQ(g.nodes[0].attrs.get_ints("adj"), (std::vector<int64_t>{1}));
  EXPECT_FALSE(g.nodes[0].attrs.get_bool("no_bias"));
  EXPECT_EQ(g.nodes[2].attrs.get_string("sample_type"), "nearest");
  EXPECT_EQ(g.nodes[3].attrs.get_int("num_filter"), 4);
  EXPECT_EQ(g.nodes[4].op, "_contrib_BilinearResize2D");
  EXPECT_FALSE(g.nodes[4].attrs.get_bool("align_corners"));
  EXPECT_FALSE(g.nodes[4].attrs.has("scale_height"));  // None: the default (unset) applies
}

}  // namespace
}  // namespace hybgen
