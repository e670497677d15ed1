// FNV-1a, 64 bits: the hash hybgen checks bytes with (a weights file against
// the code generated for it, a compiled graph against its cache entry). Not
// for anything adversarial.
//
//   uint64_t h = fnv1a64(blob.data(), blob.size());
//   uint64_t again = fnv1a64(more.data(), more.size(), h);  // continues the same hash
#pragma once

#include <cstddef>
#include <cstdint>

namespace hybgen {

constexpr uint64_t kFnv1a64Offset = 14695981039346656037ull;

inline uint64_t fnv1a64(const void* data, std::size_t size, uint64_t hash = kFnv1a64Offset) {
  const unsigned char* bytes = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < size; ++i) hash = (hash ^ bytes[i]) * 1099511628211ull;
  return hash;
}

}  // namespace hybgen
