// Test data: a .params file of one dense record in MXNet's V2 layout, bytes
// written as the format has them (little-endian), for the tests of the
// reader's dtype flags and of hostile dimensions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hybgen::testing {

// One record named `name` (as "arg:NAME"), of dtype flag `flag` (mshadow's:
// 0 float32), with these dims and `data` as its element bytes.
inline std::vector<uint8_t> mxnet_params_record(const std::string& name, uint32_t flag,
                                                const std::vector<uint64_t>& dims, const std::vector<uint8_t>& data) {
  std::vector<uint8_t> out;
  auto u32 = [&](uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
  };
  auto u64 = [&](uint64_t v) {
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
  };
  u64(0x112);       // the list's magic
  u64(0);           // reserved
  u64(1);           // one array
  u32(0xF993FAC9);  // V2
  u32(0);           // dense
  u32(static_cast<uint32_t>(dims.size()));
  for (uint64_t d : dims) u64(d);
  u32(1);  // cpu
  u32(0);
  u32(flag);
  out.insert(out.end(), data.begin(), data.end());
  const std::string key = "arg:" + name;
  u64(1);  // one name
  u64(key.size());
  for (char c : key) out.push_back(static_cast<uint8_t>(c));
  return out;
}

}  // namespace hybgen::testing
