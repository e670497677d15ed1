// Error type for everything the tool reports to a user.
//
//   throw hybgen::Error("node 'fc1' (FullyConnected): weight has 2 dims, expected 2");
//   try { ... } catch (const hybgen::Error& e) { std::cerr << e.what(); }
//
// Messages name the file, the node and what was expected; callers that know
// more context (the file) prepend it with `with_context`.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "ir/names.h"

namespace hybgen {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Returns a copy of `e` whose message starts with `context: `.
inline Error with_context(const std::string& context, const std::exception& e) {
  return Error(context + ": " + e.what());
}

// "node 'name' (Op)" — the way every message names a node, with whatever
// the names hold escaped (ir/names.h).
inline std::string node_label(const std::string& name, const std::string& op) {
  return "node " + quoted_name(name) + " (" + printable_name(op) + ")";
}

// Each item on a line of its own, indented: the problems an importer lists at once.
inline std::string join_lines(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += "\n  " + s;
  return out;
}

// "a, b, c and 5 more": the first `shown` items, then how many are left.
inline std::string first_items(const std::vector<std::string>& items, std::size_t shown = 8) {
  std::string list;
  for (std::size_t k = 0; k < items.size() && k < shown; ++k) list += (k ? ", " : "") + items[k];
  if (items.size() > shown) list += " and " + std::to_string(items.size() - shown) + " more";
  return list;
}

}  // namespace hybgen
