#include "ir/names.h"

#include <cstdint>
#include <cstdio>

namespace hybgen {
namespace {

std::string hex_escape(unsigned char c) {
  char text[5];
  std::snprintf(text, sizeof text, "\\x%02x", c);
  return text;
}

// Length of the UTF-8 sequence starting at `at`, or 0 when it is not one
// (overlong forms, surrogates and code points past U+10FFFF included).
std::size_t utf8_sequence(const std::string& s, std::size_t at) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char c = byte(at);
  if (c < 0x80) return 1;
  std::size_t n = 0;
  uint32_t cp = 0;
  if ((c & 0xe0) == 0xc0) n = 2, cp = c & 0x1f;
  else if ((c & 0xf0) == 0xe0) n = 3, cp = c & 0x0f;
  else if ((c & 0xf8) == 0xf0) n = 4, cp = c & 0x07;
  else return 0;
  if (at + n > s.size()) return 0;
  for (std::size_t i = 1; i < n; ++i) {
    if ((byte(at + i) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (byte(at + i) & 0x3f);
  }
  const uint32_t smallest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < smallest[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

std::string cut_note(const std::string& text) {
  return "...(" + std::to_string(text.size()) + " bytes)";
}

}  // namespace

std::string printable_name(const std::string& name) {
  std::string out;
  for (std::size_t at = 0; at < name.size() && at < kMaxShownNameBytes;) {
    const unsigned char c = static_cast<unsigned char>(name[at]);
    const std::size_t n = utf8_sequence(name, at);
    if (n > 1) {
      out.append(name, at, n);
      at += n;
      continue;
    }
    ++at;
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (c == '\\') out += "\\\\";
    else if (c < 0x20 || c == 0x7f || n == 0) out += hex_escape(c);
    else out += static_cast<char>(c);
  }
  if (name.size() > kMaxShownNameBytes) out += cut_note(name);
  return out;
}

std::string quoted_name(const std::string& name) { return "'" + printable_name(name) + "'"; }

std::string comment_text(const std::string& text) {
  std::string out;
  for (std::size_t at = 0; at < text.size() && at < kMaxShownNameBytes; ++at) {
    const unsigned char c = static_cast<unsigned char>(text[at]);
    if (c < 0x20 || c >= 0x7f || c == '\\' || c == '?' || c == '*') out += hex_escape(c);
    else out += static_cast<char>(c);
  }
  if (text.size() > kMaxShownNameBytes) out += cut_note(text);
  return out;
}

bool is_valid_utf8(const std::string& text) {
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t n = utf8_sequence(text, at);
    if (n == 0) return false;
    at += n;
  }
  return true;
}

}  // namespace hybgen
