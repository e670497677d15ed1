#include <cstdio>
#include <filesystem>

#include "cli/commands.h"
#include "ops/gemm_pack.h"
#include "cli/pass_dump.h"
#include "emit/generate.h"
#include "ir/error.h"
#include "pipeline.h"

namespace hybgen {

ModelSource ModelFlags::source(bool weights_optional) const {
  ModelSource s;
  s.path = model;
  if (!weights.empty()) s.weights = weights;
  for (const auto& flag : shapes) {
    auto [name, shape] = parse_shape_flag(flag);
    s.input_shapes[name] = shape;
  }
  s.weights_optional = weights_optional;
  s.random_weights_seed = random_weights_seed;
  return s;
}

std::string small_arena_note(const MemoryPlan& plan, bool small_arena) {
  // Only where it pays: smaller tiles cost speed, and a few percent of
  // arena is not worth that.
  if (small_arena || !plan.small_arena_bound || plan.small_arena_bound * 10 > plan.lower_bound_bytes * 9) return "";
  return "note: im2col columns set this arena; --small-arena plans about " + std::to_string(plan.small_arena_bound) +
         " bytes instead of " + std::to_string(plan.arena_bytes) + " (smaller tiles: slower convolutions)\n";
}

std::string weights_summary(std::size_t generated_bytes, std::size_t model_bytes) {
  std::string text = "weights " + std::to_string(generated_bytes) + " bytes";
  if (generated_bytes != model_bytes) text += " as generated (" + std::to_string(model_bytes) + " in the model)";
  return text;
}

int run_generate(const GenerateFlags& flags) {
  CompileOptions compile{!flags.no_optimize, nullptr, cpp_target(flags.target), flags.small_arena};
  PassDumps dumps(flags.dump.passes, flags.dump.dir, compile);  // a wrong pass name fails before any work
  compile.observer = dumps.observer();
  const Graph graph = load_any_model(flags.model.source());
  CppEmitOptions options;
  options.name = flags.name.empty() ? default_model_name(flags.model.model) : flags.name;
  options.ns = flags.ns;
  options.source = flags.model.model;
  options.external_weights = flags.external_weights;
  CompiledGraph compiled;
  try {
    compiled = compile_graph(graph, compile);
  } catch (const Error& e) {
    throw with_context(flags.model.model, e);
  }
  // Written before emitting: the passes' output is what explains an emitter failure.
  for (const auto& path : dumps.write()) std::printf("wrote %s\n", path.c_str());
  std::vector<EmittedFile> files;
  try {
    files = emit_cpp(compiled, options);
  } catch (const Error& e) {
    throw with_context(flags.model.model, e);
  }
  write_generated(files, flags.out_dir);
  // The weights' other form from an earlier run would be stale: a build that
  // compiles every .cpp in the folder would link an old NAME_weights.cpp.
  std::error_code ignored;
  std::filesystem::remove(std::filesystem::path(flags.out_dir) /
                              (options.name + (options.external_weights ? "_weights.cpp" : ".weights.bin")),
                          ignored);
  for (const auto& f : files) std::printf("wrote %s/%s\n", flags.out_dir.c_str(), f.filename.c_str());
  const std::size_t weight_bytes = emitted_weight_bytes(files);
  std::printf("%s: %zu kernels from %zu nodes, arena %zu bytes (lower bound %zu, without reuse %zu), %s\n",
              options.name.c_str(), compiled.kernels.size(), compiled.graph.nodes.size(), compiled.plan.arena_bytes,
              compiled.plan.lower_bound_bytes, compiled.plan.naive_bytes,
              weights_summary(weight_bytes, compiled.graph.weight_bytes()).c_str());
  const std::string note = large_weights_note(options.name, weight_bytes, options.external_weights) +
                           small_arena_note(compiled.plan, flags.small_arena);
  std::fflush(stdout);  // the note after the summary it is about
  if (!note.empty()) std::fprintf(stderr, "hybgen: %s", note.c_str());
  return 0;
}

}  // namespace hybgen
