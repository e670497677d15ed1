#include "runtime-lite/invoke.h"

#include <cctype>
#include <map>
#include <mutex>
#include <set>
#include <variant>

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

// "relu" for Activation(relu), "plus_scalar" for _plus_scalar.
std::string op_base_name(const std::string& op, const Attrs& attrs) {
  const bool activation = op == "Activation" && attrs.has("act_type") &&
                          std::holds_alternative<std::string>(attrs.get("act_type"));
  std::string base = lower(activation ? attrs.get_string("act_type") : op);
  while (!base.empty() && base[0] == '_') base.erase(0, 1);
  return base;
}

std::string current_prefix() {
  const NamingState& st = naming();
  return st.prefixes.empty() ? "" : st.prefixes.back();
}

// The unique name of a traced node.
std::string node_name(const std::string& op, const Attrs& attrs, const std::string& hint) {
  NamingState& st = naming();
  const std::string prefix = current_prefix();
  std::string name;
  if (!hint.empty()) {
    name = prefix + hint;
  } else {
    const std::string base = op_base_name(op, attrs);
    name = prefix + base + std::to_string(st.counters[prefix + base]++);
  }
  std::string unique = name;
  for (int i = 1; st.used.count(unique); ++i) unique = name + "_" + std::to_string(i);
  st.used.insert(unique);
  return unique;
}

// How errors name an eager call: as its node would be named, without counting.
std::string eager_name(const std::string& op, const Attrs& attrs, const std::string& hint) {
  return current_prefix() + (hint.empty() ? op_base_name(op, attrs) : hint);
}

// What both modes check first: attributes, the input count, defined inputs,
// and the output types when every input shape is known.
struct Checked {
  Attrs attrs;
  std::vector<TensorType> in_types, out_types;
};

Checked check_call(const OpDef& def, const std::vector<Tensor>& inputs, const Attrs& attrs, bool shapes_known) {
  Checked c;
  c.attrs = normalize_attrs(def, attrs);
  const auto [lo, hi] = expected_inputs(def, c.attrs);
  const int n = static_cast<int>(inputs.size());
  if (n < lo || (hi >= 0 && n > hi))
    throw Error("given " + std::to_string(n) + " inputs, expected " + std::to_string(lo) +
                (hi == lo ? "" : hi < 0 ? " or more" : " to " + std::to_string(hi)));
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i].defined()) throw Error("input " + std::to_string(i) + " is an undefined tensor");
  if (shapes_known) {
    for (const auto& t : inputs) c.in_types.push_back(t.type());
    c.out_types = def.infer(c.attrs, c.in_types);
  }
  return c;
}

// Runs the reference kernel, the one the interpreter runs too.
std::vector<Tensor> invoke_eager(const OpDef& def, const std::vector<Tensor>& inputs, const Attrs& attrs) {
  const Checked c = check_call(def, inputs, attrs, true);
  std::vector<Tensor> outs;
  KernelIO io{c.attrs, {}, c.in_types, {}, c.out_types};
  for (const auto& t : inputs) io.in.push_back(t.data());
  for (const auto& type : c.out_types) {
    outs.emplace_back(type.shape);
    io.out.push_back(outs.back().data());
  }
  def.reference(io);
  return outs;
}

// Adds a node to the trace; its output types stay unknown while an input's is.
std::vector<Tensor> invoke_symbolic(const OpDef& def, const std::vector<Tensor>& inputs, const Attrs& attrs,
                                    const std::string& name, bool shapes_known) {
  const Checked c = check_call(def, inputs, attrs, shapes_known);
  auto node = std::make_shared<SymNode>();
  node->op = def.name;
  node->attrs = c.attrs;
  node->name = name;
  for (const auto& t : inputs) {
    if (t.is_symbolic()) {
      node->inputs.push_back({t.sym_node(), t.sym_index()});
      continue;
    }
    // A concrete tensor inside a trace is a constant of the graph.
    auto constant = std::make_shared<SymNode>();
    constant->op = "null";
    constant->name = name + "_const" + std::to_string(node->inputs.size());
    constant->is_parameter = true;
    constant->inline_constant = true;
    constant->bound = t;
    constant->parameter_shape = t.shape();
    constant->out_types = {t.type()};
    node->inputs.push_back({constant, 0});
  }
  const int outputs = output_count(def, c.attrs);
  node->out_types.resize(static_cast<std::size_t>(outputs));
  for (std::size_t i = 0; i < c.out_types.size() && i < node->out_types.size(); ++i) node->out_types[i] = c.out_types[i];
  std::vector<Tensor> outs;
  for (int i = 0; i < outputs; ++i) outs.push_back(Tensor::symbolic(node, i));
  return outs;
}

}  // namespace

NameScope::NameScope(const std::string& prefix) { naming().prefixes.push_back(prefix); }
NameScope::~NameScope() { naming().prefixes.pop_back(); }
bool in_name_scope() { return !naming().prefixes.empty(); }

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
  bool symbolic = false, shapes_known = true;
  for (const auto& t : inputs) {
    symbolic = symbolic || t.is_symbolic();
    shapes_known = shapes_known && t.defined() && t.has_shape();
  }
  // Symbols get their node name now; eager calls are named in errors only.
  std::string name = symbolic ? node_name(def.name, attrs, name_hint) : eager_name(def.name, attrs, name_hint);
  try {
    return symbolic ? invoke_symbolic(def, inputs, attrs, name, shapes_known)
                    : invoke_eager(def, inputs, attrs);
  } catch (const SymbolicValueError&) {
    throw;
  } catch (const Error& e) {
    throw Error(node_label(name, def.name) + ": " + e.what());
  }
}

}  // namespace hybgen
