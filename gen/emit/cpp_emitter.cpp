// The C++ backend's printer. Texts come from templates/; the lowering
// (lower/lowering.h) has decided names, the weights' layout and every
// kernel's operands, so this file only orders statements into text, and the
// output is deterministic: the same graph always prints the same bytes.
#include "emit/cpp_emitter.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>

#include "emit/cpp_fused.h"
#include "emit/kernel_walk.h"
#include "emit/templates.h"
#include "ir/error.h"
#include "ir/names.h"
#include "lower/lowering.h"
#include "ops/op.h"
#include "ops/op_util.h"
#include "version.h"

namespace hybgen {
namespace {

std::string camel(const std::string& id) {
  std::string out;
  bool upper = true;
  for (char c : id) {
    if (c == '_') {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  return out;
}

std::string upper_case(const std::string& id) {
  std::string out;
  for (char c : id) out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// Where run() expects the caller's weights (--external-weights).
constexpr int kExternalWeightAlignment = 64;

// The header's C view of `values` (header_values' ARENA_BYTES and
// ARENA_ALIGNMENT): UPPER_ARENA_BYTES, UPPER_ARENA_ALIGNMENT, UPPER_WEIGHT_BYTES
// and UPPER_WEIGHT_ALIGNMENT with external weights, then UPPER_INPUT<i>_FLOATS and UPPER_OUTPUT<i>_FLOATS
// in the graph's order, each with the parameter it sizes.
std::string c_macros(LoweredModel& m, const std::map<std::string, std::string>& values) {
  const std::string prefix = "#define " + upper_case(m.name) + "_";
  std::string text = prefix + "ARENA_BYTES " + values.at("ARENA_BYTES") + "u\n" + prefix + "ARENA_ALIGNMENT " +
                     values.at("ARENA_ALIGNMENT") + "u\n";
  if (m.graph.batch.variable())
    text += prefix + "MIN_BATCH " + std::to_string(m.graph.batch.min) + "\n" + prefix + "MAX_BATCH " +
            std::to_string(m.graph.batch.max) + "\n" + prefix + "ARENA_FIXED_BYTES " +
            std::to_string(m.compiled.plan.fixed_bytes) + "u\n" + prefix + "ARENA_ITEM_BYTES " +
            std::to_string(m.compiled.plan.item_bytes) + "u\n";
  if (m.external_weights)
    text += prefix + "WEIGHT_BYTES " + std::to_string(m.blob.size()) + "u\n" + prefix + "WEIGHT_ALIGNMENT " +
            std::to_string(kExternalWeightAlignment) + "u\n";
  auto sizes = [&](const std::vector<std::string>& list, const char* what) {
    for (std::size_t i = 0; i < list.size(); ++i) {
      const TensorType& t = m.graph.type(list[i]);
      const std::string edge = prefix + what + std::to_string(i);
      const int64_t items = m.batched().count(list[i]) ? m.graph.batch.max : 1;  // sized for the largest batch
      text += edge + "_FLOATS " + std::to_string(t.num_elements() * items) + "u  // " + m.variable(list[i]) +
              (t.dtype == DType::kFloat32 ? "" : " (elements of " + dtype_c_type(t.dtype) + ")") + "\n";
      if (!t.quantization.empty() && !t.quantization.axis)  // --io-precision quantized: real = scale * (q - zero_point)
        text += edge + "_SCALE " + cpp_float(t.quantization.scale[0]) + "\n" + edge + "_ZERO_POINT " +
                std::to_string(t.quantization.zero_point[0]) + "\n";
    }
  };
  sizes(m.graph.inputs, "INPUT");
  sizes(m.graph.outputs, "OUTPUT");
  return text;
}

// "float data[MNIST_INPUT0_FLOATS], prob[MNIST_OUTPUT0_FLOATS];": the C
// usage example's arrays, one per parameter of run().
std::string c_usage_arrays(LoweredModel& m) {
  const std::string upper = upper_case(m.name);
  std::string text;
  for (const ModelParam& p : m.params) {
    const std::vector<std::string>& list = p.is_output ? m.graph.outputs : m.graph.inputs;
    const std::size_t i = static_cast<std::size_t>(std::find(list.begin(), list.end(), p.value) - list.begin());
    text += (text.empty() ? dtype_c_type(p.type.dtype) + " " : ", ") + p.variable + "[" + upper +
            (p.is_output ? "_OUTPUT" : "_INPUT") + std::to_string(i) + "_FLOATS]";
  }
  return text + ";";
}

std::string blob_literal(const std::vector<uint8_t>& bytes) {
  static const char hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 4 + bytes.size() / 8 + 16);
  constexpr std::size_t kPerLine = 32;
  if (bytes.empty()) return "    \"\"";
  for (std::size_t i = 0; i < bytes.size(); i += kPerLine) {
    out += "    \"";
    for (std::size_t j = i; j < bytes.size() && j < i + kPerLine; ++j) {
      out += "\\x";
      out += hex[bytes[j] >> 4];
      out += hex[bytes[j] & 15];
    }
    out += i + kPerLine < bytes.size() ? "\"\n" : "\"";
  }
  return out;
}

}  // namespace

std::size_t emitted_weight_bytes(const std::vector<EmittedFile>& files) {
  const std::string suffix = ".manifest.json";
  for (const auto& f : files)
    if (f.filename.size() > suffix.size() && f.filename.compare(f.filename.size() - suffix.size(), suffix.size(), suffix) == 0)
      return nlohmann::json::parse(f.content).at("weights_bytes").get<std::size_t>();
  throw Error("the emitted files have no manifest");
}

// The bytes of compiler memory per byte of weights are docs/performance.md's
// measurements of g++ 12 and clang++ 14.
std::string large_weights_note(const std::string& name, std::size_t weight_bytes, bool external_weights) {
  constexpr std::size_t kLarge = std::size_t{64} << 20;
  if (external_weights || weight_bytes <= kLarge) return "";
  const std::size_t mb = weight_bytes >> 20;
  return "note: the " + std::to_string(mb) + " MiB of weights compiled into " + name +
         "_weights.cpp take the compiler about " + std::to_string(mb * 16 / 1024 + 1) +
         " GiB of memory with g++ 12 and " + std::to_string(mb * 80 / 1024 + 1) +
         " GiB with clang++ 14 (16 and 80 bytes per byte of its string literal); --external-weights writes them to " +
         name + ".weights.bin, which the program loads and passes to run(), instead\n";
}

std::string shape_constants(LoweredModel& m) {
  std::string shapes;
  auto shape_block = [&](const std::string& value, const char* what) {
    TensorType t = m.graph.type(value);
    const std::string c = camel(m.variable(value));
    const bool items = m.batched().count(value) != 0;
    const std::string item_shape = shape_str(t.shape);
    if (items) t.shape[0] *= m.graph.batch.max;  // sized for the largest batch
    shapes +=
        "\n// " + std::string(what) + " '" + comment_text(value) + "': " + dtype_name(t.dtype) + shape_str(t.shape) +
        (items ? " at kMaxBatch items; " + item_shape + " per item, `batch` items along the first axis" : "") + "\n";
    shapes += "constexpr std::int64_t k" + c + "Shape[] = " + shape_initializer(t.shape) + ";\n";
    shapes += "constexpr std::size_t k" + c + "Size = " + std::to_string(t.num_elements()) + ";\n";
    if (items)
      shapes +=
          "constexpr std::size_t k" + c + "ItemSize = " + std::to_string(t.num_elements() / m.graph.batch.max) + ";\n";
    // --io-precision quantized: what the integers stand for, real = scale * (q - zero_point).
    if (!t.quantization.empty() && !t.quantization.axis) {
      shapes += "constexpr float k" + c + "Scale = " + cpp_float(t.quantization.scale[0]) + ";\n";
      shapes += "constexpr std::int32_t k" + c + "ZeroPoint = " + std::to_string(t.quantization.zero_point[0]) + ";\n";
    }
  };
  for (const auto& in : m.graph.inputs) shape_block(in, "Input");
  for (const auto& out : m.graph.outputs) shape_block(out, "Output");
  return shapes;
}

ParameterList parameter_list(const LoweredModel& m) {
  ParameterList list;
  for (const auto& p : m.params) {
    list.params += (list.params.empty() ? "" : ", ") + std::string(p.is_output ? "" : "const ") +
                   storage_c_type(p.type.dtype, m.target.backend) + "* " + p.variable;
    list.args += (list.args.empty() ? "" : ", ") + p.variable;
    list.variables.push_back(p.variable);
  }
  return list;
}

std::map<std::string, std::string> file_values(const LoweredModel& m, std::map<std::string, std::string> extra) {
  extra.insert({{"NAME", m.name},
                {"NAMESPACE", m.ns},
                {"VERSION", kVersion},
                {"SOURCE", comment_text(m.source)},
                {"GRAPH_NAME", comment_text(m.graph.name)}});
  return extra;
}

std::map<std::string, std::string> header_values(LoweredModel& m, std::map<std::string, std::string> extra) {
  const MemoryPlan& plan = m.compiled.plan;
  extra.insert({{"GUARD", header_guard(m.name)},
                {"ARENA_BYTES", std::to_string(std::max<std::size_t>(plan.arena_bytes, 1))},
                {"ARENA_ALIGNMENT", std::to_string(plan.alignment)},
                {"NUM_INPUTS", std::to_string(m.graph.inputs.size())},
                {"NUM_OUTPUTS", std::to_string(m.graph.outputs.size())},
                {"SHAPES", shape_constants(m)}});
  return file_values(m, std::move(extra));
}

std::string view_code(LoweredModel& m, const LoweredKernel& kernel) {
  const Kernel& k = *kernel.kernel;
  const std::string& input = m.graph.nodes[k.nodes.front()].inputs[0];
  if (m.compiled.plan.find(k.outputs[0])) return "// shares the bytes of " + comment_text(input);
  return "const " + storage_c_type(m.graph.type(k.outputs[0]).dtype, m.target.backend) + "* const " +
         m.variable(k.outputs[0]) + " = " + m.pointer(input) + ";";
}

std::string in_place_comment(const LoweredKernel& kernel) {
  std::string text;
  for (std::size_t i = 0; i < kernel.op.in_placed.size(); ++i)
    text += (i ? "\n" : "") + std::string("// input ") + std::to_string(i) + " was written in place by its producer";
  return text;
}

std::string batch_constants_text(const LoweredModel& m, const std::string& arena_constant) {
  const MemoryPlan& plan = m.compiled.plan;
  return "// A run-time batch: run() takes `batch` items, kMinBatch to kMaxBatch, stacked along\n"
         "// the first axis of the inputs and outputs marked below. " +
         arena_constant +
         " is the arena at\n"
         "// kMaxBatch; arena_bytes(batch) is what `batch` items need.\n"
         "constexpr int64_t kMinBatch = " +
         std::to_string(m.graph.batch.min) +
         ";\n"
         "constexpr int64_t kMaxBatch = " +
         std::to_string(m.graph.batch.max) +
         ";\n"
         "constexpr std::size_t kArenaFixedBytes = " +
         std::to_string(plan.fixed_bytes) +
         ";\n"
         "constexpr std::size_t kArenaItemBytes = " +
         std::to_string(plan.item_bytes) +
         ";\n"
         "constexpr std::size_t arena_bytes(int64_t batch) {\n"
         "  return kArenaFixedBytes + kArenaItemBytes * static_cast<std::size_t>(batch);\n}";
}

std::string header_guard(const std::string& name) { return "HYBGEN_" + upper_case(name) + "_H_"; }

std::string weights_file_name(const LoweredModel& m) {
  return m.external_weights ? m.name + ".weights.bin" : m.name + "_weights.cpp";
}

EmittedFile weights_file(const LoweredModel& m) {
  if (m.external_weights) return {weights_file_name(m), std::string(m.blob.begin(), m.blob.end())};
  std::string table;
  for (const auto& w : m.weights)
    table += "// " + comment_text(w.key) + ": " + comment_text(w.what) + " at byte " + std::to_string(w.offset) + "\n";
  if (!table.empty()) table += "\n";
  return {weights_file_name(m), fill_template(template_text("weights.cpp"),
                                              {{"NAME", m.name},
                                               {"NAMESPACE", m.ns},
                                               {"VERSION", kVersion},
                                               {"SOURCE", comment_text(m.source)},
                                               {"GRAPH_NAME", comment_text(m.graph.name)},
                                               {"WEIGHT_BYTES", std::to_string(m.blob.size())},
                                               {"WEIGHT_TABLE", table},
                                               {"BLOB_SIZE", std::to_string(m.blob.size() + 1)},
                                               {"BLOB", blob_literal(m.blob)}},
                                              "weights.cpp")};
}

EmittedFile manifest_file(const LoweredModel& m) {
  return {m.name + ".manifest.json", m.manifest(weights_file_name(m)).dump(2) + "\n"};
}

namespace {

// The C++ backend's part of the walk over the kernels (emit/kernel_walk.h).
class CppKernelPrinter : public KernelPrinter {
 public:
  CppKernelPrinter(const Graph& graph, const CppEmitOptions& options) : graph_(graph), options_(options) {}
  Backend backend() const override { return Backend::kCpp; }
  std::string template_folder() const override { return "kernels"; }
  std::string elementwise(const LoweredKernel& kernel, const PointerOf& pointer) override {
    return print_elementwise_loop(graph_, *kernel.kernel, pointer);
  }
  std::string epilogue(const LoweredKernel& kernel, const PointerOf& pointer, const std::string& name) override {
    return print_epilogue(graph_, *kernel.kernel, pointer, name);
  }
  // `hybgen verify --bisect`'s and `bench --profile`'s hooks.
  std::string after(const LoweredKernel& lowered, const PointerOf& pointer) override {
    std::string code;
    const Kernel& kernel = *lowered.kernel;
    if (options_.kernel_hooks)
      for (std::size_t j = 0; j < kernel.outputs.size(); ++j)
        code += "  hg_after_kernel(" + std::to_string(lowered.step) + ", " + std::to_string(j) + ", " +
                pointer(kernel.outputs[j]) + ", " + std::to_string(graph_.type(kernel.outputs[j]).bytes()) + "u);\n";
    if (options_.profile_hooks) code += "  hg_profile_mark(" + std::to_string(lowered.step) + ");\n";
    return code;
  }

 private:
  const Graph& graph_;
  const CppEmitOptions& options_;
};

}  // namespace

std::string weight_pointer_declaration(const WeightEntry& weight, const std::string& base, Backend backend) {
  const std::string type = storage_c_type(weight.dtype, backend);
  return "  const " + type + "* const " + weight.variable + " = reinterpret_cast<const " + type + "*>(" + base + " + " +
         std::to_string(weight.offset) + ");  // " + comment_text(weight.what) + "\n";
}

std::string arena_pointer_declaration(const LoweredModel::ArenaPointer& buffer, Backend backend) {
  const std::string type = storage_c_type(buffer.dtype, backend);
  return "  " + type + "* const " + buffer.variable + " = reinterpret_cast<" + type + "*>(hg_arena + " +
         buffer.offset_code + ");  // " + buffer.what + "\n";
}

std::vector<EmittedFile> emit_cpp(const CompiledGraph& compiled, const CppEmitOptions& options) {
  if (compiled.target.backend != Backend::kCpp)
    throw Error("emit_cpp: the graph was compiled for " + compiled.target.name + ", a " +
                backend_name(compiled.target.backend) + " target");
  LoweredModel m = lower(compiled, {options.name, options.ns, options.source, options.external_weights});
  const Graph& g = m.graph;
  const Target& target = m.target;
  const std::string& name = m.name;
  // Parameters: inputs, outputs, the batch (a run-time one), the weights (external ones).
  const ParameterList list = parameter_list(m);
  std::string params = list.params, args = list.args, usage = list.args, null_checks;
  for (const auto& v : list.variables) null_checks += "!" + v + " || ";
  const bool variable_batch = g.batch.variable();
  if (variable_batch) {
    params += ", int64_t batch";
    args += ", batch";
    usage += ", batch";
  }
  const bool external = m.external_weights;
  if (external) {
    params += ", const void* weights";
    args += ", weights";
    usage += ", weights";
  }
  null_checks += "!arena";

  // One block per kernel, in the planned order; kernel templates collected in
  // first-use order.
  CppKernelPrinter printer(g, options);
  const WalkedKernels walked = walk_kernels(m, printer);
  const PointerOf pointer = [&](const std::string& value) { return m.pointer(value); };
  const std::vector<std::string>& kernel_order = walked.templates;
  const bool uses_pool = walked.uses_pool;
  std::string body = walked.body;
  // Outputs the graph passes straight through from a weight. (An input
  // listed as an output is the same parameter: nothing to copy.)
  for (const auto& [out, key] : m.constant_outputs)
    body += "  std::memcpy(" + m.variable(out) + ", " + pointer(key) + ", " + std::to_string(g.type(out).bytes()) + ");\n";

  // Pointer declarations, for what the printed code read.
  const std::string blob_base = external ? "hg_weights" : "detail::kWeightBlob";
  std::string pointers;
  const auto read_weights = m.read_weights();
  if (external && !read_weights.empty())
    pointers += "  const unsigned char* const hg_weights = static_cast<const unsigned char*>(weights);\n";
  for (const WeightEntry* w : read_weights) pointers += weight_pointer_declaration(*w, blob_base, target.backend);
  if (external && !m.blob.empty()) null_checks = "!weights || " + null_checks;
  const auto buffers = m.read_buffers();
  if (!buffers.empty()) pointers += "  unsigned char* const hg_arena = static_cast<unsigned char*>(arena);\n";
  for (const auto& b : buffers) pointers += arena_pointer_declaration(b, target.backend);
  for (const auto& in : m.unread_inputs()) pointers += "  (void)" + in + ";  // not read by the graph\n";
  if (!uses_pool) pointers += "  (void)pool;  // no kernel of this graph splits its work\n";

  std::string kernels;
  for (const auto& k : kernel_order) kernels += template_text("kernels/" + k) + "\n";
  if (options.profile_hooks) {
    kernels += "// Defined by the profiling program: called before the first kernel (-1) and after each.\n"
               "void hg_profile_mark(int kernel);\n";
    body = "  hg_profile_mark(-1);\n" + body;
  }
  if (options.kernel_hooks)
    kernels +=
        "// Defined by the verify program: called after kernel `kernel` with the `bytes`\n"
        "// bytes of each value `output` it stores.\n"
        "void hg_after_kernel(int kernel, int output, const void* values, std::size_t bytes);\n";

  const std::string weights_name = weights_file_name(m);
  std::string weight_constants, weights_usage, weights_run_doc, weight_declaration, weight_checks;
  if (external) {
    weight_constants = "// Read-only weight data run() takes from the caller (`weights`): the bytes of\n"
                       "// " + weights_name + ", at an address aligned to kWeightAlignment.";
    if (options.weights_checksum)
      weight_constants += " kWeightsFnv1a is\n// that file's FNV-1a 64-bit hash, to check a loaded file against this code.";
    weight_constants += "\nconstexpr std::size_t kWeightBytes = " + std::to_string(m.blob.size()) + ";\n"
                        "constexpr std::size_t kWeightAlignment = " + std::to_string(kExternalWeightAlignment) + ";\n";
    if (options.weights_checksum)
      weight_constants += "constexpr std::uint64_t kWeightsFnv1a = " + hex64(m.weights_fnv1a64()) + "ull;\n";
    weights_usage =
        "//   const void* weights = ...;  // " + weights_name + " read or mapped into memory, 64-byte aligned\n";
    weights_run_doc = "// `weights`, between the outputs and the arena, is " + weights_name + "'s bytes:\n"
                      "// read only, so any number of runs may share them.\n";
    weight_checks =
        "  if (reinterpret_cast<std::uintptr_t>(weights) % kWeightAlignment != 0) return kMisalignedWeights;\n";
  } else {
    weight_constants = "// Read-only weight data compiled into " + weights_name + ".\n"
                       "constexpr std::size_t kWeightBytes = " + std::to_string(m.blob.size()) + ";\n";
    weight_declaration = "namespace detail {\nextern const unsigned char kWeightBlob[];\n}  // namespace detail\n";
  }

  std::string batch_constants, batch_status, c_batch_declarations, c_batch_definitions;
  if (variable_batch) {
    batch_constants = "\n\n" + batch_constants_text(m, "kArenaBytes");
    batch_status = ", kBatchOutOfRange = 4";
    c_batch_declarations =
        "\n// The arena `batch` items need (kMinBatch..kMaxBatch; run() returns 4 for others).\n"
        "size_t " +
        name + "_arena_bytes(int64_t batch);";
    c_batch_definitions =
        "\nextern \"C\" size_t " + name + "_arena_bytes(int64_t batch) { return " + m.ns + "::arena_bytes(batch); }";
    weight_checks = "  if (batch < kMinBatch || batch > kMaxBatch) return kBatchOutOfRange;\n" + weight_checks;
  }
  std::map<std::string, std::string> header = header_values(m, {{"WEIGHT_CONSTANTS", weight_constants},
                                                                {"BATCH_CONSTANTS", batch_constants},
                                                                {"BATCH_STATUS", batch_status},
                                                                {"C_BATCH_DECLARATIONS", c_batch_declarations},
                                                                {"WEIGHTS_USAGE", weights_usage},
                                                                {"WEIGHTS_RUN_DOC", weights_run_doc},
                                                                {"PARAMS", params},
                                                                {"USAGE_ARGS", usage},
                                                                {"UPPER_NAME", upper_case(name)},
                                                                {"C_USAGE_ARRAYS", c_usage_arrays(m)}});
  header.emplace("C_MACROS", c_macros(m, header));
  EmittedFile header_file{name + ".h", fill_template(template_text("model.h"), header, "model.h")};
  EmittedFile cpp{
      name + ".cpp",
      fill_template(
          template_text("model.cpp"),
          file_values(m, {{"KERNELS", kernels},
                          {"TARGET", target.name},
                          {"TARGET_MACRO", target.macro},
                          {"TARGET_INCLUDES",
                           target.intrinsics_header.empty() ? "" : "#include <" + target.intrinsics_header + ">\n"},
                          {"WEIGHT_DECLARATION", weight_declaration},
                          {"WEIGHT_CHECKS", weight_checks},
                          {"PARAMS", params},
                          {"ARGS", args},
                          {"NULL_CHECKS", null_checks},
                          {"POINTERS", pointers},
                          {"BODY", body},
                          {"C_BATCH_DEFINITIONS", c_batch_definitions}}),
          "model.cpp")};
  return {header_file, cpp, weights_file(m), manifest_file(m)};
}

}  // namespace hybgen
