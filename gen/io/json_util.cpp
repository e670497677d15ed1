#include "io/json_util.h"

#include "io/file_util.h"
#include "ir/error.h"
#include "ir/limits.h"
#include "ir/names.h"

namespace hybgen {
namespace {

// Thrown from the parser callback; turned into an Error naming the source.
struct TooDeep {};

}  // namespace

nlohmann::json parse_json(const char* begin, const char* end, const std::string& source) {
  // The callback sees every value start with its depth before the value is
  // built, so a deep nest stops at the limit instead of growing without bound.
  const nlohmann::json::parser_callback_t bound = [](int depth, nlohmann::json::parse_event_t event,
                                                     nlohmann::json&) {
    if ((event == nlohmann::json::parse_event_t::object_start || event == nlohmann::json::parse_event_t::array_start) &&
        depth >= limits::kMaxJsonDepth)
      throw TooDeep{};
    return true;
  };
  try {
    return nlohmann::json::parse(begin, end, bound);
  } catch (const TooDeep&) {
    throw Error(source + ": JSON nested deeper than " + std::to_string(limits::kMaxJsonDepth) + " levels");
  } catch (const nlohmann::json::exception& e) {
    throw Error(source + ": malformed JSON: " + printable_name(e.what()));
  }
}

nlohmann::json parse_json(const std::string& text, const std::string& source) {
  return parse_json(text.data(), text.data() + text.size(), source);
}

nlohmann::json read_json_file(const std::string& path) {
  check_file_size(path, limits::kMaxJsonFileBytes);
  return parse_json(read_file_text(path), path);
}

std::string json_excerpt(const nlohmann::json& value, std::size_t max_chars) {
  // Depth is bounded by parse_json, so dump() cannot recurse far; its length
  // is not, hence the cut. Invalid UTF-8 cannot reach here from the parser.
  std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > max_chars) text = text.substr(0, max_chars) + "... (" + std::to_string(text.size()) + " characters)";
  return printable_name(text);
}

}  // namespace hybgen
