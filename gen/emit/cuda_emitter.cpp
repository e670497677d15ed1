// The CUDA printer. What differs from the C++ one: kernels launch on a
// stream through hg_launch (templates/cuda/kernels/common.inc), an
// elementwise kernel is a __global__ function of its own over a grid-stride
// loop, an epilogue is a struct rather than a lambda (kernels take it by
// value), and the API around run() uploads the weights and owns an arena.
#include "emit/cuda_emitter.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "emit/cpp_fused.h"
#include "emit/kernel_walk.h"
#include "emit/templates.h"
#include "ir/error.h"
#include "ir/names.h"
#include "lower/lowering.h"
#include "ops/op.h"
#include "version.h"

namespace hybgen {
namespace {

// --precision tf32: the GEMM and convolution tiles on tensor cores
// (templates/cuda/kernels/gemm.inc), the mma.sync kernel where the operands
// allow and wmma elsewhere; on cuda-host, the same operand rounding in the
// FP32 tiles.
std::string precision_defines(Precision precision) {
  std::string text = "// --precision " + precision_name(precision);
  switch (precision) {
    case Precision::kTF32:
      return text +
             ": the GEMM and convolution tiles on TF32 tensor cores, FP32 sums.\n"
             "#ifndef HG_CUDA_TF32\n#define HG_CUDA_TF32 1\n#endif\n"
             "#ifndef HG_CUDA_TF32_MMA\n#define HG_CUDA_TF32_MMA 1\n#endif\n";
    case Precision::kFP16:
    case Precision::kBF16:
      return text + ": weights and activations stored as " +
             (precision == Precision::kFP16 ? "__half" : "__nv_bfloat16") + ", computed in float.\n";
    default:
      return text + ": exact float32 products.\n";
  }
}

// --io-precision half: run() takes and gives __half or __nv_bfloat16, so the
// header includes their CUDA headers (the cuda-host layer declares both).
std::string edge_includes(const Graph& graph) {
  std::string includes;
  for (const auto* list : {&graph.inputs, &graph.outputs})
    for (const auto& v : *list) {
      const DType d = graph.type(v).dtype;
      const std::string line = d == DType::kFloat16    ? "#include <cuda_fp16.h>\n"
                               : d == DType::kBFloat16 ? "#include <cuda_bf16.h>\n"
                                                       : "";
      if (!line.empty() && includes.find(line) == std::string::npos) includes += line;
    }
  return includes.empty() ? "" : "#if !defined(HG_CUDA_HOST)\n" + includes + "#endif\n";
}

// HG_CUDA_HALF when the graph holds float16 or bfloat16 values: the .cu
// then includes cuda_fp16.h and cuda_bf16.h (the storage types' conversions).
std::string half_storage_define(const Graph& graph) {
  for (const auto& [value, type] : graph.types)
    if (is_half_dtype(type.dtype)) return "#ifndef HG_CUDA_HALF\n#define HG_CUDA_HALF 1\n#endif\n";
  return "";
}

constexpr int kElementwiseThreads = 256;

// `const T0* r0, ..., T1* w0, ...`, each T the C type of its dtype.
std::string parameter_list(const std::vector<std::string>& reads, const std::vector<DType>& read_dtypes,
                           const std::vector<std::string>& writes, const std::vector<DType>& write_dtypes) {
  std::string params;
  for (std::size_t i = 0; i < reads.size(); ++i)
    params +=
        (params.empty() ? "const " : ", const ") + storage_c_type(read_dtypes[i], Backend::kCuda) + "* " + reads[i];
  for (std::size_t i = 0; i < writes.size(); ++i)
    params += (params.empty() ? "" : ", ") + storage_c_type(write_dtypes[i], Backend::kCuda) + "* " + writes[i];
  return params;
}

std::string argument_list(const std::vector<std::string>& reads, const std::vector<std::string>& writes) {
  std::string args;
  for (const auto& r : reads) args += ", " + r;
  for (const auto& w : writes) args += ", " + w;
  return args;
}

// `text` with every identifier that `names` lists replaced by PREFIX0,
// PREFIX1, ... in the list's order (whole identifiers, not members), and its
// line comments dropped: the code a definition holds whatever the values'
// names. The names are the lowering's pointer variables: no keyword, local
// (v0, x1, i2) or hg_ helper is among them.
std::string generic_text(const std::string& text, const std::vector<std::string>& names, const std::string& prefix) {
  auto is_word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  std::map<std::string, std::string> renamed;
  for (std::size_t i = 0; i < names.size(); ++i) renamed.emplace(names[i], prefix + std::to_string(i));
  std::string out;
  for (std::size_t at = 0; at < text.size();) {
    if (text.compare(at, 2, "//") == 0) {
      while (!out.empty() && out.back() == ' ') out.pop_back();
      at = text.find('\n', at);
      if (at == std::string::npos) break;
      continue;
    }
    if (!is_word(text[at])) {
      out += text[at++];
      continue;
    }
    std::size_t end = at;
    while (end < text.size() && is_word(text[end])) ++end;
    const std::string word = text.substr(at, end - at);
    const auto it = renamed.find(word);
    const bool member = at > 0 && text[at - 1] == '.';  // threadIdx.x is not a value named x
    out += it == renamed.end() || member ? word : it->second;
    at = end;
  }
  return out;
}

// Definitions (elementwise kernels, epilogue structs) printed once for every
// kernel that computes the same thing on other values: a model's many
// BatchNorm+ReLU epilogues become one type, so the GEMM and convolution
// templates are instantiated once for them, not once per layer.
class SharedDefinitions {
 public:
  // The name of the definition whose generic text is `text`, made from
  // `first_name` and `make` (given the name) when it is new; `step` uses it.
  template <class Make>
  std::string use(const std::string& text, const std::string& first_name, int step, const Make& make) {
    auto it = index_.find(text);
    if (it == index_.end()) {
      it = index_.emplace(text, entries_.size()).first;
      entries_.push_back({first_name, make(first_name), {}});
    }
    entries_[it->second].steps.push_back(step);
    return entries_[it->second].name;
  }
  // Every definition, each after a comment naming the kernels that use it.
  std::string text(const std::string& what) const {
    std::string out;
    for (const auto& e : entries_) {
      std::string steps;
      for (int s : e.steps) steps += (steps.empty() ? "" : ", ") + std::to_string(s);
      out += "\n// " + what + " of kernel" + (e.steps.size() > 1 ? "s " : " ") + steps + "\n" + e.definition;
    }
    return out;
  }

