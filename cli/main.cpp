// hybgen: turns a neural network graph into standalone C++.
//
//   hybgen model.json -o out/              generate C++
//   hybgen verify model.json               compile, run and compare with the reference
//   hybgen run model.json --input data=x.npy --output fc=y.npy   the generated code on whole arrays
//   hybgen inspect model.json              nodes, FLOPs, memory plan (--report r.html, --dot g.dot)
//   hybgen ops                             the supported operators
//   hybgen bench model.json                time the generated code
//   hybgen import net-symbol.json -o net   MXNet export -> model.json + .safetensors
//   hybgen import model.onnx -o net        ONNX model -> model.json + .safetensors
//   hybgen quantize m.json --calibration x.npy -o m_int8   int8 post-training quantization
//   hybgen board --target cortex-m4 -o fw  startup.c + link.ld for a firmware project
#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>
#include <new>
#include <string>

#include "cli/commands.h"
#include "ops/gemm_pack.h"
#include "ir/error.h"
#include "version.h"

namespace {

// Messages escape the names they quote (ir/names.h); this catches any other
// control character (a terminal escape, a carriage return) that reached one.
// Newlines and tabs stay: a compiler's output is quoted over several lines.
std::string printable_message(const std::string& text) {
  std::string out;
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if ((byte < 0x20 && c != '\n' && c != '\t') || byte == 0x7f) {
      char escaped[5];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out;
}

void add_model_flags(CLI::App& app, hybgen::ModelFlags& flags, bool required) {
  app.add_option("model", flags.model,
                 "model.json (hybgen), NAME-symbol.json (MXNet), model.onnx (ONNX) or model.tflite (TFLite), told "
                 "apart by content")
      ->required(required);
  app.add_option("--weights,-w", flags.weights,
                 "weights file (default: the .safetensors beside model.json, or the NAME-XXXX.params beside an MXNet "
                 "symbol file; an ONNX model holds its own, or names external data files next to it)");
  app.add_option("--shape", flags.shapes,
                 "input shape of an MXNet model, or of an ONNX input with symbolic dimensions (batch), "
                 "e.g. --shape data=1,3,224,224 (repeatable)")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--random-weights", flags.random_weights_seed,
                 "MXNet symbol file without .params: use seeded random weights of the shapes the graph needs "
                 "(for testing only)");
}

void add_dump_flags(CLI::App& app, hybgen::PassDumpFlags& flags) {
  app.add_option("--dump-after", flags.passes,
                 "write the graph (and kernels and memory plan, once made) after this pass as DIR/NN-PASS.json, "
                 "NN its index in the pipeline (repeatable, comma-separated, or 'all'; a wrong name lists the passes)")
      ->allow_extra_args(false)
      ->delimiter(',')
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--dump-dir", flags.dir, "folder for --dump-after files (created if missing)")->capture_default_str();
}

void add_external_weights_flag(CLI::App& app, bool& external) {
  app.add_flag("--external-weights", external,
               "write the weights to NAME.weights.bin, which the program loads (64-byte aligned) and passes to run(), "
               "instead of compiling them in as NAME_weights.cpp: for weights too large to compile (a compiler needs "
               "many times their size in memory), or to keep them apart from the code");
}

// --target, --no-optimize, --small-arena, --io-precision, --precision and --max-weight-growth: what
// CompileFlags::options() reads.
void add_compile_flags(CLI::App& app, hybgen::CompileFlags& flags, const std::string& default_target_text) {
  std::string targets;
  for (const hybgen::Target& t : hybgen::all_targets()) targets += "\n  " + t.name + ": " + t.summary;
  app.add_option("--target", flags.target,
                 "what the code is generated for: the backend (C++ or CUDA), the instructions its kernels use and "
                 "the layout of packed weights (default: " + default_target_text + ")" + targets)
      ->check(CLI::IsMember(hybgen::target_names()));
  app.add_flag("--no-optimize", flags.no_optimize,
               "skip the optimizer: no folding, no fusion, no shared buffers (one kernel per node), to compare");
  app.add_flag("--small-arena", flags.small_arena,
               "shrink scratch that would set the arena (im2col columns) into the room the activations leave: a "
               "smaller arena, paid for with slower convolutions");
  app.add_option("--io-precision", flags.io_precision,
                 "what run() takes and gives: fp32, or quantized: a quantized model's integers (int8 or uint8, at "
                 "the scale and zero point of the quantize each input enters and the dequantize each output leaves, "
                 "as TensorFlow Lite Micro takes them), so no float is computed at the edges; or half: with "
                 "--precision fp16/bf16, the __half / __nv_bfloat16 values the model stores")
      ->check(CLI::IsMember({"fp32", "quantized", "half"}))
      ->capture_default_str();
  app.add_option("--precision", flags.precision,
                 "the arithmetic of a float model: fp32 (exact); on the CUDA targets tf32 (the GEMM and "
                 "convolution tiles on tensor cores, operands rounded to TF32, FP32 sums and storage), or fp16 / "
                 "bf16 (weights and activations stored in half precision, computed with FP32 sums; run()'s inputs "
                 "and outputs stay float32)")
      ->check(CLI::IsMember({"fp32", "tf32", "fp16", "bf16"}))
      ->capture_default_str();
  app.add_option("--max-weight-growth", flags.max_weight_growth,
                 "the most weight values a kernel may keep per weight of the model, for weights that must stay small "
                 "(flash, memory bandwidth): Winograd's 3x3 convolutions keep 4x (F(4x4)) or 1.78x (F(2x2)) and are "
                 "not chosen above the bound; below 1.78 F(2x2) transforms the filters as it runs (1x); default: no "
                 "bound; inspect reports the growth")
      ->check(CLI::Range(1.0, 1e9));
}

}  // namespace

