#include "ir/limits.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "ir/error.h"

namespace hybgen {

uint64_t checked_tensor_bytes(const Shape& shape, std::size_t element_size, const std::string& where) {
  if (shape.size() > limits::kMaxRank)
    throw Error(where + ": " + std::to_string(shape.size()) + " dimensions, more than the limit of " +
                std::to_string(limits::kMaxRank));
  uint64_t elements = 1;
  for (int64_t d : shape) {
    if (d < 0) throw Error(where + ": shape " + shape_str(shape) + " has a negative dimension");
    const auto dim = static_cast<uint64_t>(d);
    // elements <= kMaxTensorElements < 2^31, so a dim above 2^33 overflows nothing before it is refused.
    if (dim != 0 && elements > limits::kMaxTensorElements / dim) {
      elements = limits::kMaxTensorElements + 1;
      continue;  // a later 0 still makes the tensor empty
    }
    elements *= dim;
  }
  for (int64_t d : shape)
    if (d == 0) return 0;
  if (elements > limits::kMaxTensorElements)
    throw Error(where + ": shape " + shape_str(shape) + " has more than " + std::to_string(limits::kMaxTensorElements) +
                " elements, the limit per tensor");
  return elements * element_size;
}

void check_file_size(const std::string& path, uint64_t max_bytes) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) throw Error(path + ": cannot open: " + std::strerror(errno));
  if (S_ISDIR(info.st_mode)) throw Error(path + ": cannot open: " + std::strerror(EISDIR));
  if (!S_ISREG(info.st_mode)) throw Error(path + ": not a regular file (a device, FIFO or socket is not read)");
  if (static_cast<uint64_t>(info.st_size) > max_bytes)
    throw Error(path + ": " + std::to_string(info.st_size) + " bytes, more than the limit of " +
                std::to_string(max_bytes) + " for this kind of file");
}

}  // namespace hybgen
