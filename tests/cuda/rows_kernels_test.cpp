// The CUDA kernels of the row-wise, pooling and depthwise ops
// (gen/ops/cuda/{norm,pool,depthwise}_kernels.cpp, templates/cuda/kernels/
// {softmax,layer_norm,batch_norm,reduce,reduce_common,pool,depthwise,
// depthwise_pointwise}.inc):
//  - the kernels' wrappers against plain CPU loops (programs/rows_kernels.cu)
//    on the cuda-host layer;
//  - end to end: each registry example (and edge cases) printed by the op's
//    registered CUDA printer into one driver with the kernel files pasted as
//    the emitter pastes them, run on the cuda-host layer on seeded random
//    data, within 1e-5 (max |diff| / max |ref|) of the op's reference kernel;
//  - both programs compile with nvcc for sm_80 and sm_90 (skipped without nvcc).
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "ops/op.h"
#include "ops/op_util.h"
#include "cuda_test_support.h"
#include "run_command.h"
#include "targets/target.h"

namespace hybgen::testing {
namespace {

namespace fs = std::filesystem;

const std::string kProgram = HYBGEN_SOURCE_DIR "/tests/cuda/programs/rows_kernels.cu";

// ---- the kernels against CPU loops ----

TEST(RowsKernels, WrappersMatchPlainLoopsOnTheCudaHostLayer) {
  const std::string dir = temp_dir("RowsKernels");
  fs::copy_file(kHeader, dir + "/cuda_runtime.h");
  const CommandResult built = run_command(q(HYBGEN_CXX) + " -std=c++17 -O1 -Wall -Wextra -Wpedantic -Werror -x c++ -I" +
                                          q(dir) + " " + q(kProgram) + " -o " + q(dir + "/rows"));
  ASSERT_EQ(built.exit_code, 0) << built.output;
  const CommandResult ran = run_command("timeout 60 " + q(dir + "/rows"));
  EXPECT_EQ(ran.exit_code, 0) << ran.output;
  EXPECT_EQ(ran.output, "OK\n");
  std::error_code ec;
  if (!::testing::Test::HasFailure()) fs::remove_all(dir, ec);
}

TEST(RowsKernels, WrappersCompileWithNvcc) {
  if (!on_path("nvcc")) GTEST_SKIP() << "nvcc is not on PATH";
  const std::string dir = temp_dir("RowsKernels");
  const CommandResult built =
      run_command("nvcc -std=c++17 -gencode 'arch=compute_80,code=[sm_80,sm_90]' -Werror all-warnings -c " +
                  q(kProgram) + " -o " + q(dir + "/rows.o"));
  EXPECT_EQ(built.exit_code, 0) << built.output;
  std::error_code ec;
  fs::remove_all(dir, ec);
}

// ---- the printers end to end ----

struct Case {
  std::string op;
  Attrs attrs;
  std::vector<Shape> inputs;
  std::string label;
  bool epilogue = false;  // with RowsTestEpilogue fused (ops with epilogue_axis)
};

struct Prepared {
  Case c;
  Attrs attrs;
  std::vector<TensorType> in, out;
  KernelCall call;
  int64_t scratch_floats = 0;
  std::vector<std::vector<float>> data, expected;
};

// The driver's test epilogue, on the reference's side.
float test_epilogue(int64_t channel, int64_t index, float v) {
  return v * 0.5f + static_cast<float>(channel) * 0.25f - static_cast<float>(index) * 1e-4f;
}
const char* const kEpilogueStruct = R"(
struct RowsTestEpilogue {
  __device__ float operator()(long channel, long index, float v) const {
    return v * 0.5f + static_cast<float>(channel) * 0.25f - static_cast<float>(index) * 1e-4f;
  }
};
)";

Prepared prepare(const Case& c, std::mt19937& rng) {
  const OpDef& def = find_op(c.op);
  Prepared p{c, normalize_attrs(def, c.attrs), {}, {}, {}, 0, {}, {}};
  for (const Shape& s : c.inputs) p.in.push_back(TensorType{s, DType::kFloat32});
  p.out = def.infer(p.attrs, p.in);
  for (std::size_t i = 0; i < p.in.size(); ++i) {
    const InputRange range = test_input_range(def.input_ranges, static_cast<int>(i));
    std::uniform_real_distribution<float> value(range.low, range.high);
    std::vector<float> v(static_cast<std::size_t>(p.in[i].num_elements()));
    for (float& f : v) f = value(rng);
    p.data.push_back(std::move(v));
  }
  for (const auto& t : p.out) p.expected.emplace_back(static_cast<std::size_t>(t.num_elements()));
  KernelIO io{p.attrs, {}, p.in, {}, p.out};
  for (const auto& v : p.data) io.in.push_back(v.data());
  for (auto& v : p.expected) io.out.push_back(v.data());
  def.reference(io);
  if (c.epilogue) {
    const Shape& s = p.out[0].shape;
    const int axis = normalize_axis(*def.epilogue_axis, s.size());
    const int64_t inner = dims_product(s, axis + 1, s.size());
    for (std::size_t i = 0; i < p.expected[0].size(); ++i) {
      const int64_t index = static_cast<int64_t>(i);
      p.expected[0][i] = test_epilogue(index / inner % s[axis], index, p.expected[0][i]);
    }
  }

  Node node{"node", def.name, p.attrs, {}, {}};
  std::vector<std::string> ins, outs;
  for (std::size_t i = 0; i < p.in.size(); ++i) ins.push_back("in" + std::to_string(i));
  for (std::size_t i = 0; i < p.out.size(); ++i) outs.push_back("out" + std::to_string(i));
  const OpKernel* kernel = find_kernel(Backend::kCuda, def.name);
  if (!kernel) throw std::runtime_error("no CUDA kernel for " + def.name);
  const Target& cuda = find_target("cuda");
  if (kernel->scratch_bytes)
    p.scratch_floats = (kernel->scratch_bytes(KernelSite{p.attrs, p.in, p.out, {}, cuda, ""}) + 3) / 4;
  const EmitContext ctx{node,
                        cuda,
                        ins,
                        p.in,
                        outs,
                        p.out,
                        c.epilogue ? "epilogue" : "",
                        {},
                        p.scratch_floats > 0 ? "scratch" : "",
                        {},
                        "pool",
                        p.scratch_floats * 4,
                        "stream"};
  p.call = kernel->emit(ctx);
  return p;
}

// The kernel files in the order the emitter pastes them: `// needs:` first.
void add_kernel(const std::string& name, std::vector<std::string>& order, std::set<std::string>& seen) {
  if (!seen.insert(name).second) return;
  const std::string text = read_text(kKernels + "/" + name + ".inc");
  const std::string needs = "// needs:";
  if (text.compare(0, needs.size(), needs) == 0) {
    std::istringstream words(text.substr(needs.size(), text.find('\n') - needs.size()));
    for (std::string w; words >> w;) add_kernel(w, order, seen);
  }
  order.push_back(name);
}

// Whether `code` names `name` (not as the prefix of a longer name).
bool names(const std::string& code, const std::string& name) {
  for (std::size_t at = code.find(name); at != std::string::npos; at = code.find(name, at + 1)) {
    const char next = at + name.size() < code.size() ? code[at + name.size()] : ' ';
    if (!std::isalnum(static_cast<unsigned char>(next)) && next != '_') return true;
  }
  return false;
}

// One program: case_N(stream, ins, outs, scratch) per case, and a main that
// reads DIR/case_N.bin (the inputs), runs each case and writes DIR/case_N.out.
std::string driver_source(const std::vector<Prepared>& cases) {
  std::vector<std::string> order;
  std::set<std::string> seen;
  add_kernel("common", order, seen);
  for (const auto& p : cases)
    for (const auto& k : p.call.kernels) add_kernel(k, order, seen);
  std::string s =
      "#include <cuda_runtime.h>\n#include <cmath>\n#include <cstdint>\n#include <cstdio>\n#include <vector>\n"
      "#define HG_CHECK(call) do { const cudaError_t e_ = (call); if (e_ != cudaSuccess) return e_; } while (0)\n"
      "namespace model { namespace kernels {\n";
  for (const auto& k : order) s += read_text(kKernels + "/" + k + ".inc") + "\n";
  s += std::string(kEpilogueStruct) +
       "}  // namespace kernels\n}  // namespace model\nusing namespace model::kernels;\n\n"
       "typedef cudaError_t (*CaseFn)(cudaStream_t, const float* const*, float* const*, float*);\n";
  for (std::size_t c = 0; c < cases.size(); ++c) {
    const Prepared& p = cases[c];
    const std::string& code = p.call.code;
    s += "// " + p.c.op + " " + p.c.label + "\nstatic cudaError_t case_" + std::to_string(c) +
         "(cudaStream_t stream, const float* const* ins, float* const* outs, float* scratch) {\n"
         "  (void)stream;\n  (void)ins;\n  (void)outs;\n  (void)scratch;\n";
    if (p.c.epilogue) s += "  const RowsTestEpilogue epilogue{};\n";
    for (std::size_t i = 0; i < p.in.size(); ++i)
      if (names(code, "in" + std::to_string(i)))
        s += "  const float* in" + std::to_string(i) + " = ins[" + std::to_string(i) + "];\n";
    for (std::size_t i = 0; i < p.out.size(); ++i)
      if (names(code, "out" + std::to_string(i)))
        s += "  float* out" + std::to_string(i) + " = outs[" + std::to_string(i) + "];\n";
    s += code + "\n  return cudaSuccess;\n}\n";
  }
  s += R"(
struct CaseInfo {
  CaseFn fn;
  std::vector<long> in, out;
  long scratch;
};

static int run_case(const char* dir, int index, const CaseInfo& info, cudaStream_t stream) {
  char path[4096];
  std::snprintf(path, sizeof path, "%s/case_%d.bin", dir, index);
  FILE* f = std::fopen(path, "rb");
  if (!f) return 2;
  std::vector<float*> ins, outs;
  for (long n : info.in) {
    std::vector<float> host(static_cast<size_t>(n));
    if (std::fread(host.data(), sizeof(float), host.size(), f) != host.size()) return 3;
    float* d = nullptr;
    if (cudaMalloc(&d, static_cast<size_t>(n) * sizeof(float)) != cudaSuccess) return 4;
    if (cudaMemcpy(d, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice) != cudaSuccess) return 5;
    ins.push_back(d);
  }
  std::fclose(f);
  for (long n : info.out) {
    float* d = nullptr;
    if (cudaMalloc(&d, static_cast<size_t>(n) * sizeof(float)) != cudaSuccess) return 4;
    if (cudaMemset(d, 0xff, static_cast<size_t>(n) * sizeof(float)) != cudaSuccess) return 5;  // NaN
    outs.push_back(d);
  }
  float* scratch = nullptr;
  if (info.scratch > 0 && cudaMalloc(&scratch, static_cast<size_t>(info.scratch) * sizeof(float)) != cudaSuccess)
    return 4;
  std::vector<const float*> cins(ins.begin(), ins.end());
  const cudaError_t e = info.fn(stream, cins.data(), outs.data(), scratch);
  if (e != cudaSuccess) {
    std::printf("case %d: %s\n", index, cudaGetErrorString(e));
    return 6;
  }
  if (cudaStreamSynchronize(stream) != cudaSuccess) return 7;
  std::snprintf(path, sizeof path, "%s/case_%d.out", dir, index);
  f = std::fopen(path, "wb");
  if (!f) return 8;
  for (size_t i = 0; i < info.out.size(); ++i) {
    std::vector<float> host(static_cast<size_t>(info.out[i]));
    if (cudaMemcpy(host.data(), outs[i], host.size() * sizeof(float), cudaMemcpyDeviceToHost) != cudaSuccess) return 9;
    std::fwrite(host.data(), sizeof(float), host.size(), f);
  }
  std::fclose(f);
  for (float* d : ins) cudaFree(d);
  for (float* d : outs) cudaFree(d);
  if (scratch) cudaFree(scratch);
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 2) return 1;
  cudaStream_t stream = nullptr;
  if (cudaStreamCreate(&stream) != cudaSuccess) return 1;
  const CaseInfo cases[] = {
)";
  for (std::size_t c = 0; c < cases.size(); ++c) {
    std::vector<int64_t> in, out;
    for (const auto& t : cases[c].in) in.push_back(t.num_elements());
    for (const auto& t : cases[c].out) out.push_back(t.num_elements());
    s += "      {case_" + std::to_string(c) + ", " + cpp_int_list(in) + ", " + cpp_int_list(out) + ", " +
         std::to_string(cases[c].scratch_floats) + "},\n";
  }
  s += R"(  };
  for (int i = 0; i < static_cast<int>(sizeof cases / sizeof cases[0]); ++i)
    if (int rc = run_case(argv[1], i, cases[i], stream)) {
      std::printf("case %d failed (%d)\n", i, rc);
      return 1;
    }
  cudaStreamDestroy(stream);
  std::printf("OK\n");
  return 0;
}
)";
  return s;
}

