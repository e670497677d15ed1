// numpy .npy reader/writer: magic "\x93NUMPY", version, header length, a
// Python dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (..)},
// then C-order data. The reader treats the bytes as untrusted: the header is
// read by a small hand-written parser (no regex: std::regex recurses per
// character and overflows the stack on a long field), every length is checked
// against the file before data is read, and values are cut short in messages.
#include "io/npy.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>

#include "io/file_util.h"
#include "ir/error.h"
#include "ir/limits.h"

namespace hybgen {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicBytes = 6;
// Tuples and lists nest at most this deep in a header (numpy writes 1 level;
// structured dtypes 2 or 3).
constexpr int kMaxHeaderDepth = 16;

// `text` for a message: at most 80 characters, then "...".
std::string excerpt(const std::string& text) {
  std::string out;
  for (char c : text.size() > 80 ? text.substr(0, 80) : text) {
    out += (c >= 0x20 && c < 0x7f) ? c : '?';
  }
  return text.size() > 80 ? out + "..." : out;
}

// One value of the header dict: what numpy writes (strings, True/False,
// integers, tuples of integers), plus what other writers may add (None,
// lists, nested tuples), so that a structured dtype is refused by name.
struct PyValue {
  enum Kind { kString, kBool, kNone, kInt, kTuple, kList } kind = kNone;
  std::string text;            // kString: the contents; every kind: its source text
  bool flag = false;           // kBool
  std::optional<int64_t> integer;  // kInt: the value; nullopt when it does not fit int64
  std::vector<PyValue> items;  // kTuple, kList
};

// Parses the header: '{' (KEY ':' VALUE ',')* [KEY ':' VALUE] '}' followed by
// whitespace only, with single- or double-quoted keys, spaces anywhere between
// tokens, and an optional trailing comma.
class HeaderParser {
 public:
  HeaderParser(const std::string& header, const std::string& source) : s_(header), source_(source) {}

  std::map<std::string, PyValue> parse_dict() {
    std::map<std::string, PyValue> dict;
    skip_space();
    expect('{', "'{' opening the header dict");
    skip_space();
    while (peek() != '}') {
      if (peek() != '\'' && peek() != '"') fail("a quoted key or '}'");
      const std::string key = parse_string();
      skip_space();
      expect(':', "':' after key '" + excerpt(key) + "'");
      skip_space();
      dict[key] = parse_value(1);  // a later duplicate wins, as in Python
      skip_space();
      if (peek() == ',') {
        ++pos_;
        skip_space();
      } else if (peek() != '}') {
        fail("',' or '}' after the value of '" + excerpt(key) + "'");
      }
    }
    ++pos_;
    skip_space();
    if (pos_ != s_.size()) fail("only spaces and a newline after the header dict");
    return dict;
  }

 private:
  // '\0' at the end: it is no token's first character, so every check fails there.
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
  }
  void expect(char c, const std::string& what) {
    if (peek() != c) fail(what);
    ++pos_;
  }
  [[noreturn]] void fail(const std::string& expected) const {
    const std::string found = pos_ < s_.size() ? "'" + excerpt(s_.substr(pos_, 20)) + "'" : "the end of the header";
    throw Error(source_ + ": malformed header at byte " + std::to_string(pos_) + ": expected " + expected +
                ", found " + found + " (header: " + excerpt(s_) + ")");
  }

  // A Python string literal in single or double quotes; a backslash takes the
  // next character as it is.
  std::string parse_string() {
    const char quote = s_[pos_++];
    std::string out;
    while (pos_ < s_.size() && s_[pos_] != quote) {
      if (s_[pos_] == '\\' && pos_ + 1 < s_.size()) ++pos_;
      if (s_[pos_] == '\n') fail("the closing quote of a string");
      out += s_[pos_++];
    }
    if (pos_ >= s_.size()) fail("the closing quote of a string");
    ++pos_;
    return out;
  }

  bool match_word(const char* word) {
    const std::size_t n = std::strlen(word);
    if (s_.compare(pos_, n, word) != 0) return false;
    const char next = pos_ + n < s_.size() ? s_[pos_ + n] : '\0';
    if ((next >= 'a' && next <= 'z') || (next >= 'A' && next <= 'Z') || (next >= '0' && next <= '9') || next == '_')
      return false;
    pos_ += n;
    return true;
  }

