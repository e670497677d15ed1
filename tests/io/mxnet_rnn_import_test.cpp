// What Gluon's recurrent layers export around MXNet's RNN op: swapaxes for
// layout NTC, the weights flattened and joined by _rnn_param_concat, and
// begin states as _zeros whose batch size (a 0) shape inference fills in.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "error_matchers.h"
#include "io/mxnet/mxnet_symbol.h"
#include "ir/error.h"
#include "ops/op.h"

namespace hybgen {
namespace {

// Gluon 1.9's export of rnn.LSTM(3, layout='NTC', input_size=2) (or GRU with
// one state), states left to begin_state.
nlohmann::json gluon_rnn_symbol(const std::string& mode, const std::string& zeros_shape = "(1, 0, 3)") {
  using nlohmann::json;
  // One [node, 0, 0] entry, and a list of them (brace lists of numbers would read as one array).
  auto entry = [](int node) { return json::array({static_cast<unsigned>(node), 0u, 0u}); };
  auto entries = [&](std::initializer_list<int> from) {
    json list = json::array();
    for (int node : from) list.push_back(entry(node));
    return list;
  };
  json nodes = json::array();
  auto add = [&](const std::string& op, const std::string& name, json attrs, json inputs) {
    json n{{"op", op}, {"name", name}, {"inputs", inputs}};
    if (!attrs.empty()) n["attrs"] = attrs;
    nodes.push_back(n);
    return static_cast<int>(nodes.size()) - 1;
  };
  const int data = add("null", "data", json::object(), json::array());
  const int swap = add("SwapAxis", "rnn0_swapaxes0", {{"dim1", "0"}, {"dim2", "1"}}, entries({data}));
  json flat = json::array();
  for (const std::string w : {"l0_i2h_weight", "l0_h2h_weight", "l0_i2h_bias", "l0_h2h_bias"}) {
    const int v = add("null", "rnn0_" + w, json::object(), json::array());
    flat.push_back(entry(add("Reshape", "rnn0_reshape_" + w, {{"shape", "(-1,)"}}, entries({v}))));
  }
  const int params = add("_rnn_param_concat", "rnn0_rnn_param_concat0", {{"dim", "0"}, {"num_args", "4"}}, flat);
  json rnn_inputs = entries({swap, params});
  for (int s = 0; s < (mode == "lstm" ? 2 : 1); ++s)
    rnn_inputs.push_back(entry(add("_zeros", "rnn0_begin_state_" + std::to_string(s),
                                   {{"__layout__", "LNC"}, {"dtype", "float32"}, {"shape", zeros_shape}},
                                   json::array())));
  const int rnn = add("RNN", "rnn0_rnn0",
                      {{"bidirectional", "False"}, {"lstm_state_clip_max", "None"}, {"lstm_state_clip_min", "None"},
                       {"lstm_state_clip_nan", "False"}, {"mode", mode}, {"num_layers", "1"}, {"p", "0.0"},
                       {"projection_size", "None"}, {"state_outputs", "True"}, {"state_size", "3"},
                       {"use_sequence_length", "False"}},
                      rnn_inputs);
  const int out = add("SwapAxis", "rnn0_swapaxes1", {{"dim1", "0"}, {"dim2", "1"}}, entries({rnn}));
  return json{{"nodes", nodes}, {"arg_nodes", json::array()}, {"heads", entries({out})}};
}

std::map<std::string, Constant> gluon_rnn_params(int64_t gates) {
  const int64_t gh = gates * 3;
  return {{"arg:rnn0_l0_i2h_weight", Constant::f32({gh, 2}, std::vector<float>(gh * 2, 0.1f))},
          {"arg:rnn0_l0_h2h_weight", Constant::f32({gh, 3}, std::vector<float>(gh * 3, 0.2f))},
          {"arg:rnn0_l0_i2h_bias", Constant::f32({gh}, std::vector<float>(gh, 0.3f))},
          {"arg:rnn0_l0_h2h_bias", Constant::f32({gh}, std::vector<float>(gh, 0.4f))}};
}

TEST(MxnetRnnImport, GluonLstmWithSwapaxesParamConcatAndZeroStates) {
  const auto params = gluon_rnn_params(4);
  MxnetImportOptions options;
  options.input_shapes["data"] = {2, 5, 2};  // (N, T, C)
  const Graph g = import_mxnet_symbol(gluon_rnn_symbol("lstm"), "rnn-symbol.json", &params, "rnn-0000.params", options);
  std::vector<std::string> ops;
  for (const Node& n : g.nodes) ops.push_back(n.op);
  EXPECT_EQ(ops, (std::vector<std::string>{"SwapAxis", "Reshape", "Reshape", "Reshape", "Reshape", "Concat", "RNN",
                                           "SwapAxis"}));
  // The begin states: constants of zeros, the batch taken from the data.
  for (const std::string s : {"rnn0_begin_state_0", "rnn0_begin_state_1"}) {
    ASSERT_TRUE(g.constants.count(s)) << s;
    EXPECT_EQ(g.constants.at(s).type.shape, (Shape{1, 2, 3}));
    for (int i = 0; i < 6; ++i) EXPECT_EQ(g.constants.at(s).f32_data()[i], 0.0f);
  }
  const Node& rnn = g.nodes[6];
  EXPECT_EQ(rnn.inputs[2], "rnn0_begin_state_0");
  EXPECT_EQ(rnn.outputs.size(), 3u);  // out, hy, cy (state_outputs)
  EXPECT_EQ(g.outputs, (std::vector<std::string>{"rnn0_swapaxes1"}));
}

TEST(MxnetRnnImport, GruAndAFullyGivenZerosShape) {
  const auto params = gluon_rnn_params(3);
  MxnetImportOptions options;
  options.input_shapes["data"] = {4, 5, 2};
  const Graph g =
      import_mxnet_symbol(gluon_rnn_symbol("gru", "(1, 4, 3)"), "rnn-symbol.json", &params, "rnn-0000.params", options);
  EXPECT_EQ(g.constants.at("rnn0_begin_state_0").type.shape, (Shape{1, 4, 3}));
}

TEST(MxnetRnnImport, ZerosErrorsNameTheNode) {
  const auto params = gluon_rnn_params(4);
  MxnetImportOptions options;
  options.input_shapes["data"] = {2, 5, 2};
  EXPECT_ERROR(import_mxnet_symbol(gluon_rnn_symbol("lstm", "(1, 0)"), "rnn-symbol.json", &params, "p", options),
               "rnn-symbol.json: node 'rnn0_begin_state_0' (_zeros): shape (1, 0) cannot be the state (1, 2, 3)");
  EXPECT_ERROR(import_mxnet_symbol(gluon_rnn_symbol("lstm", "(1, -2, 3)"), "rnn-symbol.json", &params, "p", options),
               "has a negative size");
  // A 0 that no RNN state fills: the head reads the zeros directly.
  const nlohmann::json lonely = nlohmann::json::parse(
      R"json({"nodes": [{"op": "_zeros", "name": "z", "attrs": {"shape": "(0, 2)"}, "inputs": []}],
          "arg_nodes": [], "heads": [[0, 0, 0]]})json");
  EXPECT_ERROR(import_mxnet_symbol(lonely, "z-symbol.json", nullptr, "", {}),
               "z-symbol.json: node 'z' (_zeros): its shape (0, 2) has a 0 size and no RNN reads it as a state");
}

}  // namespace
}  // namespace hybgen
