// templates/kernels/gemm.inc and the generator's packing (emit/gemm_pack.h).
// Unit part: the panel layouts, the target table and its agreement with the
// #if branches of gemm.inc. Codegen part: a C++11 driver including the kernel
// text (inside a namespace, as generated code does) is compiled with the
// strict flags for this machine, for baseline x86-64 (the portable path, with
// GNU vectors and with plain loops), for x86-64-v3 (AVX2), under
// AddressSanitizer, and for AArch64 NEON under qemu where a cross compiler is
// installed. It reads operands packed here by the tool's functions and checks
// both kernels, with and without an epilogue, against a double-precision
// triple loop on shapes with every kind of tail:
// |got - expected| <= 1e-5 * (sum of |terms|).
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "ops/gemm_pack.h"
#include "emit/templates.h"
#include "io/file_util.h"
#include "ir/error.h"
#include "kernel_driver_support.h"
#include "run_command.h"

namespace hybgen {
namespace {

using testing::quoted;
using testing::native_target;
using testing::put;
using testing::run_command;
using testing::SeededFloats;

TEST(GemmPack, BPanelsAreKMajorAndZeroPadded) {
  const long k = 3, n = 5, nr = 4;
  std::vector<float> b(k * n);
  for (long i = 0; i < k * n; ++i) b[i] = static_cast<float>(i + 1);
  const std::vector<float> p = pack_b_panels(b.data(), k, n, nr);
  ASSERT_EQ(p.size(), static_cast<size_t>(2 * nr * k));
  for (long pi = 0; pi < 2; ++pi)
    for (long kk = 0; kk < k; ++kk)
      for (long j = 0; j < nr; ++j) {
        const long col = pi * nr + j;
        EXPECT_EQ(p[(pi * k + kk) * nr + j], col < n ? b[kk * n + col] : 0.0f) << pi << " " << kk << " " << j;
      }
}

TEST(GemmPack, WTransposedEqualsPackingTheTranspose) {
  for (long n : {1, 7, 16, 33})
    for (long k : {1, 5, 17}) {
      std::vector<float> w(n * k), wt(k * n);
      for (long i = 0; i < n * k; ++i) w[i] = static_cast<float>(i * 3 % 29) - 14.0f;
      for (long r = 0; r < n; ++r)
        for (long c = 0; c < k; ++c) wt[c * n + r] = w[r * k + c];
      for (long nr : {4, 8, 16})
        EXPECT_EQ(pack_w_transposed_panels(w.data(), n, k, nr), pack_b_panels(wt.data(), k, n, nr));
    }
}

TEST(GemmPack, APanelsAreKMajorAndZeroPadded) {
  const long m = 5, k = 3, mr = 4;
  std::vector<float> a(m * k);
  for (long i = 0; i < m * k; ++i) a[i] = static_cast<float>(i + 1);
  const std::vector<float> p = pack_a_panels(a.data(), m, k, mr);
  ASSERT_EQ(p.size(), static_cast<size_t>(2 * mr * k));
  for (long pi = 0; pi < 2; ++pi)
    for (long kk = 0; kk < k; ++kk)
      for (long i = 0; i < mr; ++i) {
        const long row = pi * mr + i;
        EXPECT_EQ(p[(pi * k + kk) * mr + i], row < m ? a[row * k + kk] : 0.0f);
      }
}

TEST(GemmPack, UnknownTargetAndBadDimensionsAreErrors) {
  EXPECT_THROW(find_target("pentium"), Error);
  EXPECT_THROW(find_target(""), Error);
  EXPECT_THROW(pack_b_panels(nullptr, 2, 2, 0), Error);
  EXPECT_THROW(pack_a_panels(nullptr, -1, 2, 4), Error);
  const std::vector<float> w(9, 1.0f);
  EXPECT_THROW(pack_winograd(w.data(), 1, 1, 16, 3), Error);
}

// simd.inc defines HG_GEMM_NR / HG_GEMM_MR once per ISA section, in the
// order AVX-512, AVX2+FMA, NEON, Helium, Cortex-M scalar, portable; the
// generator's table must agree.
TEST(GemmPack, TargetTableMatchesTheKernelBranches) {
  const std::string& text = template_text("kernels/simd");
  std::vector<int> nr, mr;
  const std::regex define(R"(#define HG_GEMM_(NR|MR) (\d+))");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), define); it != std::sregex_iterator(); ++it)
    ((*it)[1] == "NR" ? nr : mr).push_back(std::stoi((*it)[2]));
  const std::vector<Isa> branches = {Isa::kAvx512, Isa::kAvx2,    Isa::kNeon,
                                     Isa::kHelium, Isa::kCortexM, Isa::kPortable};
  ASSERT_EQ(nr.size(), branches.size());
  ASSERT_EQ(mr.size(), branches.size());
  int cpp_targets = 0;
  for (const Target& t : all_targets()) {
    if (t.backend != Backend::kCpp) continue;
    ++cpp_targets;
    const std::size_t i = std::find(branches.begin(), branches.end(), t.isa) - branches.begin();
    ASSERT_LT(i, branches.size()) << t.name;
    EXPECT_EQ(t.gemm_nr, nr[i]) << t.name;
    EXPECT_EQ(t.gemm_mr, mr[i]) << t.name;
  }
  EXPECT_EQ(cpp_targets, 9);
}