Attrs attrs(std::initializer_list<std::pair<const char*, AttrValue>> values) {
  Attrs a;
  for (const auto& [k, v] : values) a.set(k, v);
  return a;
}
using Ints = std::vector<int64_t>;

const std::vector<std::string> kOps = {"Pooling",   "softmax",   "log_softmax", "SoftmaxOutput",
                                       "SoftmaxActivation", "LayerNorm", "BatchNorm", "sum",
                                       "mean",      "_pointwise_depthwise_conv"};

// The registry's examples of every op of this family, and edge cases.
std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (const auto& op : kOps) {
    const OpDef& def = find_op(op);
    for (std::size_t e = 0; e < def.examples.size(); ++e) {
      if (!def.examples[e].input_types.empty()) continue;  // quantized: the CUDA kernels compute float32
      cases.push_back({op, def.examples[e].attrs, def.examples[e].inputs, "example " + std::to_string(e)});
    }
  }
  // Pooling: ResNet's stem max pool, a global average over a plane larger than a warp's share.
  cases.push_back({"Pooling",
                   attrs({{"pool_type", std::string("max")}, {"kernel", Ints{3, 3}}, {"stride", Ints{2, 2}},
                          {"pad", Ints{1, 1}}}),
                   {{2, 4, 28, 28}},
                   "stem"});
  cases.push_back({"Pooling", attrs({{"pool_type", std::string("avg")}, {"global_pool", true}}), {{1, 3, 60, 50}},
                   "global large"});
  // Rows long enough for the block kernels, and a wide inner axis.
  cases.push_back({"softmax", attrs({{"axis", int64_t{-1}}}), {{3, 1500}}, "long rows"});
  cases.push_back({"log_softmax", attrs({{"axis", int64_t{1}}}), {{2, 30, 70}}, "inner 70"});
  cases.push_back({"softmax", attrs({{"axis", int64_t{-1}}}), {{4, 8, 128}}, "attention"});
  cases.push_back({"LayerNorm", attrs({{"axis", int64_t{-1}}}), {{5, 2000}, {2000}, {2000}}, "long rows"});
  cases.push_back({"LayerNorm", attrs({{"axis", int64_t{-1}}}), {{7, 768}, {768}, {768}}, "768"});
  cases.push_back({"BatchNorm", attrs({{"fix_gamma", false}, {"eps", 1e-5}}), {{2, 5, 9, 9}, {5}, {5}, {5}, {5}}, "planes"});
  // sum / mean: every arrangement of kept and reduced runs, size-1 axes, a scalar.
  cases.push_back({"sum", attrs({{"axis", Ints{0, 2}}}), {{3, 4, 5, 6}}, "alternating"});
  cases.push_back({"mean", attrs({{"axis", Ints{2, 3}}, {"keepdims", true}}), {{2, 8, 7, 7}}, "spatial mean"});
  cases.push_back({"mean", attrs({{"axis", Ints{1}}}), {{4, 1, 6}}, "size-1 axis"});
  cases.push_back({"sum", attrs({{"axis", Ints{1}}}), {{3, 2000}}, "long rows"});
  cases.push_back({"sum", attrs({{"axis", Ints{0}}}), {{50, 70}}, "columns"});
  cases.push_back({"mean", Attrs{}, {{1000, 7}}, "all"});
  cases.push_back({"sum", attrs({{"axis", Ints{0, 2, 4, 6}}}), {{2, 3, 2, 3, 2, 3, 2, 3}}, "rank 8"});
  // _pointwise_depthwise_conv: a fused epilogue; a dilated filter too large
  // for the fused kernel (two launches through scratch); many input channels.
  auto pwdw = [](Ints kernel, int64_t mid, Ints stride, Ints pad, Ints dilate, const std::string& act) {
    Attrs a = attrs({{"kernel", kernel}, {"num_filter", mid}, {"stride", stride}, {"pad", pad}, {"dilate", dilate},
                     {"act_type", act}});
    return a;
  };
  cases.push_back({"_pointwise_depthwise_conv",
                   pwdw({3, 3}, 24, {1, 1}, {1, 1}, {}, "clip"),
                   {{2, 6, 15, 17}, {24, 6, 1, 1}, {24}, {24, 1, 3, 3}, {24}},
                   "epilogue",
                   true});
  cases.push_back({"_pointwise_depthwise_conv",
                   pwdw({3, 3}, 6, {1, 1}, {2, 2}, {20, 20}, "relu"),
                   {{1, 4, 45, 43}, {6, 4, 1, 1}, {6}, {6, 1, 3, 3}, {6}},
                   "two launches",
                   true});
  cases.push_back({"_pointwise_depthwise_conv",
                   pwdw({3, 3}, 40, {2, 2}, {1, 1}, {}, "relu"),
                   {{1, 100, 9, 9}, {40, 100, 1, 1}, {40}, {40, 1, 3, 3}, {40}},
                   "many inputs"});
  return cases;
}

