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
  for (int64_t d : shape)
    if (d < 0) throw Error(where + ": shape " + shape_str(shape) + " has a negative dimension");
  // A zero dimension empties the tensor whatever the others claim.
  for (int64_t d : shape)
    if (d == 0) return 0;
  uint64_t elements = 1;
  for (int64_t d : shape) {
    const auto dim = static_cast<uint64_t>(d);
    if (elements > limits::kMaxTensorElements / dim)  // dim >= 1: the product would pass the limit
      throw Error(where + ": shape " + shape_str(shape) + " has more than " +
                  std::to_string(limits::kMaxTensorElements) + " elements, the limit per tensor");
    elements *= dim;
  }
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