// The driver: `program info` prints NR and MR; `program DATA` runs every
// case of the file through the kernels and checks the results.
const char* kGemmDriver = R"DRV(#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>
#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#elif defined(__ARM_NEON)
#include <arm_neon.h>
#endif

// Every product is split over the test pool, however small.
#define HG_GEMM_PARALLEL_MIN_FLOPS 1.0

// As in generated code: the kernel text inside the model's namespace.
namespace model {
namespace kernels {
#include "simd.inc"
#include "epilogue.inc"
#include "parallel.inc"
#include "gemm.inc"
}  // namespace kernels
}  // namespace model

#include "driver_support.h"

namespace {

const float kUntouched = 777.0f;

// A pool that runs the parts on this thread, last first: a split that
// misses, repeats or overlaps parts changes the result.
void reverse_parallel_for(void*, long count, void (*task)(void*, long), void* context) {
  for (long i = count; i-- > 0;) task(context, i);
}

long g_values = 0, g_failures = 0;
double g_max_err = 0;

// The double-precision product A * B and the sum of its terms' magnitudes,
// per element of C (r * n + j): computed once per case, for every epilogue.
struct Exact {
  std::vector<double> sum, scale;
};
Exact exact_product(long m, long n, long k, const std::vector<float>& a, const std::vector<float>& b) {
  Exact e;
  e.sum.resize(static_cast<size_t>(m * n));
  e.scale.resize(static_cast<size_t>(m * n));
  for (long r = 0; r < m; ++r)
    for (long j = 0; j < n; ++j) {
      double sum = 0, scale = 0;
      for (long kk = 0; kk < k; ++kk) {
        const double t = static_cast<double>(a[static_cast<size_t>(r * k + kk)]) * b[static_cast<size_t>(kk * n + j)];
        sum += t;
        scale += std::fabs(t);
      }
      e.sum[static_cast<size_t>(r * n + j)] = sum;
      e.scale[static_cast<size_t>(r * n + j)] = scale;
    }
  return e;
}

// kind 0: C = A * B + bias[col] (packed B); kind 1: bias[row] (packed A).
// Epilogue 0: none; 1: the lambda below (channel and index operands, relu);
// 2: HgClampEpilogue(-0.3, 0.4); 3: HgReluEpilogue; 4: HgScaleEpilogue(0.75);
// 5: hg_add_epilogue(residual, HgReluEpilogue()); 2 to 5 are applied to whole
// vectors in registers on the SIMD paths.
const int kEpilogues = 6;
void check(long id, long kind, int epilogue, long m, long n, long k, long ldc, const std::vector<float>& c,
           const Exact& exact, const std::vector<float>& bias) {
  for (long r = 0; r < m; ++r)
    for (long j = 0; j < ldc; ++j) {
      const float got = c[static_cast<size_t>(r * ldc + j)];
      if (j >= n) {
        if (got != kUntouched) {
          if (++g_failures < 20) std::printf("FAIL case %ld: wrote padding C[%ld][%ld]\n", id, r, j);
        }
        continue;
      }
      double sum = exact.sum[static_cast<size_t>(r * n + j)], scale = exact.scale[static_cast<size_t>(r * n + j)];
      const long ch = kind == 0 ? j : r;
      if (!bias.empty()) {
        sum += bias[static_cast<size_t>(ch)];
        scale += std::fabs(bias[static_cast<size_t>(ch)]);
      }
      if (epilogue == 1) {
        const long idx = r * ldc + j;
        sum += static_cast<double>(channel_add(ch)) + residual(idx);
        scale += std::fabs(channel_add(ch)) + std::fabs(residual(idx));
        if (sum < 0) sum = 0;
      } else if (epilogue == 2) {
        sum = sum < -0.3 ? -0.3 : (sum > 0.4 ? 0.4 : sum);
      } else if (epilogue == 3) {
        sum = sum > 0 ? sum : 0;
      } else if (epilogue == 4) {
        sum *= 0.75;
        scale *= 0.75;
      } else if (epilogue == 5) {
        const long idx = r * ldc + j;
        sum += residual(idx);
        scale += std::fabs(residual(idx));
        if (sum < 0) sum = 0;
      }
      const double err = std::fabs(got - sum);
      const double rel = scale > 0 ? err / scale : err;
      if (rel > g_max_err) g_max_err = rel;
      ++g_values;
      if (!(err <= 1e-5 * scale)) {
        if (++g_failures < 20)
          std::printf("FAIL case %ld kind %ld m %ld n %ld k %ld epilogue %d: C[%ld][%ld] = %.9g, expected %.9g\n", id,
                      kind, m, n, k, epilogue, r, j, got, sum);
      }
    }
}

// One product through the kernel of its kind, with any epilogue.
struct Gemm {
  long kind;
  const float* runtime;
  long ld;
  const float* packed;
  const float* bias;
  float* c;
  long ldc, m, n, k;
  const model::kernels::hg_thread_pool* pool;
  template <class Epilogue>
  void run(const Epilogue& epilogue) const {
    if (kind == 0)
      model::kernels::hg_gemm_packed_b(runtime, ld, packed, bias, c, ldc, m, n, k, epilogue, pool);
    else
      model::kernels::hg_gemm_packed_a(packed, runtime, ld, bias, c, ldc, m, n, k, epilogue, pool);
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  if (argv[1][0] == 'i') {
    std::printf("NR %d MR %d\n", HG_GEMM_NR, HG_GEMM_MR);
    return 0;
  }
  Reader in = {std::fopen(argv[1], "rb"), true};
  if (!in.f) return 3;
  const long cases = in.value();
  for (long id = 0; id < cases && in.ok; ++id) {
    const long kind = in.value(), m = in.value(), n = in.value(), k = in.value();
    const long ld = in.value(), ldc = in.value(), has_bias = in.value();
    // packed-B: A (m x lda), packed B, B; packed-A: packed A, B (k x ldb), A.
    std::vector<float> runtime = in.floats(kind == 0 ? m * ld : k * ld);
    std::vector<float> packed = in.floats(in.value());
    std::vector<float> a = kind == 0 ? std::vector<float>() : in.floats(m * k);
    std::vector<float> b = kind == 0 ? in.floats(k * n) : std::vector<float>();
    std::vector<float> bias = has_bias ? in.floats(kind == 0 ? n : m) : std::vector<float>();
    if (!in.ok) break;
    if (kind == 0) {  // the reference reads A and B densely
      a.resize(static_cast<size_t>(m * k));
      for (long r = 0; r < m; ++r)
        for (long kk = 0; kk < k; ++kk) a[static_cast<size_t>(r * k + kk)] = runtime[static_cast<size_t>(r * ld + kk)];
    } else {
      b.resize(static_cast<size_t>(k * n));
      for (long kk = 0; kk < k; ++kk)
        for (long j = 0; j < n; ++j) b[static_cast<size_t>(kk * n + j)] = runtime[static_cast<size_t>(kk * ld + j)];
    }
    const Exact exact = exact_product(m, n, k, a, b);
    const float* const bias_ptr = has_bias ? &bias[0] : 0;
    const float* const rt = runtime.empty() ? 0 : &runtime[0];
    const float* const pk = packed.empty() ? 0 : &packed[0];
    std::vector<float> residuals(static_cast<size_t>(m * ldc));
    for (size_t i = 0; i < residuals.size(); ++i) residuals[i] = residual(static_cast<long>(i));
    const auto lambda = [](long ch, long idx, float v) {
      const float r = v + channel_add(ch) + residual(idx);
      return r > 0.0f ? r : 0.0f;
    };
    for (int epilogue = 0; epilogue < kEpilogues; ++epilogue) {
      // Without a pool, then split into 3 and 7 parts: the same bits.
      std::vector<float> serial;
      const int pool_threads[] = {0, 3, 7};
      for (int threads : pool_threads) {
        const model::kernels::hg_thread_pool pool = {&reverse_parallel_for, 0, threads};
        const model::kernels::hg_thread_pool* const pp = threads ? &pool : 0;
        std::vector<float> c(static_cast<size_t>(m * ldc), kUntouched);
        float* const cp = &c[0];
        const Gemm gemm = {kind, rt, ld, pk, bias_ptr, cp, ldc, m, n, k, pp};
        switch (epilogue) {
          case 1: gemm.run(lambda); break;
          case 2: gemm.run(model::kernels::HgClampEpilogue(-0.3f, 0.4f)); break;
          case 3: gemm.run(model::kernels::HgReluEpilogue()); break;
          case 4: gemm.run(model::kernels::HgScaleEpilogue(0.75f)); break;
          case 5: gemm.run(model::kernels::hg_add_epilogue(&residuals[0], model::kernels::HgReluEpilogue())); break;
          default: gemm.run(model::kernels::HgNoEpilogue());
        }
        if (!threads) {
          check(id, kind, epilogue, m, n, k, ldc, c, exact, bias);
          serial = c;
        } else if (std::memcmp(&c[0], &serial[0], c.size() * sizeof(float)) != 0) {
          if (++g_failures < 20)
            std::printf("FAIL case %ld kind %ld m %ld n %ld k %ld: %d parts differ from one\n", id, kind, m, n, k,
                        threads);
        }
      }
    }
    if (id + 1 == cases) std::printf("RESULT cases %ld values %ld failures %ld max_rel_err %.3g\n", cases, g_values,
                                     g_failures, g_max_err);
  }
  if (!in.ok) std::printf("FAIL could not read %s\n", argv[1]);
  std::fclose(in.f);
  return in.ok && g_failures == 0 ? 0 : 1;
}
)DRV";

struct GemmCase {
  long kind, m, n, k;
};

std::vector<GemmCase> all_cases() {
  const long dims[] = {1, 2, 3, 7, 15, 16, 17, 31, 33, 64, 100};
  std::vector<GemmCase> cases;
  // Every tail against every other; at most one dimension of 64 or more (two
  // would be 60% of the multiply-adds and test no other edge), which the
  // larger cases below cover.
  for (long kind : {0, 1})
    for (long m : dims)
      for (long n : dims)
        for (long k : dims)
          if ((m >= 64) + (n >= 64) + (k >= 64) <= 1) cases.push_back({kind, m, n, k});
  // More than one k block (partial sums in C), more than one column block,
  // GEMV with a long k, k == 0 (bias only), and packed-A's narrow last
  // columns (1 to 8 past whole tiles of 48) beside full tiles and alone,
  // one such column after k blocks of 192 and 1 and of an odd 7.
  for (long kind : {0, 1})
    for (const GemmCase& c :
         {GemmCase{0, 37, 300, 530}, GemmCase{0, 1, 300, 530}, GemmCase{0, 29, 97, 257}, GemmCase{0, 20, 150, 600},
          GemmCase{0, 3, 5, 0}, GemmCase{0, 1, 4, 0}, GemmCase{0, 37, 49, 530}, GemmCase{0, 20, 104, 33},
          GemmCase{0, 9, 3, 300}, GemmCase{0, 17, 55, 200}, GemmCase{0, 37, 49, 385}, GemmCase{0, 13, 97, 7},
          // Row tails of 6, 10 and 11 (packed-B tiles of 12 rows: 4+2, 8+2, 8+2+1).
          GemmCase{0, 6, 17, 9}, GemmCase{0, 46, 33, 20}, GemmCase{0, 11, 40, 70}})
      cases.push_back({kind, c.m, c.n, c.k});
  return cases;
}

// Random operands; the constant one packed by the tool for panels nr / mr.
void write_cases(const std::string& path, const std::vector<GemmCase>& cases, long nr, long mr) {
  std::ofstream out(path, std::ios::binary);
  SeededFloats random(1234);
  put(out, static_cast<long>(cases.size()));
  for (size_t id = 0; id < cases.size(); ++id) {
    const GemmCase& c = cases[id];
    const long extra = id % 3 == 1 ? 5 : 0;  // row strides beyond the width
    const long ldc = c.n + (id % 2 ? 3 : 0);
    const bool has_bias = id % 4 != 3;
    if (c.kind == 0) {
      const long lda = c.k + extra;
      const std::vector<float> a = random(c.m * lda), b = random(c.k * c.n);
      std::vector<float> packed;
      if (id % 2) {
        packed = pack_b_panels(b.data(), c.k, c.n, nr);
      } else {  // as a dense layer: W = B^T
        std::vector<float> w(static_cast<size_t>(c.n * c.k));
        for (long kk = 0; kk < c.k; ++kk)
          for (long j = 0; j < c.n; ++j) w[j * c.k + kk] = b[kk * c.n + j];
        packed = pack_w_transposed_panels(w.data(), c.n, c.k, nr);
      }
      for (long v : {c.kind, c.m, c.n, c.k, lda, ldc, static_cast<long>(has_bias)}) put(out, v);
      put(out, a);
      put(out, static_cast<long>(packed.size()));
      put(out, packed);
      put(out, b);
      if (has_bias) put(out, random(c.n));
    } else {
      const long ldb = c.n + extra;
      const std::vector<float> a = random(c.m * c.k), b = random(c.k * ldb);
      const std::vector<float> packed = pack_a_panels(a.data(), c.m, c.k, mr);
      for (long v : {c.kind, c.m, c.n, c.k, ldb, ldc, static_cast<long>(has_bias)}) put(out, v);
      put(out, b);
      put(out, static_cast<long>(packed.size()));
      put(out, packed);
      put(out, a);
      if (has_bias) put(out, random(c.m));
    }
  }
}

bool host_has_avx2_fma() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

// Builds the driver with `cxx` and `flags`, runs it (through `runner`, e.g.
// an emulator, when not empty) on cases packed for `target`.
void check_gemm_kernels(const std::string& cxx, const std::string& flags, const std::string& target,
                        const std::string& runner = "") {
  TempDir dir("hybgen-gemm-test");
  const std::string d = dir.path() + "/";
  std::ofstream(d + "simd.inc") << template_text("kernels/simd");
  std::ofstream(d + "epilogue.inc") << template_text("kernels/epilogue");
  std::ofstream(d + "parallel.inc") << template_text("kernels/parallel");
  std::ofstream(d + "gemm.inc") << template_text("kernels/gemm");
  std::ofstream(d + "driver_support.h") << testing::kKernelDriverSupport;
  std::ofstream(d + "main.cpp") << kGemmDriver;
  auto r = testing::compile_driver(dir.path(), cxx, flags);
  ASSERT_EQ(r.exit_code, 0) << flags << "\n" << r.output;
  const std::string run = testing::driver_command(dir.path(), runner);

  r = run_command(run + " info");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string expected =
      "NR " + std::to_string(find_target(target).gemm_nr) + " MR " + std::to_string(find_target(target).gemm_mr) + "\n";
  ASSERT_EQ(r.output, expected) << flags << " should use the panels of " << target;

  const std::vector<GemmCase> cases = all_cases();
  write_cases(d + "cases.bin", cases, find_target(target).gemm_nr, find_target(target).gemm_mr);
  r = run_command(run + " " + quoted(d + "cases.bin"));
  EXPECT_EQ(r.exit_code, 0) << flags << "\n" << r.output;
  EXPECT_NE(r.output.find("RESULT cases " + std::to_string(cases.size()) + " "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(" failures 0 "), std::string::npos) << r.output;
}

// Whether `cxx` compiles and links a trivial program with `flags`.
bool compiler_accepts(const std::string& cxx, const std::string& flags) {
  TempDir dir("hybgen-gemm-flag");
  std::ofstream(dir.path() + "/t.cpp") << "int main() { return 0; }\n";
  return run_command(quoted(cxx) + " " + flags + " " + quoted(dir.path() + "/t.cpp") + " -o " +
                     quoted(dir.path() + "/t"))
             .exit_code == 0;
}

TEST(GemmKernel, NativeMatchesReference) {
  const std::string repeats = testing::native_repeats_an_explicit_path();
  if (!repeats.empty()) GTEST_SKIP() << repeats;
  check_gemm_kernels(HYBGEN_CXX, "-O1 -march=native", native_target());
}

TEST(GemmKernel, PortablePathMatchesReference) {
#if defined(__x86_64__)
  check_gemm_kernels(HYBGEN_CXX, "-O1 -march=x86-64", "generic");
#else
  GTEST_SKIP() << "the portable path is forced with -march=x86-64 on x86-64 hosts only";
#endif
}

// What compilers without GNU vector extensions get on the portable path.
TEST(GemmKernel, PortablePlainLoopsMatchReference) {
#if defined(__x86_64__)
  check_gemm_kernels(HYBGEN_CXX, "-O1 -march=x86-64 -DHG_GEMM_PLAIN_LOOPS", "generic");
#else
  GTEST_SKIP() << "the portable path is forced with -march=x86-64 on x86-64 hosts only";
#endif
}

TEST(GemmKernel, Avx2PathMatchesReference) {
  if (!host_has_avx2_fma()) GTEST_SKIP() << "no AVX2+FMA here";
  if (!compiler_accepts(HYBGEN_CXX, "-march=x86-64-v3")) GTEST_SKIP() << "the compiler does not know -march=x86-64-v3";
  check_gemm_kernels(HYBGEN_CXX, "-O1 -march=x86-64-v3", "x86-64-v3");
}

// Out-of-bounds reads in the edge handling (bias, panels, rows past the
// end) do not change results; AddressSanitizer sees them.
TEST(GemmKernel, NativeCleanUnderSanitizers) {
  const std::string flags = "-O1 -march=native -fsanitize=address,undefined -fno-sanitize-recover=all";
  if (!compiler_accepts(HYBGEN_CXX, flags)) GTEST_SKIP() << "no sanitizers with this compiler";
  check_gemm_kernels(HYBGEN_CXX, flags, native_target());
}

// The NEON path, where an AArch64 cross compiler and qemu are installed.
TEST(GemmKernel, NeonPathMatchesReferenceUnderQemu) {
  if (!on_path("aarch64-linux-gnu-g++") || !on_path("qemu-aarch64"))
    GTEST_SKIP() << "needs aarch64-linux-gnu-g++ and qemu-aarch64";
  check_gemm_kernels("aarch64-linux-gnu-g++", "-O1 -static", "armv8-a", "qemu-aarch64");
}

}  // namespace
}  // namespace hybgen
