// numpy .npy reader/writer: magic "\x93NUMPY", version, header length, a
// Python dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (..)},
// then C-order data. The reader treats the file as untrusted: every length is
// checked against the file before data is read.
#include "io/npy.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <regex>

#include "io/file_util.h"
#include "ir/error.h"

namespace hybgen {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicBytes = 6;

// The integers of a Python tuple body such as "2, 3" or "5," or "" (a scalar).
Shape parse_shape_tuple(const std::string& body, const std::string& path) {
  Shape shape;
  std::size_t pos = 0;
  const auto skip_space = [&] {
    while (pos < body.size() && (body[pos] == ' ' || body[pos] == '\t')) ++pos;
  };
  for (skip_space(); pos < body.size(); skip_space()) {
    if (body[pos] < '0' || body[pos] > '9')
      throw Error(path + ": shape (" + body + ") must hold non-negative integers");
    int64_t d = 0;
    for (; pos < body.size() && body[pos] >= '0' && body[pos] <= '9'; ++pos) {
      if (d > (INT64_MAX - 9) / 10) throw Error(path + ": shape (" + body + ") has a dimension too large");
      d = d * 10 + (body[pos] - '0');
    }
    shape.push_back(d);
    skip_space();
    if (pos < body.size() && body[pos] != ',') throw Error(path + ": shape (" + body + ") is not a tuple of integers");
    ++pos;
  }
  return shape;
}

}  // namespace

NpyArray read_npy(const std::string& path) {
  const std::vector<uint8_t> bytes = read_file_bytes(path);
  if (bytes.size() < kMagicBytes || std::memcmp(bytes.data(), kMagic, kMagicBytes) != 0)
    throw Error(path + ": not a .npy file (bad magic)");
  if (bytes.size() < 10) throw Error(path + ": truncated header (" + std::to_string(bytes.size()) + " bytes)");
  const int major = bytes[6];
  std::size_t header_len = 0, start = 0;
  if (major == 1) {
    header_len = bytes[8] | (bytes[9] << 8);
    start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw Error(path + ": truncated header (" + std::to_string(bytes.size()) + " bytes)");
    header_len = bytes[8] | (bytes[9] << 8) | (bytes[10] << 16) | (static_cast<std::size_t>(bytes[11]) << 24);
    start = 12;
  } else {
    throw Error(path + ": unsupported .npy version " + std::to_string(major) + "." + std::to_string(bytes[7]) +
                " (1.0, 2.0 and 3.0 are read)");
  }
  if (header_len > bytes.size() - start)
    throw Error(path + ": truncated header: it claims " + std::to_string(header_len) + " bytes, the file has " +
                std::to_string(bytes.size() - start) + " after the preamble");
  const std::string header(bytes.begin() + static_cast<long>(start), bytes.begin() + static_cast<long>(start + header_len));

  std::smatch m;
  if (!std::regex_search(header, m, std::regex("'descr'\\s*:\\s*'([^']*)'")))
    throw Error(path + ": header has no 'descr' string (structured arrays are not supported): " + header);
  const std::string descr = m[1];
  if (descr != "<f4" && descr != "<f8")
    throw Error(path + ": dtype '" + descr + "' is not supported (float32 '<f4' or float64 '<f8'; convert with "
                "a.astype(np.float32))");
  if (!std::regex_search(header, m, std::regex("'fortran_order'\\s*:\\s*(True|False)")))
    throw Error(path + ": header has no 'fortran_order': " + header);
  if (m[1] == "True")
    throw Error(path + ": Fortran-order arrays are not supported (save with np.ascontiguousarray)");
  if (!std::regex_search(header, m, std::regex("'shape'\\s*:\\s*\\(([^)]*)\\)")))
    throw Error(path + ": header has no 'shape': " + header);
  NpyArray array;
  array.shape = parse_shape_tuple(m[1], path);

  const std::size_t element = descr == "<f8" ? 8 : 4;
  const std::size_t data_start = start + header_len;
  const std::size_t available = bytes.size() - data_start;
  const std::optional<uint64_t> needed = checked_bytes(array.shape, element);
  if (!needed || *needed > available)
    throw Error(path + ": truncated data: " + std::to_string(available) + " bytes for " + descr + " of shape " +
                shape_str(array.shape) + ", expected " + (needed ? std::to_string(*needed) : "more than 2^64"));
  const auto count = static_cast<std::size_t>(*needed / element);
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

void write_npy(const std::string& path, const NpyArray& array) {
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
  write_file_atomic(path, out);
}

}  // namespace hybgen
