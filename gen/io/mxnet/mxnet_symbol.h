// Imports MXNet exports — NAME-symbol.json (+ NAME-XXXX.params) — into a
// hybgen Graph, accepting every symbol JSON layout MXNet wrote (0.8 `param`,
// 0.9-0.11 `attr`, >= 1.0 `attrs`; 2- and 3-element entries; 0.8's 3-input
// BatchNorm, whose moving statistics are `aux:` arrays of the .params only).
//
//   MxnetImportOptions opt;
//   opt.input_shapes["data"] = {1, 3, 224, 224};     // MXNet files carry no input shapes
//   Graph g = import_mxnet("net-symbol.json", "net-0000.params", opt);
//   bool mx = looks_like_mxnet_symbol(json);
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "ir/graph.h"

namespace hybgen {

struct MxnetImportOptions {
  // Shapes of runtime inputs; an input without one takes its `__shape__`
  // attribute when fully known, otherwise import fails naming it.
  std::map<std::string, Shape> input_shapes;
  std::string name;  // graph name; default: file stem without "-symbol"
  // Symbol files without .params: make every weight from this seed instead,
  // with the shapes the ops expect (OpDef::weight_shapes). For testing the
  // import and the generated code; the numbers mean nothing.
  std::optional<uint64_t> random_weights_seed;
  // Receives one note per attribute key MXNet ignores and the import skips
  // (lr_mult, ctx_group, __x__ keys, ...), naming the first node that has it.
  // Unset: each is printed to stderr as "hybgen: note: ...".
  std::function<void(const std::string&)> note;
};

bool looks_like_mxnet_symbol(const nlohmann::json& json);

// Throws Error naming the file where `json` lacks what every symbol file has
// (an object with 'nodes' as a list, 'arg_nodes' and 'heads'). The import
// checks it first; a loader that looks for the .params calls it before, so
// a broken symbol file is told so rather than that its .params is missing.
void check_mxnet_symbol_fields(const nlohmann::json& json, const std::string& symbol_path);

// The .params beside a symbol file: NAME-symbol.json -> the NAME-XXXX.params
// with the highest epoch number, or nullopt when there is none.
std::optional<std::string> find_mxnet_params(const std::string& symbol_path);

// Converts the symbol graph; weights come from `params_path` (arg:/aux:
// names matched by name). Throws Error naming the file and node: all
// unsupported ops listed in one message, attribute strings MXNet would
// reject, a missing input shape, a weight missing from the params.
Graph import_mxnet(const std::string& symbol_path, const std::optional<std::string>& params_path,
                   const MxnetImportOptions& options);

// The same from a parsed symbol file and params already read (nullptr: none,
// as without a .params file); `symbol_path` and `params_source` name them in
// messages.
Graph import_mxnet_symbol(const nlohmann::json& symbol, const std::string& symbol_path,
                          const std::map<std::string, Constant>* params, const std::string& params_source,
                          const MxnetImportOptions& options);

// Parses one attribute string the way MXNet's parameter parser does, into
// the kind the op schema asks for: "(3, 3)", "[3,3]", "3", "(64,)", "True",
// "1e-05", "relu". Throws Error saying what was expected.
AttrValue parse_mxnet_attr(const std::string& text, AttrKind kind);

}  // namespace hybgen
