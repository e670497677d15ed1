// What the kernel tests (gemm, conv and pool kernel tests) share: the
// target -march=native builds for, the case-file writer and its seeded
// operands, compiling and running a driver, and the drivers' common C++11
// text: the prelude that includes the kernels, and "driver_support.h" beside
// them (the case-file reader, seeded values and the test epilogue's operands,
// a per-channel add and a residual read at the output index).
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "emit/templates.h"
#include "io/file_util.h"
#include "run_command.h"
#include "targets/toolchain.h"  // on_path: cross compilers, emulators

namespace hybgen::testing {

// The case files the drivers read (Reader below): longs as 64-bit
// integers, floats as they are, little-endian on the machines tested.
inline void put(std::ofstream& out, long v) {
  const long long x = v;
  out.write(reinterpret_cast<const char*>(&x), sizeof x);
}
inline void put(std::ofstream& out, const std::vector<float>& v) {
  out.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(float)));
}

// Seeded uniform floats in [-1, 1), `count` at a call: the case files' operands.
class SeededFloats {
 public:
  explicit SeededFloats(unsigned seed) : rng_(seed) {}
  std::vector<float> operator()(long count) {
    std::vector<float> v(static_cast<size_t>(count));
    for (auto& x : v) x = dist_(rng_);
    return v;
  }

 private:
  std::mt19937 rng_;
  std::uniform_real_distribution<float> dist_{-1.0f, 1.0f};
};

// The generator target whose panels -march=native code uses here: the
// kernels pick their path from __AVX512F__ alone, so this may differ from
// host_target() (which also wants AVX-512 BW and VL).
inline std::string native_target() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return "x86-64-v4";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "x86-64-v3";
  return "generic";
#elif defined(__aarch64__)
  return "armv8-a";
#else
  return "generic";
#endif
}

// Compiles DIR/main.cpp into DIR/driver with `cxx`: C++11 with the strict
// flags generated code is held to, then `flags`, DIR on the include path.
// The kernel tests pass -O1: a driver instantiates every kernel of its
// family for one ISA, which -O1 compiles in a fraction of -O2's time with the
// same intrinsics; the generated code that the op, zoo and model tests build
// runs the same kernels at -O2 and -O3.
inline CommandResult compile_driver(const std::string& dir, const std::string& cxx, const std::string& flags) {
  const std::string all_flags =
      " -std=c++11 " + flags + " -Wall -Wextra -Wpedantic -Werror -fno-exceptions -fno-rtti -I" + quoted(dir);
  return run_command(quoted(cxx) + all_flags + " " + quoted(dir + "/main.cpp") + " -o " + quoted(dir + "/driver"));
}

// The command that runs DIR/driver, through `runner` (an emulator) when given.
inline std::string driver_command(const std::string& dir, const std::string& runner) {
  return (runner.empty() ? "" : runner + " ") + quoted(dir + "/driver");
}

// The kernels (kernels.inc) inside the namespaces generated code puts them
// in: what both kinds of driver below include after their headers.
inline const char* kKernelsInNamespaces = R"PRELUDE(
namespace model {
namespace kernels {
#include "kernels.inc"
}  // namespace kernels
}  // namespace model
)PRELUDE";

// What a kernel-text driver (check_kernel_driver) opens with: the
// intrinsics header where the target has it (before the namespaces, as
// generated code includes it), the standard headers, and the kernels
// (kernels.inc) inside the namespaces generated code puts them in.
inline const std::string kKernelTextPrelude = R"PRELUDE(#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>
)PRELUDE" + std::string(kKernelsInNamespaces);

// A kernel-text check: the `kernels` templates (templates/kernels/NAME.inc,
// in order, as kernels.inc) and kKernelTextPrelude with `driver` (as
// main.cpp) written into a fresh folder, the driver built
// with the strict flags at `optimize` for each (target, flags) pair and run:
// it must exit 0 and print "RESULT failures 0" (no digit after it).
inline void check_kernel_driver(const std::string& folder_prefix, const std::vector<std::string>& kernels,
                                const char* driver, const std::vector<std::pair<std::string, std::string>>& targets,
                                const std::string& optimize) {
  TempDir dir(folder_prefix);
  const std::string d = dir.path() + "/";
  std::ofstream text(d + "kernels.inc");
  for (const std::string& name : kernels) text << template_text("kernels/" + name) << "\n";
  text.close();
  std::ofstream(d + "main.cpp") << kKernelTextPrelude << "\n" << driver;
  for (const auto& [target, flags] : targets) {
    CommandResult r = compile_driver(dir.path(), HYBGEN_CXX, optimize + " " + flags);
    ASSERT_EQ(r.exit_code, 0) << target << "\n" << r.output;
    r = run_command(driver_command(dir.path(), ""));
    EXPECT_EQ(r.exit_code, 0) << target << "\n" << r.output;
    const std::size_t at = r.output.find("RESULT failures 0");
    const std::size_t next = at == std::string::npos ? at : at + 17;
    EXPECT_TRUE(at != std::string::npos && (next >= r.output.size() || !std::isdigit(r.output[next]))) << target << "\n"
                                                                                                       << r.output;
  }
}

