// Reading JSON from untrusted files: nesting bounded while parsing (a deeply
// nested value would otherwise crash whatever later walks or prints it), files
// checked to be regular and of a sane size before they are read, and values
// shown in messages cut short.
//
//   nlohmann::json j = read_json_file("model.json");             // Error("model.json: ...")
//   nlohmann::json h = parse_json(text, "x.safetensors: header");
//   throw Error(where + ": got " + json_excerpt(value));
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace hybgen {

// Throws Error("SOURCE: malformed JSON: ...") for bad syntax or invalid
// UTF-8, and Error("SOURCE: JSON nested deeper than N levels") past
// limits::kMaxJsonDepth.
nlohmann::json parse_json(const char* begin, const char* end, const std::string& source);
nlohmann::json parse_json(const std::string& text, const std::string& source);

// read_file_text (a regular file of at most limits::kMaxJsonFileBytes), then parse_json.
nlohmann::json read_json_file(const std::string& path);

// A value for a message: its JSON text, cut after `max_chars` characters.
std::string json_excerpt(const nlohmann::json& value, std::size_t max_chars = 80);

}  // namespace hybgen