  PyValue parse_value(int depth) {
    const std::size_t begin = pos_;
    PyValue v;
    const char c = peek();
    if (c == '\'' || c == '"') {
      v.kind = PyValue::kString;
      v.text = parse_string();
      return v;
    }
    if (c == '(' || c == '[') {
      if (depth > kMaxHeaderDepth) fail("at most " + std::to_string(kMaxHeaderDepth) + " nested tuples or lists");
      const char close = c == '(' ? ')' : ']';
      v.kind = c == '(' ? PyValue::kTuple : PyValue::kList;
      ++pos_;
      skip_space();
      while (peek() != close) {
        v.items.push_back(parse_value(depth + 1));
        skip_space();
        if (peek() == ',') {
          ++pos_;
          skip_space();
        } else if (peek() != close) {
          fail(std::string("',' or '") + close + "' in a " + (close == ')' ? "tuple" : "list"));
        }
      }
      ++pos_;
    } else if (c == '-' || c == '+' || (c >= '0' && c <= '9')) {
      v.kind = PyValue::kInt;
      const bool negative = c == '-';
      if (c == '-' || c == '+') ++pos_;
      if (peek() < '0' || peek() > '9') fail("a digit");
      int64_t n = 0;
      bool overflow = false;
      for (; peek() >= '0' && peek() <= '9'; ++pos_) {
        if (n > (INT64_MAX - 9) / 10) overflow = true;
        if (!overflow) n = n * 10 + (peek() - '0');
      }
      if (peek() == 'L') ++pos_;  // Python 2's long, as numpy under Python 2 wrote shapes: (3L, 4L)
      if (!overflow) v.integer = negative ? -n : n;
    } else if (match_word("True") || match_word("False")) {
      v.kind = PyValue::kBool;
      v.flag = s_[begin] == 'T';
    } else if (match_word("None")) {
      v.kind = PyValue::kNone;
    } else {
      fail("a value (a string, True, False, None, an integer, a tuple or a list)");
    }
    v.text = s_.substr(begin, pos_ - begin);
    return v;
  }

  const std::string& s_;
  const std::string& source_;
  std::size_t pos_ = 0;
};

// The shape tuple's dimensions: non-negative integers that fit int64.
Shape shape_of(const PyValue& value, const std::string& source) {
  if (value.kind != PyValue::kTuple)
    throw Error(source + ": 'shape' is " + excerpt(value.text) + ", not a tuple of integers");
  Shape shape;
  for (const PyValue& d : value.items) {
    if (d.kind != PyValue::kInt) throw Error(source + ": shape " + excerpt(value.text) + " is not a tuple of integers");
    if (!d.integer) throw Error(source + ": shape " + excerpt(value.text) + " has a dimension too large");
    if (*d.integer < 0) throw Error(source + ": shape " + excerpt(value.text) + " must hold non-negative integers");
    shape.push_back(*d.integer);
  }
  return shape;
}

}  // namespace

