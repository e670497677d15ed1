// The one entry point every op call goes through, eager or symbolic.
//
//   std::vector<Tensor> y = invoke("Activation", {x}, attrs);   // x concrete: runs the reference kernel
//   std::vector<Tensor> s = invoke("Activation", {sym}, attrs); // x symbolic: adds a node to the trace
//
// Eager calls run OpDef::reference, the same kernel the graph interpreter
// uses, so eager, hybridized and interpreted results agree.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/attrs.h"
#include "runtime-lite/tensor.h"

namespace hybgen {

std::vector<Tensor> invoke(const std::string& op, const std::vector<Tensor>& inputs, const Attrs& attrs = {},
                           const std::string& name_hint = "");

// Names of traced nodes: "<block prefix><hint>", where an op without a hint
// is named after itself with a counter ("net0_relu0"). Counters restart with
// each TraceNames, so tracing twice gives the same names. Errors of eager
// calls name the call the same way ("node 'dense0_fwd' (FullyConnected): ...").
class NameScope {
 public:
  explicit NameScope(const std::string& prefix);
  ~NameScope();
  NameScope(const NameScope&) = delete;
  NameScope& operator=(const NameScope&) = delete;
};

// True inside a block call (some NameScope is open on this thread).
bool in_name_scope();

class TraceNames {
 public:
  TraceNames();
  ~TraceNames();
  TraceNames(const TraceNames&) = delete;
  TraceNames& operator=(const TraceNames&) = delete;

 private:
  std::map<std::string, int> saved_counters_;
  std::set<std::string> saved_used_;
};

// "dense" -> "dense0", then "dense1", ...: process-wide, as Gluon names blocks.
std::string unique_block_prefix(const std::string& hint);

}  // namespace hybgen
