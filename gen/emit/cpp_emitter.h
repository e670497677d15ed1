// The C++ backend: prints a compiled graph as NAME.h, NAME.cpp,
// NAME_weights.cpp (or, with external weights, the raw NAME.weights.bin that
// run() then takes as an argument) and NAME.manifest.json following the
// generated-code contract (docs/generated-code.md): C++11, no heap, no mutable globals, the
// caller owns the arena, an extern "C" entry point.
//
//   std::vector<EmittedFile> files = emit_cpp(compile_graph(g), {"mlp", "mlp"});
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "lower/lowering.h"
#include "ops/op.h"
#include "pipeline.h"

namespace hybgen {

struct CppEmitOptions {
  std::string name = "model";  // file stem and C symbol prefix
  std::string ns;              // C++ namespace; empty: same as name
  std::string source;          // model file name, for comments
  // For `hybgen bench --profile` only: run() calls kernels::hg_profile_mark(-1)
  // before the first kernel and hg_profile_mark(k) after kernel k; the
  // program linking the model defines it. Off, the output has no trace of it.
  bool profile_hooks = false;
  // For `hybgen verify --bisect` only: after kernel k, run() calls
  // kernels::hg_after_kernel(k, j, values, bytes) for each value j the kernel
  // stores (Kernel::outputs, in order), with its bytes; the program linking
  // the model defines it. Indices only: no model name becomes code. Off,
  // the output has no trace of it.
  bool kernel_hooks = false;
  // Weights as NAME.weights.bin (raw bytes) that the caller loads and passes
  // to run(), instead of NAME_weights.cpp compiled into the program: for
  // weights too large to compile (compilers hold many bytes of memory per
  // byte of a string literal; docs/performance.md), or stored apart from the code.
  bool external_weights = false;
  // External weights: kWeightsFnv1a, the weights' hash, in NAME.h. Off, the
  // code does not depend on the weight values at all (hybridized blocks reuse
  // one compiled library whatever the parameters hold).
  bool weights_checksum = true;
};

struct EmittedFile {
  std::string filename;
  std::string content;
};

// The declarations of run()'s pointers both printers write, each of the C
// type of its dtype: `  const T* const VAR = reinterpret_cast<const T*>(BASE
// + OFFSET);  // WHAT` for a weight in the blob at `base`, `  T* const VAR =
// reinterpret_cast<T*>(hg_arena + OFFSET);  // WHAT` for an arena buffer.
std::string weight_pointer_declaration(const WeightEntry& weight, const std::string& base, Backend backend);
// The header's constants of a run-time batch (kMinBatch, kMaxBatch,
// arena_bytes(batch)); `arena_constant` names the arena at kMaxBatch.
std::string batch_constants_text(const LoweredModel& m, const std::string& arena_constant);
std::string arena_pointer_declaration(const LoweredModel::ArenaPointer& buffer, Backend backend);

// Throws Error when a weight has no data, or a name is not a C identifier.
std::vector<EmittedFile> emit_cpp(const CompiledGraph& compiled, const CppEmitOptions& options);

// Bytes of weight data the emitted files carry (the weights blob, as
// the manifest's "weights_bytes" gives): packed and transformed weights can
// take more than the model's own (Winograd filters: 36 values per 3x3).
std::size_t emitted_weight_bytes(const std::vector<EmittedFile>& files);

// For weights compiled in (not external) past 64 MiB: a note that compiling
// them takes much memory, and how to avoid it; "" otherwise.
std::string large_weights_note(const std::string& name, std::size_t weight_bytes, bool external_weights);

// Pieces the CUDA printer shares with this one.
// run()'s data parameters: inputs (`const T*`), then outputs (`T*`).
struct ParameterList {
  std::string params;                  // "const float* data, float* prob"
  std::string args;                    // "data, prob"
  std::vector<std::string> variables;  // {"data", "prob"}
};
ParameterList parameter_list(const LoweredModel& model);
// `extra` with the values every file template takes: NAME, NAMESPACE,
// VERSION, SOURCE, GRAPH_NAME.
std::map<std::string, std::string> file_values(const LoweredModel& model, std::map<std::string, std::string> extra);
// `extra` with those and the values both backends' headers take: GUARD,
// ARENA_BYTES, ARENA_ALIGNMENT, NUM_INPUTS, NUM_OUTPUTS, SHAPES.
std::map<std::string, std::string> header_values(LoweredModel& model, std::map<std::string, std::string> extra);
// The constants naming each input's and output's shape and size.
std::string shape_constants(LoweredModel& model);
std::string header_guard(const std::string& name);
// A view kernel's statement: a pointer to its input's bytes, or a comment
// where the memory plan already placed it there.
std::string view_code(LoweredModel& model, const LoweredKernel& kernel);
// What a kernel whose inputs all lie in place already prints (no code):
// "// input I was written in place by its producer", one line per input.
std::string in_place_comment(const LoweredKernel& kernel);
// NAME_weights.cpp (the blob as a string literal) or NAME.weights.bin.
std::string weights_file_name(const LoweredModel& model);
EmittedFile weights_file(const LoweredModel& model);
EmittedFile manifest_file(const LoweredModel& model);

}  // namespace hybgen
