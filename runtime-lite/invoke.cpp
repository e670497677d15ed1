#include "runtime-lite/invoke.h"

#include <cctype>
#include <map>
#include <mutex>
#include <set>

#include "ops/op.h"
#include "runtime-lite/symbol.h"

namespace hybgen {
namespace {

struct NamingState {
  std::vector<std::string> prefixes;
  std::map<std::string, int> counters;
  std::set<std::string> used;
};

// Trace names are per thread: two threads may trace two blocks at once.
NamingState& naming() {
  thread_local NamingState state;
  return state;
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string node_name(const std::string& op, const Attrs& attrs, const std::string& hint) {
  NamingState& st = naming();
  const std::string prefix = st.prefixes.empty() ? "" : st.prefixes.back();
  std::string name;
  if (!hint.empty()) {
    name = prefix + hint;
  } else {
    std::string base = lower(op == "Activation" && attrs.has("act_type") ? attrs.get_string("act_type") : op);
    while (!base.empty() && base[0] == '_') base.erase(0, 1);
    name = prefix + base + std::to_string(st.counters[prefix + base]++);
  }
  std::string unique = name;
  for (int i = 1; st.used.count(unique); ++i) unique = name + "_" + std::to_string(i);
  st.used.insert(unique);
  return unique;
}

}  // namespace

NameScope::NameScope(const std::string& prefix) { naming().prefixes.push_back(prefix); }
NameScope::~NameScope() { naming().prefixes.pop_back(); }

// A fresh naming state for the duration of one trace, keeping the prefixes.
TraceNames::TraceNames() {
  NamingState& st = naming();
  NamingState fresh;
  fresh.prefixes = st.prefixes;
  st.counters.swap(fresh.counters);
  st.used.swap(fresh.used);
  saved_counters_ = std::move(fresh.counters);
  saved_used_ = std::move(fresh.used);
}
TraceNames::~TraceNames() {
  NamingState& st = naming();
  st.counters = std::move(saved_counters_);
  st.used = std::move(saved_used_);
}

std::string unique_block_prefix(const std::string& hint) {
  static std::mutex mutex;
  static std::map<std::string, int> counters;
  std::lock_guard<std::mutex> lock(mutex);
  return hint + std::to_string(counters[hint]++) + "_";
}

std::vector<Tensor> invoke(const std::string& op, const std::vector<Tensor>& inputs, const Attrs& attrs,
                           const std::string& name_hint) {
  const OpDef& def = find_op(op);
  Attrs normalized;
  try {
    normalized = normalize_attrs(def, attrs);
  } catch (const Error& e) {
    throw Error(op + ": " + e.what());
  }
  const auto [lo, hi] = expected_inputs(def, normalized);
  const int n = static_cast<int>(inputs.size());
  if (n < lo || (hi >= 0 && n > hi))
    throw Error(op + ": given " + std::to_string(n) + " inputs, expected " + std::to_string(lo) +
                (hi == lo ? "" : hi < 0 ? " or more" : " to " + std::to_string(hi)));
  bool symbolic = false, shapes_known = true;
  for (const auto& t : inputs) {
    if (!t.defined()) throw Error(op + ": an input tensor is undefined");
    symbolic = symbolic || t.is_symbolic();
    shapes_known = shapes_known && t.has_shape();
  }

  std::vector<TensorType> in_types;
  std::vector<TensorType> out_types;
  if (shapes_known) {
    for (const auto& t : inputs) in_types.push_back(t.type());
    try {
      out_types = def.infer(normalized, in_types);
    } catch (const Error& e) {
      throw Error(op + ": " + e.what());
    }
  }

  if (symbolic) {
    auto node = std::make_shared<SymNode>();
    node->op = def.name;
    node->attrs = normalized;
    node->name = node_name(def.name, normalized, name_hint);
    for (const auto& t : inputs) {
      if (t.is_symbolic()) {
        node->inputs.push_back({t.sym_node(), t.sym_index()});
      } else {
        // A concrete tensor inside a trace is a constant of the graph.
        auto constant = std::make_shared<SymNode>();
        constant->op = "null";
        constant->name = node->name + "_const" + std::to_string(node->inputs.size());
        constant->is_parameter = true;
        constant->inline_constant = true;
        constant->bound = t;
        constant->parameter_shape = t.shape();
        constant->out_types = {t.type()};
        node->inputs.push_back({constant, 0});
      }
    }
    const int outputs = output_count(def, normalized);
    node->out_types.resize(static_cast<std::size_t>(outputs));
    for (std::size_t i = 0; i < out_types.size(); ++i) node->out_types[i] = out_types[i];
    std::vector<Tensor> outs;
    for (int i = 0; i < outputs; ++i) outs.push_back(Tensor::symbolic(node, i));
    return outs;
  }

  std::vector<Tensor> outs;
  KernelIO io{normalized, {}, in_types, {}, out_types};
  for (const auto& t : inputs) io.in.push_back(t.data());
  for (const auto& type : out_types) {
    outs.emplace_back(type.shape);
    io.out.push_back(outs.back().data());
  }
  def.reference(io);
  return outs;
}

}  // namespace hybgen
