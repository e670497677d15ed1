#include "emit/templates.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

#include "ir/error.h"

namespace hybgen {

// Defined in the file CMake generates from templates/ (cmake/embed_templates.cmake).
const std::map<std::string, std::string>& embedded_templates();

bool mentions_identifier(const std::string& code, const std::string& name) {
  auto part_of_identifier = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (std::size_t at = code.find(name); at != std::string::npos; at = code.find(name, at + 1)) {
    const bool starts = at == 0 || !part_of_identifier(code[at - 1]);
    const bool ends = at + name.size() == code.size() || !part_of_identifier(code[at + name.size()]);
    if (starts && ends) return true;
  }
  return false;
}

const std::string& template_text(const std::string& name) {
  const auto& all = embedded_templates();
  auto it = all.find(name);
  if (it == all.end()) throw Error("no template named '" + name + "' (templates/" + name + ".in or .inc)");
  return it->second;
}

namespace {

void add_with_needs(const std::string& folder, const std::string& kernel, std::vector<std::string>& order,
                    std::set<std::string>& visiting) {
  if (std::find(order.begin(), order.end(), kernel) != order.end()) return;
  if (!visiting.insert(kernel).second) throw Error("kernel templates need each other in a cycle at '" + kernel + "'");
  const std::string& text = template_text(folder + "/" + kernel);
  const std::string kPrefix = "// needs:";
  if (text.compare(0, kPrefix.size(), kPrefix) == 0) {
    std::istringstream needs(text.substr(kPrefix.size(), text.find('\n') - kPrefix.size()));
    for (std::string need; needs >> need;) add_with_needs(folder, need, order, visiting);
  }
  visiting.erase(kernel);
  order.push_back(kernel);
}

}  // namespace

std::vector<std::string> kernel_templates_with_needs(const std::string& kernel, const std::string& folder) {
  std::vector<std::string> order;
  std::set<std::string> visiting;
  add_with_needs(folder, kernel, order, visiting);
  return order;
}

std::string fill_template(const std::string& text, const std::map<std::string, std::string>& values,
                          const std::string& template_name) {
  std::string out;
  std::set<std::string> used;
  std::size_t pos = 0;
  for (;;) {
    const std::size_t open = text.find("{{", pos);
    if (open == std::string::npos) break;
    const std::size_t close = text.find("}}", open + 2);
    if (close == std::string::npos) throw Error("template '" + template_name + "': '{{' without '}}'");
    const std::string key = text.substr(open + 2, close - open - 2);
    auto it = values.find(key);
    if (it == values.end()) throw Error("template '" + template_name + "': no value for {{" + key + "}}");
    out.append(text, pos, open - pos);
    out += it->second;
    used.insert(key);
    pos = close + 2;
  }
  out.append(text, pos, std::string::npos);
  for (const auto& [key, value] : values)
    if (!used.count(key)) throw Error("template '" + template_name + "' has no {{" + key + "}} for the value given");
  return out;
}

std::string indent_lines(const std::string& code, const std::string& pad) {
  std::string out;
  std::size_t start = 0;
  while (start < code.size()) {
    std::size_t end = code.find('\n', start);
    if (end == std::string::npos) end = code.size();
    out += pad + code.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return out;
}

}  // namespace hybgen