int main(int argc, char** argv) {
  using namespace hybgen;
  CLI::App app{"hybgen " + std::string(kVersion) +
               ": turn a neural network graph into standalone, dependency-free C++.\n\n"
               "  hybgen MODEL -o OUT/           generate C++ (MODEL: hybgen's model.json, an MXNet export, an ONNX or "
               "a TFLite file)"};
  app.set_version_flag("--version", std::string("hybgen ") + kVersion);
  app.require_subcommand(0, 1);

  GenerateFlags generate;
  add_model_flags(app, generate.model, false);
  app.add_option("-o,--output", generate.out_dir,
                 "folder for NAME.h, NAME.cpp, NAME_weights.cpp (or NAME.weights.bin), NAME.manifest.json");
  app.add_option("--name", generate.name, "file stem and C symbol prefix (default: the model file's stem)");
  app.add_option("--namespace", generate.ns, "C++ namespace (default: NAME)");
  add_compile_flags(app, generate.compile,
                    hybgen::default_target().name +
                        "; a microcontroller target also verifies the model on its emulated board, which measures the "
                        "flash, RAM, stack and instructions the manifest records, when the board's tools are on the "
                        "PATH; --no-board-measure skips that");
  app.add_flag("--no-board-measure", generate.no_board_measure,
               "microcontroller targets: do not build and run the model on the emulated board to measure it (the "
               "manifest then has no \"memory\" section)");
  add_external_weights_flag(app, generate.external_weights);
  add_dump_flags(app, generate.dump);

  VerifyFlags verify;
  CLI::App* verify_cmd = app.add_subcommand(
      "verify",
      "Generate C++ into a temporary folder, compile it, run it and compare every output with the eager reference. "
      "Relative error = max |generated - reference| / max |reference|. Exits 1 beyond the tolerance, after naming "
      "the first kernel whose output diverges (--bisect).");
  add_model_flags(*verify_cmd, verify.model, true);
  verify_cmd->add_option("--input", verify.inputs, "NAME=x.npy: use this array for an input (default: seeded N(0,1))")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  verify_cmd->add_option("--expected", verify.expected, "NAME=y.npy: also compare an output with this array")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  verify_cmd->add_option("--seed", verify.seed, "seed of the random inputs")->capture_default_str();
  verify_cmd
      ->add_option("--tolerance", verify.tolerance,
                   "largest relative error accepted per output, where relative error = "
                   "max |generated - reference| / max |reference| (default: 1e-05; with --precision tf32 0.01, "
                   "fp16 0.05, bf16 0.2)")
      ->each([&verify](const std::string&) { verify.tolerance_given = true; });
  verify_cmd->add_flag("--keep", verify.keep, "keep the build folder and print its path");
  CLI::Option* bisect_flag = verify_cmd->add_flag(
      "--bisect", verify.bisect,
      "also compare every kernel's stored values with the reference and name the first that diverges (C++ targets; "
      "done by a second build anyway when an output fails)");
  verify_cmd->add_flag("--no-bisect", verify.no_bisect, "when an output fails, do not look for the kernel that diverges")
      ->excludes(bisect_flag);
  verify_cmd->add_option("--cxx-flags", verify.cxx_flags,
                         "compiler flags added after verify's own (-std=c++11 -O2 -Wall -Wextra -Wpedantic -Werror "
                         "-fno-exceptions -fno-rtti), e.g. macro definitions that select kernel variants; for "
                         "--target cuda only their macro definitions (-DNAME[=VALUE]) reach nvcc");
  verify_cmd
      ->add_option("--threads", verify.threads,
                   "run the generated code on a pool of this many threads (its results must not change)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  add_external_weights_flag(*verify_cmd, verify.external_weights);
  add_compile_flags(*verify_cmd, verify.compile,
                    "generic (the target's -march flag is added to the compiler's; armv8-a code on another machine is "
                    "built by aarch64-linux-gnu-g++ and run under qemu-aarch64 when both are on the PATH)");

  RunFlags run;
  CLI::App* run_cmd = app.add_subcommand(
      "run",
      "Generate C++ into a temporary folder, compile it as verify does and run it on whole arrays: each array's first "
      "dimension counts samples, run in chunks of the model's batch (its input's first dimension) in one process; "
      "each output is written as the chunks' results concatenated, all files or none.");
  add_model_flags(*run_cmd, run.model, true);
  run_cmd->add_option("--input", run.inputs, "NAME=x.npy: the samples for an input (every input, repeatable)")
      ->required()
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  run_cmd->add_option("--output", run.outputs, "NAME=y.npy: write this output (repeatable)")
      ->required()
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  run_cmd->add_option("--threads", run.threads, "run the generated code on a pool of this many threads")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  add_compile_flags(*run_cmd, run.compile,
                    "generic (armv8-a code on another machine runs under qemu-aarch64 as in verify; CUDA and "
                    "microcontroller targets are not supported)");

  InspectFlags inspect;
  CLI::App* inspect_cmd = app.add_subcommand(
      "inspect",
      "Print the nodes, parameter count, FLOPs, kernels and memory plan. --report writes them as one self-contained "
      "HTML page with the arena drawn over time, --dot the compiled graph for Graphviz with fused kernels as "
      "clusters, --dump-after the state after chosen passes as JSON. Files are written only when compilation succeeds.");
  add_model_flags(*inspect_cmd, inspect.model, true);
  inspect_cmd->add_flag("--json", inspect.json, "print JSON");
  inspect_cmd->add_option("--report", inspect.report,
                          "write an HTML report (kernels, FLOPs, bytes, memory plan, arena chart) to this file");
  inspect_cmd->add_option("--dot", inspect.dot, "write the compiled graph as Graphviz text to this file");
  inspect_cmd->add_option("--float-model", inspect.float_model,
                          "with --calibration, for a model `hybgen quantize` wrote: the float model it was quantized "
                          "from; prints (and --report shows) each int8 layer's SQNR against it, worst first");
  inspect_cmd
      ->add_option("--calibration", inspect.calibration,
                   "with --float-model: float32 .npy of sample inputs to measure the SQNR on (as hybgen quantize "
                   "takes them; repeatable)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  add_compile_flags(*inspect_cmd, inspect.compile,
                    "generic (kernels, and so their scratch in the arena, differ by target)");
  add_dump_flags(*inspect_cmd, inspect.dump);

  bool ops_json = false;
  CLI::App* ops_cmd = app.add_subcommand("ops", "List the supported operators, their attributes and fusion classes.");
  ops_cmd->add_flag("--json", ops_json, "print JSON");

  BenchFlags bench;
  CLI::App* bench_cmd = app.add_subcommand(
      "bench", "Build the generated C++ optimised for this machine and time it: latency (min/median/max), arena, weights.");
  add_model_flags(*bench_cmd, bench.model, true);
  bench_cmd->add_flag("--keep", bench.keep,
                      "keep the build folder and print its path (running DIR/program DIR again times it again)");
  bench_cmd->add_option("--runs", bench.runs, "timed runs")->capture_default_str();
  bench_cmd->add_option("--warmup", bench.warmup, "untimed runs first")->capture_default_str();
  bench_cmd->add_option("--batch", bench.batch,
                        "a model with a run-time batch (--shape NAME=MIN..MAX,...): the items each run takes "
                        "(default: MAX)");
  bench_cmd
      ->add_option("--threads", bench.threads,
                   "lend the generated code a spinning pool of this many threads (1: the calling thread only)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  bench_cmd->add_flag("--profile", bench.profile,
                      "also time each kernel (median per kernel, share, GFLOP/s, GB/s); a clock read after each "
                      "kernel, counted in the whole-run latency");
  bench_cmd->add_option("--cxx-flags", bench.cxx_flags,
                        "compiler flags after the target's -march (default: -std=c++11 -O3 -march=native for this "
                        "machine's target, -std=c++11 -O3 -mtune=native for another); for --target cuda only their "
                        "macro definitions (-DNAME[=VALUE]) reach nvcc");
  add_external_weights_flag(*bench_cmd, bench.external_weights);
  add_compile_flags(*bench_cmd, bench.compile, "this machine's best (" + hybgen::host_target().name + ")");

  ImportFlags import;
  CLI::App* import_cmd = app.add_subcommand(
      "import", "Convert an MXNet export, an ONNX or a TFLite model to hybgen's model.json + model.safetensors.");
  add_model_flags(*import_cmd, import.model, true);
  import_cmd->add_option("-o,--output", import.out_prefix, "output prefix: writes PREFIX.json and PREFIX.safetensors")
      ->required();

  QuantizeFlags quantize;
  CLI::App* quantize_cmd = app.add_subcommand(
      "quantize",
      "Run the float model on calibration inputs, then write its int8 form (TFLite's scheme: activations asymmetric "
      "per tensor, weights symmetric per output channel, int32 bias) as PREFIX.json + PREFIX.safetensors. Nodes whose "
      "op has no int8 form stay float, with quantize/dequantize around them; inputs and outputs stay float.");
  add_model_flags(*quantize_cmd, quantize.model, true);
  quantize_cmd
      ->add_option("--calibration", quantize.calibration,
                   "float32 .npy of sample inputs, the samples along the first dimension, run in chunks of the "
                   "model's batch (repeatable, or several files)")
      ->required()
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  quantize_cmd->add_option("--input", quantize.input,
                           "the model input the calibration arrays feed (default: its only one)");
  quantize_cmd
      ->add_option("--method", quantize.method,
                   "range of each value: minmax (smallest to largest seen), percentile (each tail cut at "
                   "--percentile; outliers clipped for finer steps) or entropy (each tail cut where TensorRT's KL "
                   "divergence search puts it)")
      ->capture_default_str();
  quantize_cmd->add_option("--percentile", quantize.percentile, "with --method percentile: the share of values kept")
      ->capture_default_str();
  quantize_cmd->add_option("--keep-float", quantize.keep_float, "keep this node in float (repeatable)")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  quantize_cmd->add_option("--min-sqnr", quantize.min_sqnr,
                           "keep int8 nodes whose output's SQNR (dB, against the float model on the calibration "
                           "data) is below this in float: the worst is kept float and the rest measured again, until "
                           "none is below or --max-sqnr-rounds nodes were kept");
  quantize_cmd
      ->add_option("--max-sqnr-rounds", quantize.max_sqnr_rounds, "with --min-sqnr: keep at most this many nodes float")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  quantize_cmd->add_option("--report", quantize.report,
                           "also write the SQNR table (each int8 node, worst first) to this text file");
  quantize_cmd
      ->add_option("-o,--output", quantize.out_prefix, "output prefix: writes PREFIX.json and PREFIX.safetensors")
      ->required();

  BoardFlags board;
  CLI::App* board_cmd = app.add_subcommand(
      "board",
      "Write the start-up code (startup.c: vector table, reset handler, fault handlers) and linker script (link.ld: "
      "code in the board's code memory, constants and weights in its weight memory; data, the arena and the stack in "
      "RAM) of a microcontroller target's board, for a "
      "firmware project to build generated code with; the same files `hybgen verify` runs the target with.");
  std::string boards;
  for (const hybgen::Target& t : hybgen::all_targets())
    if (!t.board.empty()) boards += "\n  " + t.name + ": " + t.board;
  board_cmd->add_option("--target", board.target, "the microcontroller target, and so its board:" + boards)
      ->required();
  board_cmd->add_option("-o,--output", board.out_dir, "folder for startup.c and link.ld (created if missing)")
      ->required();
  board_cmd
      ->add_option("--stack-bytes", board.stack_bytes,
                   "bytes of RAM the linker script keeps for the stack (a multiple of 8, at least 1024)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    if (*verify_cmd) return run_verify(verify);
    if (*run_cmd) return run_run(run);
    if (*inspect_cmd) return run_inspect(inspect);
    if (*ops_cmd) return run_ops(ops_json);
    if (*import_cmd) return run_import(import);
    if (*bench_cmd) return run_bench(bench);
    if (*board_cmd) return run_board(board);
    if (*quantize_cmd) return run_quantize(quantize);
    if (generate.model.model.empty()) {
      std::cout << app.help();
      return 2;
    }
    if (generate.out_dir.empty()) throw Error("-o OUT_DIR is required to generate code (see --help)");
    return run_generate(generate);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "hybgen: error: out of memory (the model's sizes are within hybgen's limits, see "
                         "docs/limits.md, but more than this machine can hold)\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hybgen: error: %s\n", printable_message(e.what()).c_str());
    return 1;
  }
}
