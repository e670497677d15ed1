#include <cstdio>
#include <map>
#include <string>

#include "cli/commands.h"
#include "io/npy.h"
#include "ir/error.h"
#include "ir/names.h"
#include "verify/verify.h"

namespace hybgen {

int run_verify(const VerifyFlags& flags) {
  if (!(flags.tolerance >= 0))  // NaN too
    throw Error("--tolerance must be a non-negative number, not " + std::to_string(flags.tolerance));
  VerifyOptions options;
  options.seed = flags.seed;
  options.keep_build = flags.keep;
  options.compile = flags.compile.options();
  const bool exact = options.compile.target.precision == Precision::kFP32;
  options.tolerance =
      flags.tolerance_given || exact ? flags.tolerance : default_tolerance(options.compile.target.precision);
  options.threads = flags.threads;
  options.external_weights = flags.external_weights;
  if (!flags.cxx_flags.empty()) options.cxx_flags += " " + flags.cxx_flags;
  options.bisect = flags.bisect ? BisectMode::kAlways : flags.no_bisect ? BisectMode::kOff : BisectMode::kOnFailure;
  ModelSource source = flags.model.source();
  for (const auto& text : flags.inputs) {
    auto [name, path] = parse_named_path(text, "--input");
    options.inputs[name] = read_npy(path);
    source.shape_hints[name] = options.inputs[name].shape;  // MXNet files carry no input shapes, ONNX ones may be symbolic
  }
  std::map<std::string, std::string> expected_files;  // output -> the .npy it is compared with
  for (const auto& text : flags.expected) {
    auto [name, path] = parse_named_path(text, "--expected");
    options.expected[name] = read_npy(path);
    expected_files[name] = path;
  }
  const Graph graph = load_any_model(source);
  VerifyReport report;
  try {
    report = verify_model(graph, options);
  } catch (const Error& e) {
    throw with_context(flags.model.model, e);
  }
  if (!report.reference_note.empty()) std::printf("%s\n", report.reference_note.c_str());
  std::printf("%-28s %-18s %13s %13s  %-6s %s\n", "output", "shape", "max abs err", "max rel err", "result",
              "compared with");
  for (const auto& c : report.checks) {
    const std::string against = c.against == "expected" ? "expected " + expected_files.at(c.name) : c.against;
    std::printf("%-28s %-18s %13.3g %13.3g  %-6s %s\n", printable_name(c.name).c_str(), shape_str(c.shape).c_str(), c.max_abs_error,
                c.max_rel_error, c.ok ? "OK" : "FAIL", against.c_str());
  }
  std::printf("compiled in %.2f s by %s%s; tolerance %g (relative to the largest reference magnitude)\n",
              report.compile_seconds, report.compiler.c_str(),
              report.runner.empty() ? "" : (", run under " + report.runner).c_str(), options.tolerance);
  if (report.board_measured)
    std::printf("on the board: peak stack %lu bytes, %lu instructions per inference\n", report.stack_bytes,
                report.instructions);
  std::fputs(bisect_text(report.bisect).c_str(), stdout);
  if (!report.ok && report.bisect.ran && !report.bisect.first) {
    bool reference_failed = false;
    for (const auto& c : report.checks) reference_failed = reference_failed || (!c.ok && c.against == "reference");
    std::printf(reference_failed
                    ? "  the generated code computes the optimized graph, whose outputs differ from the original "
                      "graph's: an optimizer pass changed what it computes (compare with --no-optimize)\n"
                    : "  the generated code computes what the reference does; the expected arrays differ from both\n");
  }
  if (!report.build_dir.empty()) std::printf("build kept in %s\n", report.build_dir.c_str());
  if (!report.bisect.build_dir.empty() && report.bisect.build_dir != report.build_dir)
    std::printf("build with kernel hooks (kernels.bin) kept in %s\n", report.bisect.build_dir.c_str());
  std::printf("verify: %s\n", report.ok ? "PASS" : "FAIL");
  return report.ok ? 0 : 1;
}

}  // namespace hybgen
