#include "emit/report_text.h"

#include <cmath>
#include <cstdio>

namespace hybgen {

std::string html_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string grouped_count(double value) {
  char digits[64];
  std::snprintf(digits, sizeof digits, "%.0f", std::fabs(value));
  const std::string plain = digits;
  std::string out = value <= -0.5 ? "-" : "";
  for (std::size_t i = 0; i < plain.size(); ++i) {
    if (i > 0 && (plain.size() - i) % 3 == 0) out += ',';
    out += plain[i];
  }
  return out;
}

namespace {

// `value` divided by the largest power of `base` not above it, with that
// power's unit: three significant digits, so columns stay short.
std::string scaled(double value, double base, const char* const units[], int unit_count) {
  int unit = 0;
  while (unit + 1 < unit_count && std::fabs(value) >= base) {
    value /= base;
    ++unit;
  }
  char text[64];
  const char* format = std::fabs(value) >= 100 || unit == 0 ? "%.0f %s" : std::fabs(value) >= 10 ? "%.1f %s" : "%.2f %s";
  std::snprintf(text, sizeof text, format, value, units[unit]);
  return text;
}

}  // namespace

std::string human_bytes(double bytes) {
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  return scaled(bytes, 1024, units, 5);
}

std::string human_count(double value) {
  static const char* const units[] = {"", "k", "M", "G", "T", "P"};
  std::string text = scaled(value, 1000, units, 6);
  if (text.back() == ' ') text.pop_back();  // no prefix: "640", not "640 "
  return text;
}

}  // namespace hybgen
