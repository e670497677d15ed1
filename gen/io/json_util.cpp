#include "io/json_util.h"

#include "io/file_util.h"
#include "ir/error.h"
#include "ir/limits.h"
#include "ir/names.h"

namespace hybgen {
namespace {

using json = nlohmann::json;

// Thrown by the parser below; turned into an Error naming the source.
struct TooDeep {};

// nlohmann's DOM builder with the nesting counted as it opens: a deep nest
// stops at the limit before it is built. (nlohmann's parser callbacks could
// count it too, but with a callback every closing object scans its parent's
// elements, quadratic in a 100k-node graph.)
class BoundedDomParser {
 public:
  explicit BoundedDomParser(json& result) : dom_(result, /*allow_exceptions=*/true) {}
  bool null() { return dom_.null(); }
  bool boolean(bool v) { return dom_.boolean(v); }
  bool number_integer(json::number_integer_t v) { return dom_.number_integer(v); }
  bool number_unsigned(json::number_unsigned_t v) { return dom_.number_unsigned(v); }
  bool number_float(json::number_float_t v, const json::string_t& text) { return dom_.number_float(v, text); }
  bool string(json::string_t& v) { return dom_.string(v); }
  bool binary(json::binary_t& v) { return dom_.binary(v); }
  bool start_object(std::size_t n) { return open() && dom_.start_object(n); }
  bool key(json::string_t& k) { return dom_.key(k); }
  bool end_object() { return close() && dom_.end_object(); }
  bool start_array(std::size_t n) { return open() && dom_.start_array(n); }
  bool end_array() { return close() && dom_.end_array(); }
  bool parse_error(std::size_t at, const std::string& token, const nlohmann::detail::exception& e) {
    return dom_.parse_error(at, token, e);
  }

 private:
  bool open() {
    if (++depth_ > limits::kMaxJsonDepth) throw TooDeep{};
    return true;
  }
  bool close() {
    --depth_;
    return true;
  }
  nlohmann::detail::json_sax_dom_parser<json> dom_;
  int depth_ = 0;
};

}  // namespace

nlohmann::json parse_json(const char* begin, const char* end, const std::string& source) {
  json result;
  BoundedDomParser parser(result);
  try {
    json::sax_parse(begin, end, &parser);
  } catch (const TooDeep&) {
    throw Error(source + ": JSON nested deeper than " + std::to_string(limits::kMaxJsonDepth) + " levels");
  } catch (const json::exception& e) {
    throw Error(source + ": malformed JSON: " + printable_name(e.what()));
  }
  return result;
}

nlohmann::json parse_json(const std::string& text, const std::string& source) {
  return parse_json(text.data(), text.data() + text.size(), source);
}

nlohmann::json read_json_file(const std::string& path) {
  return parse_json(read_file_text(path, limits::kMaxJsonFileBytes), path);
}

std::string json_excerpt(const nlohmann::json& value, std::size_t max_chars) {
  // Depth is bounded by parse_json, so dump() cannot recurse far; its length
  // is not, hence the cut. Invalid UTF-8 cannot reach here from the parser.
  std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > max_chars) text = text.substr(0, max_chars) + "... (" + std::to_string(text.size()) + " characters)";
  return printable_name(text);
}

}  // namespace hybgen
