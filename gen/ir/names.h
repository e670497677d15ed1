// How names read from model files reach messages and generated text. A name
// may hold anything (newlines, quotes, "*/", bytes that are not UTF-8); it
// must never change generated code beyond a comment, nor forge a line of a
// message.
//
//   throw Error("weight " + quoted_name(name) + " is missing");   // 'a\nb'
//   code += "// " + comment_text(node.name) + "\n";          // safe in // and /* */
//   if (!is_valid_utf8(name)) ...                             // JSON cannot hold it
#pragma once

#include <string>

namespace hybgen {

// `name` for a message: control characters, backslashes and bytes that are not
// UTF-8 written as escapes (\n, \t, \\, \xNN); longer than kMaxShownNameBytes,
// cut and marked with how long it was.
std::string printable_name(const std::string& name);
// printable_name in single quotes, the way messages name things.
std::string quoted_name(const std::string& name);

// `text` for a C/C++/CUDA comment: printable ASCII only, with '\', '?', '*'
// and every other byte written as \xNN, so no line splice, trigraph, comment
// end or newline can come out of it; cut like printable_name.
std::string comment_text(const std::string& text);

bool is_valid_utf8(const std::string& text);

constexpr std::size_t kMaxShownNameBytes = 160;

}  // namespace hybgen
