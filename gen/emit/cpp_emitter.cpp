// The C++ emitter. Texts come from templates/; this file decides names,
// offsets and the order of statements, so the output is deterministic: the
// same graph always prints the same bytes.
#include "emit/cpp_emitter.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "emit/cpp_fused.h"
#include "emit/templates.h"
#include "ir/error.h"
#include "ir/names.h"
#include "ops/gemm_pack.h"
#include "ops/op.h"
#include "version.h"

namespace hybgen {
namespace {

const std::set<std::string> kReserved = {
    "alignas", "alignof", "and", "asm", "auto", "bool", "break", "case", "catch", "char", "class", "const",
    "constexpr", "continue", "decltype", "default", "delete", "do", "double", "else", "enum", "explicit", "export",
    "extern", "false", "float", "for", "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new",
    "noexcept", "not", "nullptr", "operator", "or", "private", "protected", "public", "register", "return", "short",
    "signed", "sizeof", "static", "struct", "switch", "template", "this", "throw", "true", "try", "typedef",
    "typename", "union", "unsigned", "using", "virtual", "void", "volatile", "while", "xor",
    // names the generated run() uses itself, and fused kernels' locals
    "arena", "pool", "weights", "kernels", "detail", "run", "std", "epilogue", "channel", "index", "v", "o"};

// Fused kernels name their scalars x0, v1, ... and loop counters i0, ...
bool is_kernel_local(const std::string& name) {
  if (name.size() < 2 || (name[0] != 'x' && name[0] != 'v' && name[0] != 'i')) return false;
  return std::all_of(name.begin() + 1, name.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

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

// Unique C++ variable names for graph values: the value's name with every
// character outside [A-Za-z0-9_] replaced, cut to kMaxIdentifierBytes, and
// numbered where two come out alike.
class NameTable {
 public:
  const std::string& operator()(const std::string& value) {
    auto it = names_.find(value);
    if (it != names_.end()) return it->second;
    constexpr std::size_t kMaxIdentifierBytes = 48;
    std::string base = c_identifier(value.substr(0, kMaxIdentifierBytes));
    if (kReserved.count(base) || is_kernel_local(base) || base.rfind("hg_", 0) == 0) base += "_";
    std::string name = base;
    for (int& i = next_suffix_.emplace(base, 2).first->second; taken_.count(name); ++i)
      name = base + "_" + std::to_string(i);
    taken_.insert(name);
    return names_[value] = name;
  }

 private:
  std::map<std::string, std::string> names_;
  std::set<std::string> taken_;
  std::map<std::string, int> next_suffix_;  // keeps many alike names linear
};

std::string shape_list(const Shape& s) {
  std::string out = "{";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return (s.empty() ? std::string("{1") : out) + "}";
}

std::size_t align_up(std::size_t n, std::size_t a) { return (n + a - 1) / a * a; }

// FNV-1a, 64 bits: lets a program check that a weights file it loaded is the
// one this code was generated with.
uint64_t fnv1a64(const std::vector<uint8_t>& bytes) {
  uint64_t hash = 14695981039346656037ull;
  for (uint8_t b : bytes) hash = (hash ^ b) * 1099511628211ull;
  return hash;
}

std::string hex64(uint64_t v) {
  char text[19];
  std::snprintf(text, sizeof text, "0x%016llx", static_cast<unsigned long long>(v));
  return text;
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

// Intrinsics headers go at global scope, before the kernels' namespace.
std::string target_includes(const std::string& target) {
  if (target == "x86-64-v4" || target == "x86-64-v3") return "#include <immintrin.h>\n";
  if (target == "armv8-a") return "#include <arm_neon.h>\n";
  return "";
}

}  // namespace

std::string c_identifier(const std::string& name) {
  std::string out;
  for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "v_" + out;
  return out;
}

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

std::vector<EmittedFile> emit_cpp(const CompiledGraph& compiled, const CppEmitOptions& options) {
  const Graph& g = compiled.graph;
  const MemoryPlan& plan = compiled.plan;
  const CppTarget& target = compiled.target;
  const std::string& name = options.name;
  const std::string ns = options.ns.empty() ? name : options.ns;
  if (name.empty() || c_identifier(name) != name)
    throw Error("model name '" + name + "' is not a C identifier (use --name)");
  if (kReserved.count(name))
    throw Error("model name '" + name + "' is a C++ keyword or a name the generated code uses itself (use --name)");
  if (c_identifier(ns) != ns) throw Error("namespace '" + ns + "' is not a C identifier");
  if (kReserved.count(ns))
    throw Error("namespace '" + ns + "' is a C++ keyword or a name the generated code uses itself");
  const std::string source = options.source.empty() ? std::string("a hybgen graph") : options.source;

  NameTable var;
  std::map<std::string, std::string> common = {
      {"NAME", name}, {"NAMESPACE", ns}, {"VERSION", kVersion}, {"SOURCE", comment_text(source)},
      {"GRAPH_NAME", comment_text(g.name)}};

  // Parameters: inputs, then outputs.
  std::string params, args, null_checks, usage;
  std::set<std::string> param_values;
  for (const auto& in : g.inputs) {
    params += (params.empty() ? "" : ", ") + std::string("const float* ") + var(in);
    args += (args.empty() ? "" : ", ") + var(in);
    null_checks += "!" + var(in) + " || ";
    usage += (usage.empty() ? "" : ", ") + var(in);
    param_values.insert(in);
  }
  for (const auto& out : g.outputs) {
    if (param_values.count(out)) continue;
    params += (params.empty() ? "" : ", ") + std::string("float* ") + var(out);
    args += (args.empty() ? "" : ", ") + var(out);
    null_checks += "!" + var(out) + " || ";
    usage += (usage.empty() ? "" : ", ") + var(out);
    param_values.insert(out);
  }
  const bool external = options.external_weights;
  if (external) {
    params += ", const void* weights";
    args += ", weights";
    usage += ", weights";
  }
  null_checks += "!arena";

  // Weights in one blob, each 64-byte aligned, in the order the kernels
  // first read them; a weight a kernel reads re-laid out (packed panels) is
  // stored in that layout under a name of its own.
  std::vector<uint8_t> blob;
  const std::string blob_base = external ? "hg_weights" : "detail::kWeightBlob";
  std::string weight_table, weight_pointers;
  std::map<std::string, std::string> blob_var;  // blob entry -> its pointer variable
  auto add_to_blob = [&](const std::string& entry, const std::string& variable, const uint8_t* bytes,
                         std::size_t size, const std::string& what) -> const std::string& {
    auto it = blob_var.find(entry);
    if (it != blob_var.end()) return it->second;
    blob.resize(align_up(blob.size(), 64), 0);
    weight_table += "// " + comment_text(entry) + ": " + comment_text(what) + " at byte " +
                    std::to_string(blob.size()) + "\n";
    weight_pointers += "  const float* const " + variable + " = reinterpret_cast<const float*>(" + blob_base + " + " +
                       std::to_string(blob.size()) + ");  // " + comment_text(what) + "\n";
    blob.insert(blob.end(), bytes, bytes + size);
    return blob_var[entry] = variable;
  };
  // A weight that is also a graph output keeps the output's parameter name;
  // its data pointer gets another.
  auto weight_var = [&](const std::string& value) -> const std::string& {
    const Constant& c = g.constants.at(value);
    if (c.data.size() != c.type.bytes())
      throw Error("weight '" + value + "' has no data (load the .safetensors beside the model)");
    return add_to_blob(value, g.is_output(value) ? var(value + "_weight") : var(value), c.data.data(), c.data.size(),
                       "float32" + shape_str(c.type.shape));
  };
  // One block per kernel, in the planned order; kernel templates collected in
  // first-use order. Pointer expressions of values: weights, parameters,
  // arena buffers, and views of inputs or weights (declared where made).
  const PointerOf pointer = [&](const std::string& value) {
    return g.is_constant(value) ? weight_var(value) : var(value);
  };
  std::vector<std::string> kernel_order;
  std::set<std::string> kernel_seen;
  auto use_templates = [&](const std::vector<std::string>& names) {
    for (const auto& name : names)
      for (const auto& k : kernel_templates_with_needs(name))
        if (kernel_seen.insert(k).second) kernel_order.push_back(k);
  };
  std::string body;
  nlohmann::ordered_json kernels_json = nlohmann::ordered_json::array();
  for (std::size_t step = 0; step < compiled.kernels.size(); ++step) {
    const Kernel& kernel = compiled.kernels[step];
    const Node& first = g.nodes[kernel.nodes.front()];
    std::string heading = "  // kernel " + std::to_string(step) + " (" + kernel_kind_name(kernel.kind) + "): ";
    for (std::size_t i = 0; i < kernel.nodes.size(); ++i) {
      const Node& node = g.nodes[kernel.nodes[i]];
      heading += (i ? " + " : "") + comment_text(node.name) + " (" + node.op + ")";
    }
    std::string out_shapes;
    for (const auto& out : kernel.outputs) out_shapes += (out_shapes.empty() ? "" : ", ") + shape_str(g.type(out).shape);
    heading += " -> " + out_shapes + "\n";
    std::string code;
    try {
      switch (kernel.kind) {
        case KernelKind::kView:
          if (!plan.find(kernel.outputs[0]))
            code = "const float* const " + var(kernel.outputs[0]) + " = " + pointer(first.inputs[0]) + ";";
          else
            code = "// shares the bytes of " + comment_text(first.inputs[0]);
          break;
        case KernelKind::kElementwise:
          use_templates(scalar_kernel_templates(g, kernel));
          code = print_elementwise_loop(g, kernel, pointer);
          break;
        case KernelKind::kOp:
        case KernelKind::kEpilogue: {
          const OpDef& def = find_op(first.op);
          if (!def.emit_cpp) throw Error("the C++ backend cannot emit this op");
          CppEmitContext ctx{first, target, {}, {}, {}, {}, {}, {}, {}, {}, "pool"};
          for (const auto& in : first.inputs) ctx.in_types.push_back(g.type(in));
          for (int i = 0; i < static_cast<int>(first.inputs.size()); ++i) {
            const std::string& in = first.inputs[i];
            std::optional<std::vector<float>> packed;
            if (def.pack_constant && g.is_constant(in) && g.constants.at(in).has_data())
              packed = def.pack_constant(first.attrs, i, ctx.in_types, g.constants.at(in).f32_data(), target);
            ctx.in_packed.push_back(packed.has_value());
            if (!packed) {
              ctx.in.push_back(pointer(in));
              continue;
            }
            const std::string entry = in + " packed for " + first.name;
            ctx.in.push_back(add_to_blob(entry, var(entry), reinterpret_cast<const uint8_t*>(packed->data()),
                                         packed->size() * sizeof(float),
                                         std::to_string(packed->size()) + " floats, " + in + " re-laid out for " +
                                             first.name));
          }
          if (const BufferPlacement* scratch = plan.find(scratch_value(kernel))) {
            ctx.scratch = var(scratch_value(kernel));
            ctx.scratch_floats = static_cast<int64_t>(scratch->bytes / sizeof(float));
          }
          const bool fused = kernel.kind == KernelKind::kEpilogue;
          for (const auto& out : first.outputs) {
            ctx.out.push_back(var(fused ? epilogue_result(g, kernel) : out));
            ctx.out_types.push_back(g.type(out));
          }
          if (def.input_placement) {
            const BufferPlacement* out = plan.find(first.outputs[0]);
            std::vector<TensorType> in_types = ctx.in_types;
            const auto offsets = def.input_placement(first.attrs, in_types, g.type(first.outputs[0]));
            for (std::size_t i = 0; i < offsets.size(); ++i) {
              const BufferPlacement* in = plan.find(first.inputs[i]);
              ctx.in_placed.push_back(out && in && in->offset == out->offset + offsets[i]);
            }
          }
          if (fused) {
            use_templates(scalar_kernel_templates(g, kernel));
            code = print_epilogue(g, kernel, pointer, "epilogue") + "\n";
            ctx.epilogue = "epilogue";
          }
          const CppCall call = def.emit_cpp(ctx);
          use_templates(call.kernels);
          code += call.code;
          if (fused) code = "{\n" + indent_lines(code, "  ") + "}";
          break;
        }
      }
    } catch (const Error& e) {
      throw Error(node_label(first.name, first.op) + ": " + e.what());
    }
    body += heading + indent_lines(code, "  ");
    if (options.profile_hooks) body += "  hg_profile_mark(" + std::to_string(step) + ");\n";
    nlohmann::ordered_json nodes = nlohmann::ordered_json::array();
    for (int index : kernel.nodes) nodes.push_back(g.nodes[index].name);
    kernels_json.push_back({{"kernel", step}, {"kind", kernel_kind_name(kernel.kind)}, {"nodes", nodes}});
  }
  // Outputs the graph passes straight through from an input or a weight.
  // (An input listed as an output is the same parameter: nothing to copy.)
  for (const auto& out : g.outputs)
    if (g.is_constant(out))
      body += "  std::memcpy(" + var(out) + ", " + weight_var(out) + ", " + std::to_string(g.type(out).bytes()) + ");\n";

  // Pointer declarations, for the values the body names: values that live
  // only inside a fused kernel, or whose bytes another kernel already wrote in
  // place (a placed Concat input), need none.
  std::string code_only;  // the body without its comments
  for (std::size_t at = 0; at < body.size();) {
    const std::size_t comment = body.find("//", at);
    code_only += body.substr(at, comment == std::string::npos ? std::string::npos : comment - at);
    at = comment == std::string::npos ? body.size() : body.find('\n', comment);
  }
  // Every identifier of the body, collected in one pass: searching the text
  // once per buffer grew with kernels x text.
  std::unordered_set<std::string> words;
  {
    const auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    for (std::size_t at = 0; at < code_only.size();) {
      if (!word(code_only[at])) {
        ++at;
        continue;
      }
      std::size_t end = at;
      while (end < code_only.size() && word(code_only[end])) ++end;
      words.emplace(code_only, at, end - at);
      at = end;
    }
  }
  auto mentioned = [&](const std::string& name) { return words.count(name) != 0; };
  std::string pointers = weight_pointers;
  if (external && !weight_pointers.empty())
    pointers = "  const unsigned char* const hg_weights = static_cast<const unsigned char*>(weights);\n" + pointers;
  if (external && !blob.empty()) null_checks = "!weights || " + null_checks;
  if (!weight_table.empty()) weight_table += "\n";
  std::string arena_pointers;
  for (const auto& b : plan.buffers)
    if (mentioned(var(b.value)))
      arena_pointers += "  float* const " + var(b.value) + " = reinterpret_cast<float*>(hg_arena + " +
                        std::to_string(b.offset) + ");  // " +
                        (g.types.count(b.value) ? shape_str(g.type(b.value).shape) : std::to_string(b.bytes) + " bytes") +
                        ", steps " + std::to_string(b.first_step) + "-" + std::to_string(b.last_step) + "\n";
  if (!arena_pointers.empty())
    pointers += "  unsigned char* const hg_arena = static_cast<unsigned char*>(arena);\n" + arena_pointers;
  for (const auto& in : g.inputs)
    if (!mentioned(var(in))) pointers += "  (void)" + var(in) + ";  // not read by the graph\n";
  if (!mentioned("pool")) pointers += "  (void)pool;  // no kernel of this graph splits its work\n";

  std::string kernels;
  for (const auto& k : kernel_order) kernels += template_text("kernels/" + k) + "\n";
  if (options.profile_hooks) {
    kernels += "// Defined by the profiling program: called before the first kernel (-1) and after each.\n"
               "void hg_profile_mark(int kernel);\n";
    body = "  hg_profile_mark(-1);\n" + body;
  }

  std::string shapes;
  auto shape_block = [&](const std::string& value, const char* what) {
    const TensorType& t = g.type(value);
    const std::string c = camel(var(value));
    shapes += "\n// " + std::string(what) + " '" + comment_text(value) + "': float32" + shape_str(t.shape) + "\n";
    shapes += "constexpr std::int64_t k" + c + "Shape[] = " + shape_list(t.shape) + ";\n";
    shapes += "constexpr std::size_t k" + c + "Size = " + std::to_string(t.num_elements()) + ";\n";
  };
  for (const auto& in : g.inputs) shape_block(in, "Input");
  for (const auto& out : g.outputs) shape_block(out, "Output");

  std::string guard = "HYBGEN_";
  for (char c : name) guard += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  guard += "_H_";

  const std::string weights_file = external ? name + ".weights.bin" : name + "_weights.cpp";
  const uint64_t weights_hash = fnv1a64(blob);
  std::string weight_constants, weights_usage, weights_run_doc, weight_declaration, weight_checks;
  if (external) {
    weight_constants = "// Read-only weight data run() takes from the caller (`weights`): the bytes of\n"
                       "// " + weights_file + ", at an address aligned to kWeightAlignment. kWeightsFnv1a is\n"
                       "// that file's FNV-1a 64-bit hash, to check a loaded file against this code.\n"
                       "constexpr std::size_t kWeightBytes = " + std::to_string(blob.size()) + ";\n"
                       "constexpr std::size_t kWeightAlignment = 64;\n"
                       "constexpr std::uint64_t kWeightsFnv1a = " + hex64(weights_hash) + "ull;\n";
    weights_usage =
        "//   const void* weights = ...;  // " + weights_file + " read or mapped into memory, 64-byte aligned\n";
    weights_run_doc = "// `weights`, between the outputs and the arena, is " + weights_file + "'s bytes:\n"
                      "// read only, so any number of runs may share them.\n";
    weight_checks =
        "  if (reinterpret_cast<std::uintptr_t>(weights) % kWeightAlignment != 0) return kMisalignedWeights;\n";
  } else {
    weight_constants = "// Read-only weight data compiled into " + weights_file + ".\n"
                       "constexpr std::size_t kWeightBytes = " + std::to_string(blob.size()) + ";\n";
    weight_declaration = "namespace detail {\nextern const unsigned char kWeightBlob[];\n}  // namespace detail\n";
  }

  auto with = [&](std::map<std::string, std::string> extra) {
    extra.insert(common.begin(), common.end());
    return extra;
  };
  EmittedFile header{name + ".h", fill_template(template_text("model.h"),
                                                with({{"GUARD", guard},
                                                      {"ARENA_BYTES", std::to_string(std::max<std::size_t>(plan.arena_bytes, 1))},
                                                      {"ARENA_ALIGNMENT", std::to_string(plan.alignment)},
                                                      {"WEIGHT_CONSTANTS", weight_constants},
                                                      {"WEIGHTS_USAGE", weights_usage},
                                                      {"WEIGHTS_RUN_DOC", weights_run_doc},
                                                      {"NUM_INPUTS", std::to_string(g.inputs.size())},
                                                      {"NUM_OUTPUTS", std::to_string(g.outputs.size())},
                                                      {"SHAPES", shapes},
                                                      {"PARAMS", params},
                                                      {"USAGE_ARGS", usage}}),
                                                "model.h")};
  EmittedFile cpp{name + ".cpp", fill_template(template_text("model.cpp"),
                                               with({{"KERNELS", kernels},
                                                     {"TARGET", target.name},
                                                     {"TARGET_MACRO", target_macro(target.name)},
                                                     {"TARGET_INCLUDES", target_includes(target.name)},
                                                     {"WEIGHT_DECLARATION", weight_declaration},
                                                     {"WEIGHT_CHECKS", weight_checks},
                                                     {"PARAMS", params},
                                                     {"ARGS", args},
                                                     {"NULL_CHECKS", null_checks},
                                                     {"POINTERS", pointers},
                                                     {"BODY", body}}),
                                               "model.cpp")};
  // The weights: the blob's bytes as they are, or as a string literal in C++.
  EmittedFile weights{weights_file, external ? std::string(blob.begin(), blob.end())
                                             : fill_template(template_text("weights.cpp"),
                                                             with({{"WEIGHT_BYTES", std::to_string(blob.size())},
                                                                   {"WEIGHT_TABLE", weight_table},
                                                                   {"BLOB_SIZE", std::to_string(blob.size() + 1)},
                                                                   {"BLOB", blob_literal(blob)}}),
                                                             "weights.cpp")};

  nlohmann::ordered_json manifest;
  manifest["format"] = "hybgen-manifest";
  manifest["hybgen_version"] = kVersion;
  manifest["name"] = name;
  manifest["namespace"] = ns;
  manifest["source"] = source;
  manifest["entry"] = name + "_run";
  manifest["target"] = target.name;
  manifest["arena_bytes"] = plan.arena_bytes;
  manifest["arena_alignment"] = plan.alignment;
  manifest["weights_bytes"] = blob.size();
  manifest["weights_storage"] = external ? "external" : "embedded";
  manifest["weights_file"] = weights_file;
  manifest["weights_fnv1a64"] = hex64(weights_hash);
  auto io_list = [&](const std::vector<std::string>& values) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const auto& v : values)
      list.push_back({{"name", v}, {"c_name", var(v)}, {"shape", g.type(v).shape}, {"dtype", dtype_name(g.type(v).dtype)}});
    return list;
  };
  manifest["inputs"] = io_list(g.inputs);
  manifest["outputs"] = io_list(g.outputs);
  manifest["kernels"] = kernels_json;
  manifest["memory_plan"] = nlohmann::ordered_json::parse(plan.to_json().dump());
  EmittedFile manifest_file{name + ".manifest.json", manifest.dump(2) + "\n"};

  return {header, cpp, weights, manifest_file};
}

}  // namespace hybgen