class RowsPrinters : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = temp_dir("RowsPrinters");
    std::mt19937 rng(20240917);
    for (const Case& c : all_cases()) {
      SCOPED_TRACE(c.op + " " + c.label);
      ASSERT_NO_THROW(prepared_.push_back(prepare(c, rng)));
    }
    std::ofstream(dir_ + "/driver.cu") << driver_source(prepared_);
  }
  void TearDown() override {
    std::error_code ec;
    if (!HasFailure()) fs::remove_all(dir_, ec);
  }
  std::string dir_;
  std::vector<Prepared> prepared_;
};

TEST_F(RowsPrinters, EveryCaseMatchesTheReferenceOnTheCudaHostLayer) {
  fs::copy_file(kHeader, dir_ + "/cuda_runtime.h");
  const CommandResult built =
      run_command(q(HYBGEN_CXX) + " -std=c++17 -O1 -Wall -Wextra -Wpedantic -Werror -x c++ -I" + q(dir_) + " " +
                  q(dir_ + "/driver.cu") + " -o " + q(dir_ + "/driver"));
  ASSERT_EQ(built.exit_code, 0) << built.output;
  for (std::size_t c = 0; c < prepared_.size(); ++c) {
    std::ofstream f(dir_ + "/case_" + std::to_string(c) + ".bin", std::ios::binary);
    for (const auto& v : prepared_[c].data)
      f.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(float)));
  }
  const CommandResult ran = run_command("timeout 60 " + q(dir_ + "/driver") + " " + q(dir_));
  ASSERT_EQ(ran.exit_code, 0) << ran.output;
  EXPECT_EQ(ran.output, "OK\n");
  for (std::size_t c = 0; c < prepared_.size(); ++c) {
    const Prepared& p = prepared_[c];
    SCOPED_TRACE(p.c.op + " " + p.c.label + "\n" + p.call.code);
    std::ifstream f(dir_ + "/case_" + std::to_string(c) + ".out", std::ios::binary);
    for (std::size_t o = 0; o < p.expected.size(); ++o) {
      std::vector<float> got(p.expected[o].size());
      f.read(reinterpret_cast<char*>(got.data()), static_cast<std::streamsize>(got.size() * sizeof(float)));
      ASSERT_TRUE(f.good()) << "output " << o << " missing";
      double max_diff = 0.0, max_ref = 0.0;
      std::size_t worst = 0;
      for (std::size_t i = 0; i < got.size(); ++i) {
        const double diff = std::isfinite(got[i]) ? std::fabs(static_cast<double>(got[i]) - p.expected[o][i]) : 1e30;
        if (diff > max_diff) max_diff = diff, worst = i;
        max_ref = std::fmax(max_ref, std::fabs(p.expected[o][i]));
      }
      EXPECT_LE(max_diff, 1e-5 * std::fmax(max_ref, 1e-30))
          << "output " << o << "[" << worst << "] = " << got[worst] << ", expected " << p.expected[o][worst];
    }
  }
}

