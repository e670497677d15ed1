#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "ops/op.h"

namespace hybgen {

int run_ops(bool json) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const OpDef* op : all_ops()) {
    nlohmann::ordered_json attrs = nlohmann::ordered_json::array();
    for (const auto& a : op->attrs)
      attrs.push_back({{"name", a.name},
                       {"kind", attr_kind_name(a.kind)},
                       {"default", a.default_value ? attr_value_str(*a.default_value) : "(required)"},
                       {"doc", a.doc}});
    list.push_back({{"name", op->name},
                    {"aliases", op->aliases},
                    {"summary", op->summary},
                    {"fusion", fusion_class_name(op->fusion)},
                    {"inputs", op->input_names},
                    {"attrs", attrs}});
  }
  if (json) {
    std::cout << list.dump(2) << "\n";
    return 0;
  }
  for (const auto& op : list) {
    std::string inputs, aliases;
    for (const auto& i : op["inputs"]) inputs += (inputs.empty() ? "" : ", ") + i.get<std::string>();
    for (const auto& a : op["aliases"]) aliases += (aliases.empty() ? "" : ", ") + a.get<std::string>();
    std::printf("%s(%s)  [%s]\n    %s\n", op["name"].get<std::string>().c_str(), inputs.c_str(),
                op["fusion"].get<std::string>().c_str(), op["summary"].get<std::string>().c_str());
    if (!aliases.empty()) std::printf("    also: %s\n", aliases.c_str());
    for (const auto& a : op["attrs"])
      std::printf("    %-20s %-10s %s\n", a["name"].get<std::string>().c_str(), a["kind"].get<std::string>().c_str(),
                  a["default"].get<std::string>().c_str());
  }
  std::printf("%zu ops\n", list.size());
  return 0;
}

}  // namespace hybgen
