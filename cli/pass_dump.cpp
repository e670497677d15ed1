#include "cli/pass_dump.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "io/file_util.h"
#include "io/model_json.h"
#include "ir/error.h"

namespace hybgen {

nlohmann::ordered_json pass_state_json(const CompiledGraph& state) {
  nlohmann::ordered_json json = graph_to_json(state.graph);
  // plan_memory always names a strategy ("empty" when nothing is placed), so
  // an unnamed one means the plan does not exist yet.
  const bool planned = !state.plan.strategy.empty();
  if (!state.kernels.empty() || planned) json["kernels"] = kernels_to_json(state.graph, state.kernels);
  if (planned) json["memory_plan"] = state.plan.to_json();
  return json;
}

PassDumps::PassDumps(const std::vector<std::string>& passes, std::string dir, const CompileOptions& options)
    : dir_(std::move(dir)), pass_order_(pass_names(options)) {
  std::vector<std::string> unknown;
  for (const auto& pass : passes) {
    if (pass == "all")
      wanted_.insert(pass_order_.begin(), pass_order_.end());
    else if (std::find(pass_order_.begin(), pass_order_.end(), pass) != pass_order_.end())
      wanted_.insert(pass);
    else
      unknown.push_back(pass);
  }
  if (unknown.empty()) return;
  std::string names, valid;
  for (const auto& u : unknown) names += (names.empty() ? "'" : ", '") + u + "'";
  for (const auto& p : pass_order_) valid += (valid.empty() ? "" : ", ") + p;
  throw Error("--dump-after " + names + ": no such pass" + (options.optimize ? "" : " with --no-optimize") +
              " (passes: " + valid + "; or all)");
}

PassObserver PassDumps::observer() {
  if (wanted_.empty()) return nullptr;
  return [this](const std::string& pass, const CompiledGraph& state) {
    if (!wanted_.count(pass)) return;
    const auto position = std::find(pass_order_.begin(), pass_order_.end(), pass) - pass_order_.begin();
    char prefix[16];
    std::snprintf(prefix, sizeof prefix, "%02d-", static_cast<int>(position));
    captured_.emplace_back(prefix + pass + ".json", pass_state_json(state).dump(2) + "\n");
  };
}

std::vector<std::string> PassDumps::write() const {
  std::vector<std::string> paths;
  if (captured_.empty()) return paths;
  std::error_code ec;
  if (!dir_.empty()) std::filesystem::create_directories(dir_, ec);
  if (ec) throw Error(dir_ + ": cannot create the --dump-dir folder: " + ec.message());
  for (const auto& [file_name, text] : captured_) {
    paths.push_back((std::filesystem::path(dir_) / file_name).string());
    write_file_atomic(paths.back(), text);
  }
  return paths;
}

}  // namespace hybgen
