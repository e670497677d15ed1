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
    // Per backend, the dtypes its kernel of the op computes.
    nlohmann::ordered_json kernels = nlohmann::ordered_json::object();
    for (Backend backend : all_backends()) {
      nlohmann::ordered_json dtypes = nlohmann::ordered_json::array();
      if (const OpKernel* kernel = find_kernel(backend, op->name))
        for (DType d : kernel->dtypes) dtypes.push_back(dtype_name(d));
      kernels[backend_name(backend)] = dtypes;
    }
    list.push_back({{"name", op->name},
                    {"aliases", op->aliases},
                    {"summary", op->summary},
                    {"fusion", fusion_class_name(op->fusion)},
                    {"inputs", op->input_names},
                    {"attrs", attrs},
                    {"kernels", kernels}});
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
    std::string kernels;
    for (const auto& [backend, dtypes] : op["kernels"].items()) {
      std::string names;
      for (const auto& d : dtypes) names += (names.empty() ? "" : " ") + d.get<std::string>();
      kernels += (kernels.empty() ? "" : ", ") + backend + " " + (names.empty() ? "none" : names);
    }
    std::printf("    kernels: %s\n", kernels.c_str());
    for (const auto& a : op["attrs"])
      std::printf("    %-20s %-10s %s\n", a["name"].get<std::string>().c_str(), a["kind"].get<std::string>().c_str(),
                  a["default"].get<std::string>().c_str());
  }
  std::printf("%zu ops\n", list.size());
  return 0;
}

}  // namespace hybgen