// Every op of the family has a registered printer that names its kernel files.
TEST_F(RowsPrinters, PrintersUseTheirKernelsAndScratchOnlyWhereNeeded) {
  for (const Prepared& p : prepared_) {
    SCOPED_TRACE(p.c.op + " " + p.c.label + "\n" + p.call.code);
    EXPECT_FALSE(p.call.kernels.empty());
    EXPECT_EQ(p.call.code.rfind("HG_CHECK(", 0), 0u);
    if (p.c.op == "_pointwise_depthwise_conv") {
      const bool two = p.c.label == "two launches";
      EXPECT_EQ(p.scratch_floats > 0, two);
      EXPECT_EQ(names(p.call.code, "hg_pointwise_then_depthwise"), two);
    }
  }
}

// The same driver is valid CUDA for sm_80 and sm_90.
TEST_F(RowsPrinters, DriverCompilesWithNvcc) {
  if (!on_path("nvcc")) GTEST_SKIP() << "nvcc is not on PATH";
  const CommandResult built = run_command(
      "nvcc -std=c++17 -gencode 'arch=compute_80,code=[sm_80,sm_90]' -Werror all-warnings -c " +
      q(dir_ + "/driver.cu") + " -o " + q(dir_ + "/driver.o"));
  EXPECT_EQ(built.exit_code, 0) << built.output;
}

}  // namespace
}  // namespace hybgen::testing
