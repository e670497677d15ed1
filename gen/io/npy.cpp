// numpy .npy reader/writer: magic "\x93NUMPY", version, header length, a
// Python dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (..)},
// then C-order data.
#include "io/npy.h"

#include <cstring>
#include <regex>

#include "io/file_util.h"
#include "ir/error.h"

namespace hybgen {

NpyArray read_npy(const std::string& path) {
  const std::vector<uint8_t> bytes = read_file_bytes(path);
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0)
    throw Error(path + ": not a .npy file (bad magic)");
  const int major = bytes[6];
  std::size_t header_len = 0, start = 0;
  if (major == 1) {
    header_len = bytes[8] | (bytes[9] << 8);
    start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw Error(path + ": truncated header");
    header_len = bytes[8] | (bytes[9] << 8) | (bytes[10] << 16) | (static_cast<std::size_t>(bytes[11]) << 24);
    start = 12;
  } else {
    throw Error(path + ": unsupported .npy version " + std::to_string(major));
  }
  if (start + header_len > bytes.size()) throw Error(path + ": truncated header");
  const std::string header(bytes.begin() + static_cast<long>(start), bytes.begin() + static_cast<long>(start + header_len));

  std::smatch m;
  if (!std::regex_search(header, m, std::regex("'descr'\\s*:\\s*'([^']*)'")))
    throw Error(path + ": header has no 'descr'");
  const std::string descr = m[1];
  if (descr != "<f4" && descr != "<f8" && descr != "|f4")
    throw Error(path + ": dtype " + descr + " is not supported (float32 '<f4' or float64 '<f8')");
  if (std::regex_search(header, m, std::regex("'fortran_order'\\s*:\\s*True")))
    throw Error(path + ": Fortran-order arrays are not supported (save with np.ascontiguousarray)");
  if (!std::regex_search(header, m, std::regex("'shape'\\s*:\\s*\\(([^)]*)\\)")))
    throw Error(path + ": header has no 'shape'");
  NpyArray array;
  const std::string dims = m[1];
  std::regex number("\\d+");
  for (auto it = std::sregex_iterator(dims.begin(), dims.end(), number); it != std::sregex_iterator(); ++it)
    array.shape.push_back(std::stoll(it->str()));

  const std::size_t element = descr == "<f8" ? 8 : 4;
  const auto count = static_cast<std::size_t>(num_elements(array.shape));
  const std::size_t data_start = start + header_len;
  if (bytes.size() - data_start < count * element)
    throw Error(path + ": truncated data: " + std::to_string(bytes.size() - data_start) + " bytes for shape " +
                shape_str(array.shape) + ", expected " + std::to_string(count * element));
  array.data.resize(count);
  for (std::size_t i = 0; i < count; ++i) {
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
  std::string shape = "(";
  for (std::size_t i = 0; i < array.shape.size(); ++i) shape += std::to_string(array.shape[i]) + (i + 1 < array.shape.size() || array.shape.size() == 1 ? "," : "");
  shape += ")";
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad so magic + version + length + header is a multiple of 64, ending in '\n'.
  const std::size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  out.append(reinterpret_cast<const char*>(array.data.data()), array.data.size() * sizeof(float));
  write_file_atomic(path, out);
}

}  // namespace hybgen
