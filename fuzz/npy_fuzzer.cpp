// .npy arrays (hybgen verify --input/--expected): parse_npy on the bytes.
#include <cstddef>
#include <cstdint>

#include "fuzz_common.h"
#include "io/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  using namespace hybgen;
  NpyArray array;
  if (!fuzz::returns_or_errors("parse_npy", [&] { array = parse_npy(fuzz::bytes_of(data, size), "fuzz.npy"); }))
    return 0;
  fuzz::check(static_cast<int64_t>(array.data.size()) == num_elements(array.shape),
              "parse_npy returned data that disagrees with its shape");
  return 0;
}
