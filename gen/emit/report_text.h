// Text helpers the HTML report and its arena chart share: escaping names for
// HTML/SVG, and numbers written for people (digit groups, binary units).
//
//   html_escape("a<b & \"c\"");   // "a&lt;b &amp; &quot;c&quot;"
//   grouped_count(4014080);       // "4,014,080"
//   human_bytes(4014080);         // "3.83 MiB"
#pragma once

#include <string>

namespace hybgen {

// Escapes &, <, >, " and ', so the text is safe in element content and in
// quoted attribute values alike.
std::string html_escape(const std::string& text);

// The value rounded to a whole number, with a comma between groups of three
// digits. Locale-free, so reports are byte-identical everywhere.
std::string grouped_count(double value);

// Bytes in B / KiB / MiB / GiB with three significant digits.
std::string human_bytes(double bytes);

// A count with an SI prefix and three significant digits: "1.82 G", "640 k".
std::string human_count(double value);

}  // namespace hybgen