NpyArray parse_npy(const std::vector<uint8_t>& bytes, const std::string& source) {
  if (bytes.size() < kMagicBytes || std::memcmp(bytes.data(), kMagic, kMagicBytes) != 0)
    throw Error(source + ": not a .npy file (bad magic)");
  if (bytes.size() < 10) throw Error(source + ": truncated header (" + std::to_string(bytes.size()) + " bytes)");
  const int major = bytes[6];
  std::size_t header_len = 0, start = 0;
  if (major == 1) {
    header_len = bytes[8] | (bytes[9] << 8);
    start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw Error(source + ": truncated header (" + std::to_string(bytes.size()) + " bytes)");
    header_len = bytes[8] | (bytes[9] << 8) | (bytes[10] << 16) | (static_cast<std::size_t>(bytes[11]) << 24);
    start = 12;
  } else {
    throw Error(source + ": unsupported .npy version " + std::to_string(major) + "." + std::to_string(bytes[7]) +
                " (1.0, 2.0 and 3.0 are read)");
  }
  if (header_len > bytes.size() - start)
    throw Error(source + ": truncated header: it claims " + std::to_string(header_len) + " bytes, the file has " +
                std::to_string(bytes.size() - start) + " after the preamble");
  const std::string header(bytes.begin() + static_cast<long>(start), bytes.begin() + static_cast<long>(start + header_len));

  const std::map<std::string, PyValue> dict = HeaderParser(header, source).parse_dict();
  const auto descr_it = dict.find("descr");
  if (descr_it == dict.end() || descr_it->second.kind != PyValue::kString)
    throw Error(source + ": header has no 'descr' string (structured arrays are not supported): " + excerpt(header));
  const std::string& descr = descr_it->second.text;
  if (descr != "<f4" && descr != "<f8")
    throw Error(source + ": dtype '" + excerpt(descr) + "' is not supported (float32 '<f4' or float64 '<f8'; convert with "
                "a.astype(np.float32))");
  const auto fortran_it = dict.find("fortran_order");
  if (fortran_it == dict.end() || fortran_it->second.kind != PyValue::kBool)
    throw Error(source + ": header has no 'fortran_order': " + excerpt(header));
  if (fortran_it->second.flag)
    throw Error(source + ": Fortran-order arrays are not supported (save with np.ascontiguousarray)");
  const auto shape_it = dict.find("shape");
  if (shape_it == dict.end()) throw Error(source + ": header has no 'shape': " + excerpt(header));
  NpyArray array;
  array.shape = shape_of(shape_it->second, source);

  const std::size_t element = descr == "<f8" ? 8 : 4;
  const std::size_t data_start = start + header_len;
  const std::size_t available = bytes.size() - data_start;
  // Against the file first (a lying shape says "truncated"), then against the
  // limits per tensor (rank, elements) before anything is allocated.
  // (Too many dimensions first, so that no message prints a huge shape.)
  if (array.shape.size() > limits::kMaxRank) (void)checked_tensor_bytes(array.shape, element, source);  // throws
  const std::optional<uint64_t> needed = checked_bytes(array.shape, element);
  if (!needed || *needed > available)
    throw Error(source + ": truncated data: " + std::to_string(available) + " bytes for " + descr + " of shape " +
                shape_str(array.shape) + ", expected " + (needed ? std::to_string(*needed) : "more than 2^64"));
  const uint64_t total = checked_tensor_bytes(array.shape, element, source);
  const auto count = static_cast<std::size_t>(total / element);
  array.data.resize(count);
  for (std::size_t i = 0; i < array.data.size(); ++i) {
    const uint8_t* p = bytes.data() + data_start + i * element;
    if (element == 4) {
      std::memcpy(&array.data[i], p, 4);
    } else {
      double v;
      std::memcpy(&v, p, 8);
      array.data[i] = static_cast<float>(v);
    }
  }
  return array;
}

NpyArray read_npy(const std::string& path) {
  return parse_npy(read_file_bytes(path), path);  // a regular file within kMaxDataFileBytes
}

std::string npy_bytes(const NpyArray& array, const std::string& path) {
  if (static_cast<int64_t>(array.data.size()) != num_elements(array.shape))
    throw Error(path + ": " + std::to_string(array.data.size()) + " values for shape " + shape_str(array.shape));
  // Python's tuple repr: "()", "(5,)", "(2, 3)".
  std::string shape = "(";
  for (std::size_t i = 0; i < array.shape.size(); ++i) shape += (i ? ", " : "") + std::to_string(array.shape[i]);
  shape += array.shape.size() == 1 ? ",)" : ")";
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
  // Byte for byte what np.save writes (numpy/lib/format.py): room for the
  // first dimension to grow to 21 digits, then spaces and '\n' so that magic +
  // version + length + header end on a 64-byte boundary (a full 64 when
  // already aligned, as numpy pads).
  if (!array.shape.empty()) header.append(21 - std::min<std::size_t>(21, std::to_string(array.shape[0]).size()), ' ');
  const std::size_t unpadded = 10 + header.size() + 1;
  header.append(64 - unpadded % 64, ' ');
  header += '\n';
  if (header.size() > 0xffff) throw Error(path + ": shape " + shape_str(array.shape) + " does not fit a .npy 1.0 header");
  std::string out(kMagic, kMagicBytes);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  out.append(reinterpret_cast<const char*>(array.data.data()), array.data.size() * sizeof(float));
  return out;
}

void write_npy(const std::string& path, const NpyArray& array) { write_file_atomic(path, npy_bytes(array, path)); }

}  // namespace hybgen