 private:
  struct Entry {
    std::string name, definition;
    std::vector<int> steps;
  };
  std::map<std::string, std::size_t> index_;
  std::vector<Entry> entries_;
};

// The launch of an elementwise kernel, its __global__ function added to `shared`.
std::string print_elementwise_kernel(const Graph& graph, const LoweredKernel& lowered, const PointerOf& pointer,
                                       SharedDefinitions& shared) {
  const ElementwiseBody loop = elementwise_body(graph, *lowered.kernel, pointer);
  // Lookup tables are of quantized ops, which no CUDA kernel computes (check_kernels refuses them).
  if (!loop.declarations.empty()) throw Error("kernel " + quoted_name(lowered.kernel->name) + ": no CUDA form");
  int64_t total = 1;
  for (int64_t e : loop.extents) total *= e;
  const int rank = static_cast<int>(loop.extents.size());
  std::string counters;
  int64_t inner = 1;
  for (int r = rank - 1; r >= 0; --r) {
    const std::string counter = loop_counter(r);
    if (mentions_identifier(loop.statements, counter)) {
      std::string value = inner == 1 ? "o" : "o / " + std::to_string(inner);
      if (r > 0) value += " % " + std::to_string(loop.extents[r]);
      counters = "const long " + counter + " = " + value + ";\n" + counters;
    }
    inner *= loop.extents[r];
  }
  // 32-bit index arithmetic (cheaper on a GPU) wherever the last step of the
  // grid-stride loop cannot overflow it.
  const std::string index = total <= (int64_t{1} << 30) ? "int" : "long";
  if (index == "int")
    for (std::size_t at = counters.find("const long "); at != std::string::npos; at = counters.find("const long ", at))
      counters.replace(at, 11, "const int ");
  // First the wait for the previous kernel (common.inc's HG_GRID_DEPENDENCY), as every kernel.
  const std::string body = "HG_GRID_DEPENDENCY();\nfor (" + index + " o = blockIdx.x * blockDim.x + threadIdx.x; o < " +
                           std::to_string(total) + "; o += gridDim.x * blockDim.x) {\n" +
                           indent_lines(counters + loop.statements, "  ") + "}\n";
  std::vector<std::string> operands = loop.reads;
  operands.insert(operands.end(), loop.writes.begin(), loop.writes.end());
  std::vector<std::string> generic_reads, generic_writes;
  for (std::size_t i = 0; i < operands.size(); ++i)
    (i < loop.reads.size() ? generic_reads : generic_writes).push_back("p" + std::to_string(i));
  const std::string definition = "(" +
                                 parameter_list(generic_reads, loop.read_dtypes, generic_writes, loop.write_dtypes) +
                                 ") {\n" + indent_lines(generic_text(body, operands, "p"), "  ") + "}\n";
  const std::string name = shared.use(definition, "hg_kernel_" + std::to_string(lowered.step), lowered.step,
                                      [&](const std::string& n) { return "__global__ void " + n + definition; });
  return "HG_CHECK(hg_launch(" + name + ", dim3(hg_blocks_for(" + std::to_string(total) + ", " +
         std::to_string(kElementwiseThreads) + ")), dim3(" + std::to_string(kElementwiseThreads) + "), stream" +
         argument_list(loop.reads, loop.writes) + "));";
}

// The statement that makes the object `name` an epilogue kernel's anchor
// applies to each value, its struct added to `shared`.
std::string print_epilogue_struct(const Graph& graph, const LoweredKernel& lowered, const PointerOf& pointer,
                                  SharedDefinitions& shared, const std::string& name) {
  const EpilogueBody epilogue = epilogue_body(graph, *lowered.kernel, pointer);
  if (!epilogue.declarations.empty()) throw Error("kernel " + quoted_name(lowered.kernel->name) + ": no CUDA form");
  std::vector<std::string> operands = epilogue.reads;
  operands.insert(operands.end(), epilogue.writes.begin(), epilogue.writes.end());
  std::string members, init;
  for (std::size_t i = 0; i < operands.size(); ++i) {
    const bool read = i < epilogue.reads.size();
    const DType dtype = read ? epilogue.read_dtypes[i] : epilogue.write_dtypes[i - epilogue.reads.size()];
    members += std::string(read ? "  const " : "  ") + storage_c_type(dtype, Backend::kCuda) + "* p" +
               std::to_string(i) + ";\n";
    init += (init.empty() ? "" : ", ") + operands[i];
  }
  const std::string definition =
      " {\n" + members + "  __device__ __forceinline__ " + dtype_c_type(epilogue.result_dtype) + " operator()(long" +
      (epilogue.uses_channel ? " channel" : "") + ", long" + (epilogue.uses_index ? " index" : "") + ", " +
      dtype_c_type(epilogue.value_dtype) + " v) const {\n" +
      indent_lines(generic_text(epilogue.statements, operands, "p"), "    ") + "  }\n};\n";
  const std::string type = shared.use(definition, "HgEpilogue" + std::to_string(lowered.step), lowered.step,
                                      [&](const std::string& n) { return "struct " + n + definition; });
  return "const " + type + " " + name + "{" + init + "};";
}

}  // namespace

namespace {

// The CUDA backend's part of the walk over the kernels (emit/kernel_walk.h):
// elementwise chains and epilogues become __global__ functions and structs,
// one per distinct text (SharedDefinitions).
class CudaKernelPrinter : public KernelPrinter {
 public:
  CudaKernelPrinter(const Graph& graph, SharedDefinitions& elementwise_kernels, SharedDefinitions& epilogues)
      : graph_(graph), elementwise_kernels_(elementwise_kernels), epilogues_(epilogues) {}
  Backend backend() const override { return Backend::kCuda; }
  std::string template_folder() const override { return "cuda/kernels"; }
  std::string elementwise(const LoweredKernel& kernel, const PointerOf& pointer) override {
    return print_elementwise_kernel(graph_, kernel, pointer, elementwise_kernels_);
  }
  std::string epilogue(const LoweredKernel& kernel, const PointerOf& pointer, const std::string& name) override {
    return print_epilogue_struct(graph_, kernel, pointer, epilogues_, name);
  }

