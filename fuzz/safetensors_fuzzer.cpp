// .safetensors weights: parse_safetensors on the bytes; what it accepts must
// write back (serialize_safetensors) and read back the same.
#include <cstddef>
#include <cstdint>
#include <map>

#include "fuzz_common.h"
#include "io/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  using namespace hybgen;
  std::map<std::string, Constant> tensors;
  if (!fuzz::returns_or_errors("parse_safetensors",
                               [&] { tensors = parse_safetensors(fuzz::bytes_of(data, size), "fuzz.safetensors"); }))
    return 0;
  for (const auto& [name, c] : tensors)
    fuzz::check(c.data.size() == checked_bytes(c.type.shape, dtype_size(c.type.dtype)),
                "parse_safetensors returned data that disagrees with its shape");
  std::map<std::string, Constant> back;
  // The writer may refuse (an empty tensor has no data to write); when it
  // writes, the reader must read the same back.
  if (!fuzz::returns_or_errors("safetensors round trip", [&] {
        back = parse_safetensors(serialize_safetensors(tensors), "round-trip.safetensors");
      }))
    return 0;
  fuzz::check(back.size() == tensors.size(), "safetensors round trip lost tensors");
  for (const auto& [name, c] : tensors) {
    const auto it = back.find(name);
    fuzz::check(it != back.end() && it->second.type == c.type && it->second.data == c.data,
                "safetensors round trip changed a tensor");
  }
  return 0;
}