// Whether this host runs code built for "avx2" (AVX2 and FMA) or "avx512"
// (AVX-512 F and BW).
inline bool host_supports(const std::string& feature) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return feature == "avx2" ? __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")
                           : __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
#else
  (void)feature;
  return false;
#endif
}

// Why a -march=native check would repeat another test here, or "" when it
// would not: on an x86-64 host, native code takes the AVX2 or AVX-512 branch
// of the kernels, which the explicit x86-64-v3 / x86-64-v4 tests already
// build and check on this host (the Native tests were a third of the suite's
// kernel-test time, all of it a second compile of the same branch).
inline std::string native_repeats_an_explicit_path() {
  const std::string native = native_target();
  if ((native == "x86-64-v3" && host_supports("avx2")) || (native == "x86-64-v4" && host_supports("avx512")))
    return "-march=native takes the " + native + " branch, which its own test checks on this host";
  return "";
}

inline const char* kKernelDriverSupport = R"SUPPORT(#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

// A copy of `values` between two pages that cannot be read, ending where the
// second starts (at_end) or starting where the first ends: a kernel that
// reads past its input's end or before its start faults.
class GuardedFloats {
 public:
  GuardedFloats(const std::vector<float>& values, bool at_end) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE)), bytes = values.size() * sizeof(float);
    const size_t inner = (bytes + page - 1) / page * page;
    size_ = inner + 2 * page;
    void* const base = mmap(0, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) {
      std::printf("FAIL mmap\n");
      std::exit(1);
    }
    base_ = static_cast<char*>(base);
    if (mprotect(base_, page, PROT_NONE) != 0 || mprotect(base_ + page + inner, page, PROT_NONE) != 0) {
      std::printf("FAIL mprotect\n");
      std::exit(1);
    }
    data_ = reinterpret_cast<float*>(at_end ? base_ + page + inner - bytes : base_ + page);
    if (bytes > 0) std::memcpy(data_, &values[0], bytes);
  }
  ~GuardedFloats() { munmap(base_, size_); }
  const float* data() const { return data_; }

 private:
  GuardedFloats(const GuardedFloats&);
  GuardedFloats& operator=(const GuardedFloats&);
  char* base_;
  size_t size_;
  float* data_;
};

struct Reader {
  std::FILE* f;
  bool ok;
  long value() {
    long long v = 0;
    ok = ok && std::fread(&v, sizeof v, 1, f) == 1;
    return static_cast<long>(v);
  }
  std::vector<float> floats(long n) {
    std::vector<float> v(static_cast<size_t>(n > 0 ? n : 0));
    if (n > 0) ok = ok && std::fread(&v[0], sizeof(float), v.size(), f) == v.size();
    return v;
  }
};

// Seeded values in [-1, 1): the drivers' own operands.
unsigned g_seed = 12345;
inline float random_value() {
  g_seed = g_seed * 1103515245u + 12345u;
  return static_cast<float>((g_seed >> 8) & 0xffff) / 32768.0f - 1.0f;
}

inline float channel_add(long ch) { return static_cast<float>((ch * 7) % 11 - 5) * 0.125f; }
inline float residual(long idx) { return static_cast<float>((idx * 13) % 17 - 8) * 0.0625f; }

}  // namespace
)SUPPORT";

// What a kernel driver opens with: the intrinsics headers, the kernels' text
// (kernels.inc) inside the namespaces generated code puts it in, and
// kKernelDriverSupport (driver_support.h).
inline const std::string kKernelDriverPrelude = R"PRELUDE(#include <cmath>
#include <cstdio>
#include <vector>
#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#elif defined(__ARM_NEON)
#include <arm_neon.h>
#endif
)PRELUDE" + std::string(kKernelsInNamespaces) + "\n#include \"driver_support.h\"\n\n";

// Writes a kernel driver into DIR: kernels.inc (`kernels`, the kernel
// templates' text), driver_support.h and main.cpp (the prelude, then `body`).
inline void write_kernel_driver(const std::string& dir, const std::string& kernels, const char* body) {
  std::ofstream(dir + "/kernels.inc") << kernels;
  std::ofstream(dir + "/driver_support.h") << kKernelDriverSupport;
  std::ofstream(dir + "/main.cpp") << kKernelDriverPrelude << body;
}

}  // namespace hybgen::testing