 private:
  const Graph& graph_;
  SharedDefinitions& elementwise_kernels_;
  SharedDefinitions& epilogues_;
};

}  // namespace

std::vector<EmittedFile> emit_cuda(const CompiledGraph& compiled, const CppEmitOptions& options) {
  if (compiled.target.backend != Backend::kCuda)
    throw Error("emit_cuda: the graph was compiled for " + compiled.target.name + ", a " +
                backend_name(compiled.target.backend) + " target");
  LoweredModel m = lower(compiled, {options.name, options.ns, options.source, options.external_weights});
  const Graph& g = m.graph;
  const std::string& name = m.name;

  ParameterList list = parameter_list(m);
  std::string null_checks;
  for (const auto& v : list.variables) null_checks += " || !" + v;
  const bool variable_batch = g.batch.variable();
  if (variable_batch) {  // a run-time batch: run() and capture() take the item count
    list.params += ", int64_t batch";
    list.args += ", batch";
  }

  SharedDefinitions elementwise_kernels, epilogues;
  CudaKernelPrinter printer(g, elementwise_kernels, epilogues);
  const WalkedKernels walked = walk_kernels(m, printer, {"common"});
  const PointerOf pointer = [&](const std::string& value) { return m.pointer(value); };
  const std::vector<std::string>& template_order = walked.templates;
  std::string body = walked.body;
  for (const auto& [out, key] : m.constant_outputs)
    body += "  HG_CHECK(cudaMemcpyAsync(" + m.variable(out) + ", " + pointer(key) + ", " +
            std::to_string(g.type(out).bytes()) + ", cudaMemcpyDeviceToDevice, stream));\n";

  std::string pointers;
  if (variable_batch) pointers += "  if (batch < kMinBatch || batch > kMaxBatch) return kBatchOutOfRange;\n";
  const auto read_weights = m.read_weights();
  for (const WeightEntry* w : read_weights) pointers += weight_pointer_declaration(*w, "hg_weights", Backend::kCuda);
  if (read_weights.empty()) pointers += "  (void)hg_weights;  // the graph reads no weights\n";
  const auto buffers = m.read_buffers();
  for (const auto& b : buffers) pointers += arena_pointer_declaration(b, Backend::kCuda);
  if (buffers.empty()) pointers += "  (void)hg_arena;  // every value lives in the inputs and outputs\n";
  for (const auto& in : m.unread_inputs()) pointers += "  (void)" + in + ";  // not read by the graph\n";

  std::string kernels;
  for (const auto& k : template_order) kernels += template_text("cuda/kernels/" + k) + "\n";
  kernels += epilogues.text("The epilogue") + elementwise_kernels.text("The elementwise loop");

  const bool external = m.external_weights;
  const std::string weights_name = weights_file_name(m);
  std::string weight_constants = "// Weight data init() uploads, from " + weights_name + ".\n"
                                 "constexpr std::size_t kWeightBytes = " + std::to_string(m.blob.size()) + ";\n";
  std::string init_params, init_usage, init_doc, init_null_checks, weight_declaration, weight_source;
  if (external) {
    weight_constants += "// kWeightsFnv1a is that file's FNV-1a 64-bit hash, to check a loaded file against this code.\n"
                        "constexpr std::uint64_t kWeightsFnv1a = " + hex64(m.weights_fnv1a64()) + "ull;\n";
    init_params = ", const void* weights";
    init_usage = ", weights";
    init_doc = "// `weights` is " + weights_name + "'s bytes in host memory (kWeightBytes), copied to the device.\n";
    init_null_checks = " || !weights";
    weight_source = "weights";
  } else {
    weight_declaration = "namespace detail {\nextern const unsigned char kWeightBlob[];\n}  // namespace detail\n";
    weight_source = "detail::kWeightBlob";
  }
  std::string batch_constants, batch_status;
  if (variable_batch) {
    batch_constants = "\n\n" + batch_constants_text(m, "kDeviceArenaBytes");
    batch_status = "\n  kBatchOutOfRange = 5,";
  }
  EmittedFile header{name + ".h", fill_template(template_text("cuda/model.h"),
                                                header_values(m, {{"EDGE_INCLUDES", edge_includes(g)},
                                                                  {"BATCH_CONSTANTS", batch_constants},
                                                                  {"BATCH_STATUS", batch_status},
                                                                  {"WEIGHT_CONSTANTS", weight_constants},
                                                                  {"INIT_USAGE", init_usage},
                                                                  {"INIT_PARAMS", init_params},
                                                                  {"INIT_DOC", init_doc},
                                                                  {"PARAMS", list.params},
                                                                  {"USAGE_ARGS", list.args}}),
                                                "cuda/model.h")};
  EmittedFile source{
      name + ".cu",
      fill_template(template_text("cuda/model.cu"),
                    file_values(m, {{"TARGET", m.target.name},
                                    {"TARGET_SUMMARY", m.target.summary},
                                    {"PRECISION", precision_defines(m.target.precision) + half_storage_define(g)},
                                    {"WEIGHT_DECLARATION", weight_declaration},
                                    {"KERNELS", kernels},
                                    {"PARAMS", list.params},
                                    {"ARGS", list.args},
                                    {"NULL_CHECKS", null_checks},
                                    {"INIT_PARAMS", init_params},
                                    {"INIT_NULL_CHECKS", init_null_checks},
                                    {"WEIGHT_SOURCE", weight_source},
                                    {"POINTERS", pointers},
                                    {"BODY", body}}),
                    "cuda/model.cu")};
  return {header, source, weights_file(m), manifest_file(m)};
}

}  // namespace hybgen
