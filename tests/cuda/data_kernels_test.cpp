// The CUDA kernels of the data-movement ops (gen/ops/cuda/data_kernels.cpp,
// templates/cuda/kernels/{copy,concat,slice,transpose,embedding}.inc),
// end to end: each case's launch statements come from the op's registered
// CUDA printer; one driver program holds them all with the kernel files
// pasted as the emitter pastes them, is built with the host compiler
// through the cuda-host layer and run on seeded random data, once with
// 16-byte aligned buffers (the float4 paths) and once with every buffer
// one float off (the scalar paths), and must reproduce the op's reference
// kernel exactly. The same driver must compile with nvcc for sm_80 and sm_90.
// A second driver moves 2-byte elements (__half, the storage of --precision
// fp16), whose 16-byte paths take 8 elements per float4.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "cuda_test_support.h"
#include "ir/half.h"
#include "ops/op.h"
#include "ops/op_util.h"
#include "run_command.h"
#include "targets/target.h"

namespace hybgen::testing {
namespace {

namespace fs = std::filesystem;

// One op application.
struct Case {
  std::string op;
  Attrs attrs;
  std::vector<Shape> inputs;
  std::vector<bool> placed;  // Concat: inputs already in the output
  std::string label;
};

struct Prepared {
  Case c;
  Attrs attrs;  // normalized
  std::vector<TensorType> in, out;
  KernelCall call;
  std::vector<std::vector<float>> data, expected, init;
};

// Concat's placement of input i in the output (contiguous blocks only).
int64_t concat_offset(const Prepared& p, std::size_t input) {
  const Shape& out = p.out[0].shape;
  const int axis = normalize_axis(p.attrs.get_int("dim"), out.size());
  const int64_t inner = dims_product(out, axis + 1, out.size());
  int64_t offset = 0;
  for (std::size_t i = 0; i < input; ++i) offset += p.in[i].shape[axis] * inner;
  return offset;
}

// `dtype`: the element type the kernels move (float32, or float16 with
// values the format holds, so the float reference gives the bits expected).
Prepared prepare(const Case& c, std::mt19937& rng, DType dtype = DType::kFloat32) {
  const OpDef& def = find_op(c.op);
  Prepared p{c, normalize_attrs(def, c.attrs), {}, {}, {}, {}, {}, {}};
  for (const Shape& s : c.inputs) p.in.push_back(TensorType{s, DType::kFloat32});
  p.out = def.infer(p.attrs, p.in);
  std::uniform_real_distribution<float> value(-2.0f, 2.0f);
  for (std::size_t i = 0; i < p.in.size(); ++i) {
    std::vector<float> v(static_cast<std::size_t>(p.in[i].num_elements()));
    for (float& f : v) f = dtype == DType::kFloat16 ? half_to_float(float_to_half(value(rng))) : value(rng);
    if (def.name == "Embedding" && i == 0) {  // indices: in range, fractional, negative, past the end, NaN
      const float rows = static_cast<float>(p.attrs.get_int("input_dim"));
      std::uniform_real_distribution<float> index(-3.0f, rows + 3.0f);
      for (std::size_t k = 0; k < v.size(); ++k) v[k] = k % 3 == 0 ? std::floor(index(rng)) : index(rng);
      if (v.size() > 3) v[3] = -0.5f;
      if (v.size() > 4) v[4] = std::numeric_limits<float>::quiet_NaN();
    }
    p.data.push_back(std::move(v));
  }
  for (const auto& t : p.out) p.expected.emplace_back(static_cast<std::size_t>(t.num_elements()));
  KernelIO io{p.attrs, {}, p.in, {}, p.out};
  for (const auto& v : p.data) io.in.push_back(v.data());
  for (auto& v : p.expected) io.out.push_back(v.data());
  def.reference(io);
  // Outputs start as a sentinel, except where placed inputs already lie.
  for (const auto& e : p.expected) p.init.emplace_back(e.size(), -777.0f);
  for (std::size_t i = 0; i < c.placed.size(); ++i)
    if (c.placed[i]) {
      const int64_t offset = concat_offset(p, i);
      std::copy(p.data[i].begin(), p.data[i].end(), p.init[0].begin() + offset);
    }

  for (auto& t : p.in) t.dtype = dtype;
  for (auto& t : p.out) t.dtype = dtype;
  Node node{"node", def.name, p.attrs, {}, {}};
  std::vector<std::string> ins, outs;
  for (std::size_t i = 0; i < p.in.size(); ++i) ins.push_back("in" + std::to_string(i));
  for (std::size_t i = 0; i < p.out.size(); ++i) outs.push_back("out" + std::to_string(i));
  const OpKernel* kernel = find_kernel(Backend::kCuda, def.name);
  if (!kernel) throw std::runtime_error("no CUDA kernel for " + def.name);
  const EmitContext ctx{node, find_target("cuda"), ins, p.in, outs, p.out, "", c.placed, "", {}, "pool", 0, "stream"};
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

// `element`: the C type of the buffers (float or __half).
std::string driver_source(const std::vector<Prepared>& cases, const std::string& element = "float") {
  std::vector<std::string> order;
  std::set<std::string> seen;
  add_kernel("common", order, seen);
  for (const auto& p : cases)
    for (const auto& k : p.call.kernels) add_kernel(k, order, seen);
  std::string s =
      std::string(element == "float" ? "" : "#define HG_CUDA_HALF 1\n") +
      "#include <cuda_runtime.h>\n#include <cmath>\n#include <cstdint>\n#include <cstdio>\n#include <vector>\n"
      "#if defined(HG_CUDA_HALF) && !defined(HG_CUDA_HOST)\n#include <cuda.h>\n#include <cuda_fp16.h>\n#endif\n"
      "#define HG_CHECK(call) do { const cudaError_t e_ = (call); if (e_ != cudaSuccess) return e_; } while (0)\n"
      "namespace model { namespace kernels {\n";
  for (const auto& k : order) s += read_text(kKernels + "/" + k + ".inc") + "\n";
  s += "}  // namespace kernels\n}  // namespace model\nusing namespace model::kernels;\n\n"
       "typedef " +
       element +
       " Elem;\n"
       "typedef cudaError_t (*CaseFn)(cudaStream_t, const Elem* const*, Elem* const*);\n";
  for (std::size_t c = 0; c < cases.size(); ++c) {
    const Prepared& p = cases[c];
    s += "// " + p.c.op + " " + p.c.label + "\nstatic cudaError_t case_" + std::to_string(c) +
         "(cudaStream_t stream, const Elem* const* ins, Elem* const* outs) {\n";
    // Only the buffers the code names (nvcc warns of unused ones).
    auto named = [&](const std::string& name) {
      for (std::size_t at = p.call.code.find(name); at != std::string::npos; at = p.call.code.find(name, at + 1)) {
        const char next = at + name.size() < p.call.code.size() ? p.call.code[at + name.size()] : ' ';
        if (!std::isdigit(static_cast<unsigned char>(next))) return true;
      }
      return false;
    };
    for (std::size_t i = 0; i < p.in.size(); ++i)
      if (named("in" + std::to_string(i)))
        s += "  const Elem* in" + std::to_string(i) + " = ins[" + std::to_string(i) + "];\n";
    for (std::size_t i = 0; i < p.out.size(); ++i)
      if (named("out" + std::to_string(i)))
        s += "  Elem* out" + std::to_string(i) + " = outs[" + std::to_string(i) + "];\n";
    s += "  (void)stream;\n  (void)ins;\n  (void)outs;\n" + p.call.code + "\n  return cudaSuccess;\n}\n";
  }
  s += R"(
struct CaseInfo {
  CaseFn fn;
  std::vector<long> in, out;
};

// Reads case_N.bin (inputs, then the outputs' initial values), runs the
// case with every buffer `shift` elements past a 256-byte boundary and writes
// the outputs to case_N_SHIFT.out.
static int run_case(const char* dir, int index, const CaseInfo& info, int shift, cudaStream_t stream) {
  char path[4096];
  std::snprintf(path, sizeof path, "%s/case_%d.bin", dir, index);
  FILE* f = std::fopen(path, "rb");
  if (!f) return 2;
  std::vector<long> sizes = info.in;
  sizes.insert(sizes.end(), info.out.begin(), info.out.end());
  std::vector<Elem*> dev;
  for (long n : sizes) {
    std::vector<Elem> host(static_cast<size_t>(n));
    if (std::fread(host.data(), sizeof(Elem), host.size(), f) != host.size()) return 3;
    Elem* d = nullptr;
    if (cudaMalloc(&d, (static_cast<size_t>(n) + 8) * sizeof(Elem)) != cudaSuccess) return 4;
    if (cudaMemcpy(d + shift, host.data(), host.size() * sizeof(Elem), cudaMemcpyHostToDevice) != cudaSuccess) return 5;
    dev.push_back(d);
  }
  std::fclose(f);
  std::vector<const Elem*> ins;
  std::vector<Elem*> outs;
  for (size_t i = 0; i < info.in.size(); ++i) ins.push_back(dev[i] + shift);
  for (size_t i = 0; i < info.out.size(); ++i) outs.push_back(dev[info.in.size() + i] + shift);
  const cudaError_t e = info.fn(stream, ins.data(), outs.data());
  if (e != cudaSuccess) {
    std::printf("case %d: %s\n", index, cudaGetErrorString(e));
    return 6;
  }
  if (cudaStreamSynchronize(stream) != cudaSuccess) return 7;
  std::snprintf(path, sizeof path, "%s/case_%d_%d.out", dir, index, shift);
  f = std::fopen(path, "wb");
  if (!f) return 8;
  for (size_t i = 0; i < info.out.size(); ++i) {
    std::vector<Elem> host(static_cast<size_t>(info.out[i]));
    if (cudaMemcpy(host.data(), outs[i], host.size() * sizeof(Elem), cudaMemcpyDeviceToHost) != cudaSuccess) return 9;
    std::fwrite(host.data(), sizeof(Elem), host.size(), f);
  }
  std::fclose(f);
  for (Elem* d : dev) cudaFree(d);
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
    s += "      {case_" + std::to_string(c) + ", " + cpp_int_list(in) + ", " + cpp_int_list(out) + "},\n";
  }
  s += R"(  };
  for (int i = 0; i < static_cast<int>(sizeof cases / sizeof cases[0]); ++i)
    for (int shift : {0, 1})
      if (int rc = run_case(argv[1], i, cases[i], shift, stream)) {
        std::printf("case %d shift %d failed (%d)\n", i, shift, rc);
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

// The registry's examples of every op this family owns, and edge cases.
std::vector<Case> all_cases() {
  const std::vector<std::string> ops = {"Concat",  "slice",       "slice_axis", "SliceChannel", "transpose", "Embedding",
                                        "Reshape", "Flatten",     "expand_dims", "squeeze",     "Dropout",   "_copy"};
  std::vector<Case> cases;
  for (const auto& op : ops) {
    const OpDef& def = find_op(op);
    for (std::size_t e = 0; e < def.examples.size(); ++e) {
      if (!def.examples[e].input_types.empty()) continue;  // quantized: the CUDA kernels compute float32
      cases.push_back({op, def.examples[e].attrs, def.examples[e].inputs, {}, "example " + std::to_string(e)});
    }
  }
  const int64_t none = kSliceNone;
  // Concat: float4 parts at batch 2, a placed input, many inputs, one input, outer 1.
  cases.push_back({"Concat", attrs({{"dim", int64_t{1}}}), {{2, 8, 4}, {2, 4, 4}, {2, 12, 4}}, {}, "float4 rows"});
  cases.push_back({"Concat", attrs({{"dim", int64_t{0}}}), {{1, 5, 3}, {2, 5, 3}, {3, 5, 3}}, {false, true, false}, "placed"});
  cases.push_back({"Concat", attrs({{"dim", int64_t{0}}}), {{2, 4}, {2, 4}}, {true, true}, "all placed"});
  std::vector<Shape> ten;
  for (int i = 0; i < 10; ++i) ten.push_back({3, 1 + i % 4, 5});
  cases.push_back({"Concat", attrs({{"dim", int64_t{1}}}), ten, {}, "ten inputs"});
  cases.push_back({"Concat", attrs({{"dim", int64_t{2}}}), {{2, 3, 7}}, {}, "one input"});
  cases.push_back({"Concat", attrs({{"dim", int64_t{1}}}), {{1, 300, 1, 1}, {1, 257, 1, 1}}, {false, false}, "batch 1"});
  cases.push_back({"Concat", attrs({{"dim", int64_t{1}}}), {{2, 40, 3, 3}, {2, 24, 3, 3}}, {}, "NCHW batch 2"});
  // slice: contiguous (a memcpy), float4 inner rows, reversed steps, high rank.
  cases.push_back({"slice", attrs({{"begin", Ints{1}}, {"end", Ints{3}}}), {{4, 6, 2}}, {}, "contiguous"});
  cases.push_back({"slice", attrs({{"begin", Ints{0, 2, 4}}, {"end", Ints{2, 6, 12}}}), {{2, 8, 12}}, {}, "float4"});
  cases.push_back({"slice", attrs({{"begin", Ints{none, 5, 1}}, {"end", Ints{none, 0, none}}, {"step", Ints{-1, -2, 3}}}),
                   {{3, 7, 10}}, {}, "negative steps"});
  cases.push_back({"slice", attrs({{"begin", Ints{0, 1, 0, 0, 1, 0, 0, 1}}, {"end", Ints{2, 3, 2, 2, 3, 2, 2, 3}}}),
                   {{2, 3, 2, 2, 3, 2, 2, 3}}, {}, "rank 8"});
  cases.push_back({"slice", attrs({{"begin", Ints{0, 0}}, {"end", Ints{1, 1}}}), {{3, 3}}, {}, "one element"});
  // slice_axis: last axis, negative axis, to the end, axis 0.
  cases.push_back({"slice_axis", attrs({{"axis", int64_t{-1}}, {"begin", int64_t{2}}, {"end", none}}), {{3, 4, 9}}, {}, "last"});
  cases.push_back({"slice_axis", attrs({{"axis", int64_t{0}}, {"begin", int64_t{-2}}, {"end", none}}), {{5, 3}}, {}, "axis 0"});
  cases.push_back({"slice_axis", attrs({{"axis", int64_t{1}}, {"begin", int64_t{0}}, {"end", int64_t{8}}}), {{2, 16, 8}}, {},
                   "float4"});
  // SliceChannel: outer 1 (memcpys), float4 parts, more than 8 outputs, squeeze.
  cases.push_back({"SliceChannel", attrs({{"num_outputs", int64_t{3}}, {"axis", int64_t{0}}}), {{6, 4}}, {}, "outer 1"});
  cases.push_back({"SliceChannel", attrs({{"num_outputs", int64_t{2}}, {"axis", int64_t{1}}}), {{2, 16, 8}}, {}, "float4"});
  cases.push_back({"SliceChannel", attrs({{"num_outputs", int64_t{10}}, {"axis", int64_t{-1}}}), {{3, 10}}, {}, "ten"});
  cases.push_back({"SliceChannel", attrs({{"num_outputs", int64_t{3}}, {"axis", int64_t{1}}, {"squeeze_axis", true}}),
                   {{2, 3, 5}}, {}, "squeeze"});
  cases.push_back({"SliceChannel", attrs({{"num_outputs", int64_t{3}}, {"axis", int64_t{-1}}}), {{1, 7, 96}}, {}, "qkv"});
  // transpose: tiles (2D, NCHW->NHWC, K^T, batch axes both sides), gathers
  // (last axis kept, short axes, rank 8), size-1 axes, identity.
  cases.push_back({"transpose", Attrs{}, {{37, 50}}, {}, "2D tile"});
  cases.push_back({"transpose", attrs({{"axes", Ints{0, 2, 3, 1}}}), {{2, 40, 6, 6}}, {}, "NCHW to NHWC"});
  cases.push_back({"transpose", attrs({{"axes", Ints{0, 3, 1, 2}}}), {{2, 6, 6, 40}}, {}, "NHWC to NCHW"});
  cases.push_back({"transpose", attrs({{"axes", Ints{0, 1, 3, 2}}}), {{2, 3, 20, 17}}, {}, "K transposed"});
  cases.push_back({"transpose", attrs({{"axes", Ints{0, 3, 2, 1}}}), {{3, 20, 5, 24}}, {}, "batch axes around"});
  cases.push_back({"transpose", attrs({{"axes", Ints{1, 0, 2}}}), {{5, 6, 8}}, {}, "last kept float4"});
  cases.push_back({"transpose", attrs({{"axes", Ints{0, 2, 1, 3}}}), {{2, 5, 3, 7}}, {}, "last kept"});
  cases.push_back({"transpose", attrs({{"axes", Ints{2, 0, 3, 1}}}), {{17, 3, 19, 5}}, {}, "short last"});
  cases.push_back({"transpose", attrs({{"axes", Ints{7, 6, 5, 4, 3, 2, 1, 0}}}), {{2, 3, 2, 2, 3, 2, 2, 3}}, {}, "rank 8"});
  cases.push_back({"transpose", attrs({{"axes", Ints{2, 0, 3, 1}}}), {{1, 33, 1, 20}}, {}, "size-1 axes"});
  cases.push_back({"transpose", attrs({{"axes", Ints{0, 2, 1}}}), {{4, 1, 5}}, {}, "identity after dropping"});
  cases.push_back({"transpose", attrs({{"axes", Ints{1, 0}}}), {{64, 128}}, {}, "exact tiles"});
  // Embedding: float4 rows and odd rows, one index.
  cases.push_back({"Embedding", attrs({{"input_dim", int64_t{7}}, {"output_dim", int64_t{8}}}), {{4, 5}, {7, 8}}, {}, "float4"});
  cases.push_back({"Embedding", attrs({{"input_dim", int64_t{6}}, {"output_dim", int64_t{5}}}), {{13}, {6, 5}}, {}, "odd"});
  cases.push_back({"Embedding", attrs({{"input_dim", int64_t{3}}, {"output_dim", int64_t{2}}}), {{1}, {3, 2}}, {}, "one"});
  // The copies at a size a grid covers several times.
  cases.push_back({"Reshape", attrs({{"shape", Ints{-1}}}), {{3, 1000}}, {}, "large"});
  return cases;
}

class DataKernels : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = (fs::temp_directory_path() / ("hybgen_DataKernels_" + std::string(info->name()) + "_" +
                                         std::to_string(::getpid())))
               .string();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::mt19937 rng(20240611);
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

bool same(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST_F(DataKernels, EveryCaseMatchesTheReferenceOnTheCudaHostLayer) {
  fs::copy_file(kHeader, dir_ + "/cuda_runtime.h");
  const CommandResult built =
      run_command(q(HYBGEN_CXX) + " -std=c++17 -O1 -Wall -Wextra -Wpedantic -Werror -x c++ -I" + q(dir_) + " " +
                  q(dir_ + "/driver.cu") + " -o " + q(dir_ + "/driver"));
  ASSERT_EQ(built.exit_code, 0) << built.output;
  for (std::size_t c = 0; c < prepared_.size(); ++c) {
    std::ofstream f(dir_ + "/case_" + std::to_string(c) + ".bin", std::ios::binary);
    for (const auto& v : prepared_[c].data) f.write(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
    for (const auto& v : prepared_[c].init) f.write(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
  }
  const CommandResult ran = run_command("timeout 60 " + q(dir_ + "/driver") + " " + q(dir_));
  ASSERT_EQ(ran.exit_code, 0) << ran.output;
  EXPECT_EQ(ran.output, "OK\n");
  for (std::size_t c = 0; c < prepared_.size(); ++c) {
    const Prepared& p = prepared_[c];
    for (int shift : {0, 1}) {
      SCOPED_TRACE(p.c.op + " " + p.c.label + " shift " + std::to_string(shift) + "\n" + p.call.code);
      std::ifstream f(dir_ + "/case_" + std::to_string(c) + "_" + std::to_string(shift) + ".out", std::ios::binary);
      for (std::size_t o = 0; o < p.expected.size(); ++o) {
        std::vector<float> got(p.expected[o].size());
        f.read(reinterpret_cast<char*>(got.data()), static_cast<std::streamsize>(got.size() * sizeof(float)));
        ASSERT_TRUE(f.good()) << "output " << o << " missing";
        std::size_t bad = 0;
        for (std::size_t i = 0; i < got.size(); ++i)
          if (!same(got[i], p.expected[o][i]) && bad++ < 3)
            ADD_FAILURE() << "output " << o << "[" << i << "] = " << got[i] << ", expected " << p.expected[o][i];
        EXPECT_EQ(bad, 0u) << "output " << o;
      }
    }
  }
}

// The same cases (but Embedding's, whose float indices keep it float32)
// moving __half elements: every 16-byte path then takes 8 elements per
// float4, and a buffer one element off (2 bytes) takes the scalar paths.
TEST_F(DataKernels, EveryCaseMovesHalfElementsOnTheCudaHostLayer) {
  std::mt19937 rng(20240612);
  std::vector<Prepared> cases;
  for (const Case& c : all_cases()) {
    if (c.op == "Embedding") continue;
    SCOPED_TRACE(c.op + " " + c.label);
    ASSERT_NO_THROW(cases.push_back(prepare(c, rng, DType::kFloat16)));
  }
  const std::string dir = dir_ + "/half";
  fs::create_directories(dir);
  std::ofstream(dir + "/driver.cu") << driver_source(cases, "__half");
  fs::copy_file(kHeader, dir + "/cuda_runtime.h");
  const CommandResult built = run_command(q(HYBGEN_CXX) + " -std=c++17 -O1 -Wall -Wextra -Wpedantic -Werror -x c++ -I" +
                                          q(dir) + " " + q(dir + "/driver.cu") + " -o " + q(dir + "/driver"));
  ASSERT_EQ(built.exit_code, 0) << built.output;
  auto bits = [](const std::vector<float>& v) {
    std::vector<uint16_t> b(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) b[i] = float_to_half(v[i]);
    return b;
  };
  for (std::size_t c = 0; c < cases.size(); ++c) {
    std::ofstream f(dir + "/case_" + std::to_string(c) + ".bin", std::ios::binary);
    for (const auto* group : {&cases[c].data, &cases[c].init})
      for (const auto& v : *group) {
        const std::vector<uint16_t> b = bits(v);
        f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size() * sizeof(uint16_t)));
      }
  }
  const CommandResult ran = run_command("timeout 60 " + q(dir + "/driver") + " " + q(dir));
  ASSERT_EQ(ran.exit_code, 0) << ran.output;
  EXPECT_EQ(ran.output, "OK\n");
  for (std::size_t c = 0; c < cases.size(); ++c) {
    const Prepared& p = cases[c];
    for (int shift : {0, 1}) {
      SCOPED_TRACE(p.c.op + " " + p.c.label + " shift " + std::to_string(shift) + "\n" + p.call.code);
      std::ifstream f(dir + "/case_" + std::to_string(c) + "_" + std::to_string(shift) + ".out", std::ios::binary);
      for (std::size_t o = 0; o < p.expected.size(); ++o) {
        const std::vector<uint16_t> want = bits(p.expected[o]);
        std::vector<uint16_t> got(want.size());
        f.read(reinterpret_cast<char*>(got.data()), static_cast<std::streamsize>(got.size() * sizeof(uint16_t)));
        ASSERT_TRUE(f.good()) << "output " << o << " missing";
        std::size_t bad = 0;
        for (std::size_t i = 0; i < got.size(); ++i)
          if (got[i] != want[i] && bad++ < 3)
            ADD_FAILURE() << "output " << o << "[" << i << "] = " << half_to_float(got[i]) << ", expected "
                          << half_to_float(want[i]);
        EXPECT_EQ(bad, 0u) << "output " << o;
      }
    }
  }
}

// The printers pick the cheap path where there is one.
TEST_F(DataKernels, PrintersPickTheCheapestKernel) {
  for (const Prepared& p : prepared_) {
    SCOPED_TRACE(p.c.op + " " + p.c.label + "\n" + p.call.code);
    const std::string& code = p.call.code;
    if (p.c.label == "contiguous" || p.c.label == "outer 1" || p.c.label == "identity after dropping" ||
        p.c.op == "Reshape" || p.c.op == "_copy") {
      EXPECT_NE(code.find("hg_copy("), std::string::npos);
    }
    if (p.c.label == "2D tile" || p.c.label == "NCHW to NHWC" || p.c.label == "K transposed" ||
        p.c.label == "batch axes around") {
      EXPECT_NE(code.find("hg_transpose<"), std::string::npos);
    }
    if (p.c.label == "NCHW to NHWC") {
      EXPECT_NE(code.find("hg_transpose<1>"), std::string::npos);  // H, W merged
    }
    if (p.c.label == "last kept" || p.c.label == "short last") {
      EXPECT_NE(code.find("hg_strided_copy<"), std::string::npos);
    }
    if (p.c.label == "ten inputs" || p.c.label == "ten") {  // 8 parts per launch: two launches
      std::size_t launches = 0;
      for (std::size_t at = code.find("HG_CHECK("); at != std::string::npos; at = code.find("HG_CHECK(", at + 1)) ++launches;
      EXPECT_EQ(launches, 2u);
    }
    if (p.c.label == "all placed") {
      EXPECT_TRUE(p.call.kernels.empty());
      EXPECT_EQ(code.find("HG_CHECK"), std::string::npos);
    }
  }
}

// The same driver is valid CUDA for sm_80 and sm_90, warning-free, and no
// kernel spills registers.
TEST_F(DataKernels, DriverCompilesWithNvcc) {
  if (run_command("command -v nvcc").exit_code != 0) GTEST_SKIP() << "nvcc is not on PATH";
  const CommandResult built = run_command(
      "nvcc -std=c++17 -O3 -gencode 'arch=compute_80,code=[sm_80,sm_90]' -Xptxas -v "
      "-Werror all-warnings -c " +
      q(dir_ + "/driver.cu") + " -o " + q(dir_ + "/driver.o"));
  EXPECT_EQ(built.exit_code, 0) << built.output;
  std::istringstream lines(built.output);
  for (std::string line; std::getline(lines, line);)
    if (line.find("bytes spill") != std::string::npos) {
      EXPECT_NE(line.find(" 0 bytes spill stores, 0 bytes spill loads"), std::string::npos) << line;
    }
}

// Each kernel file pasted alone, none of its functions called (a model
// that uses one op of the file), builds warning-free with nvcc and the host
// compiler: nothing unused is `static`.
TEST_F(DataKernels, KernelFilesUnusedAreWarningFree) {
  std::string source = "#include <cuda_runtime.h>\n#include <cmath>\n#include <cstdint>\nnamespace m { namespace kernels {\n";
  for (const char* k : {"common", "copy", "concat", "slice", "transpose", "embedding"})
    source += read_text(kKernels + "/" + k + ".inc") + "\n";
  // common.inc's own helper is used by every generated file.
  source += "}}\nint main() { return static_cast<int>(m::kernels::hg_blocks_for(1, 1)) - 1; }\n";
  std::ofstream(dir_ + "/unused.cu") << source;
  fs::copy_file(kHeader, dir_ + "/cuda_runtime.h");
  CommandResult built = run_command(q(HYBGEN_CXX) + " -std=c++17 -O1 -Wall -Wextra -Wpedantic -Werror -fsyntax-only -x c++ -I" +
                                    q(dir_) + " " + q(dir_ + "/unused.cu"));
  EXPECT_EQ(built.exit_code, 0) << built.output;
  if (run_command("command -v nvcc").exit_code != 0) GTEST_SKIP() << "nvcc is not on PATH";
  fs::remove(dir_ + "/cuda_runtime.h");
  built = run_command("nvcc -std=c++17 -arch=sm_80 -Werror all-warnings -c " + q(dir_ + "/unused.cu") + " -o " +
                      q(dir_ + "/unused.o"));
  EXPECT_EQ(built.exit_code, 0) << built.output;
}

// HgFastDiv (slice.inc) divides exactly: every divisor up to 3000 and
// the largest ones, against numerators up to the 32-bit path's 2^30 bound.
TEST_F(DataKernels, FastDivisionIsExact) {
  std::string source = "#include <cuda_runtime.h>\n#include <cstdio>\nnamespace m { namespace kernels {\n" +
                       read_text(kKernels + "/common.inc") + "\n" + read_text(kKernels + "/slice.inc") + R"(
}}
int main() {
  using namespace m::kernels;
  const unsigned limit = 1u << 30;
  unsigned long long state = 88172645463325252ULL;
  for (long d = 1; d <= static_cast<long>(limit); d = d == 3000 ? limit - 5 : d + 1) {
    const HgFastDiv f = hg_fast_div(d);
    for (int k = 0; k < 2000; ++k) {
      state ^= state << 13; state ^= state >> 7; state ^= state << 17;
      unsigned n = k < 1000 ? static_cast<unsigned>(k) : static_cast<unsigned>(state % limit);
      if (k == 1999) n = limit - 1;
      if (hg_div(n, f) != n / static_cast<unsigned>(d)) { std::printf("%u / %ld\n", n, d); return 1; }
    }
  }
  (void)hg_blocks_for(1, 1);
  std::printf("OK\n");
  return 0;
}
)";
  std::ofstream(dir_ + "/div.cu") << source;
  fs::copy_file(kHeader, dir_ + "/cuda_runtime.h");
  const CommandResult built = run_command(q(HYBGEN_CXX) + " -std=c++17 -O1 -Wall -Wextra -Werror -x c++ -I" + q(dir_) +
                                          " " + q(dir_ + "/div.cu") + " -o " + q(dir_ + "/div"));
  ASSERT_EQ(built.exit_code, 0) << built.output;
  const CommandResult ran = run_command("timeout 60 " + q(dir_ + "/div"));
  EXPECT_EQ(ran.exit_code, 0) << ran.output;
  EXPECT_EQ(ran.output, "OK\n");
}

}  // namespace
}  // namespace hybgen::testing
