// The target registry: everything hybgen knows about what it generates code
// for sits in one Target. Code elsewhere reads its fields (backend,
// instruction set, panel sizes, how to compile and run it), never its name.
//
//   const Target& t = find_target("x86-64-v3");  // Error listing the names for another
//   t.backend == Backend::kCpp;  t.isa == Isa::kAvx2;  t.gemm_nr == 8;
//   for (const Target& each : all_targets()) std::cout << each.name;
#pragma once

#include <string>
#include <vector>

#include "ir/tensor_type.h"

namespace hybgen {

// Which printer writes the code.
enum class Backend {
  kCpp,   // NAME.h, NAME.cpp: C++11, no heap (gen/emit/cpp_emitter.h)
  kCuda,  // NAME.h, NAME.cu: the CUDA runtime API only (gen/emit/cuda_emitter.h)
};
std::string backend_name(Backend backend);
// Every backend, in the enum's order.
const std::vector<Backend>& all_backends();

// The instructions the kernels are written for.
enum class Isa {
  kPortable,  // plain C++ that any compiler vectorises as it can
  kAvx2,      // x86-64 AVX2 + FMA, 8 float lanes
  kAvx512,    // x86-64 AVX-512 F/BW/VL, 16 float lanes
  kNeon,      // AArch64 Advanced SIMD, 4 float lanes
  kCortexM,   // Armv7E-M with a single-precision FPU (Cortex-M4, M7): scalar, no cache to block for
  kHelium,    // Armv8.1-M MVE with floating point (Cortex-M55), 4 float lanes in 8 vector registers
  kCuda,      // NVIDIA GPUs (PTX), sm_80 and later
};

// How `hybgen verify` builds and runs the code on this machine.
enum class Runner {
  kNative,       // the host compiler, run here (needs the instructions)
  kCrossQemu,    // a cross compiler, run under qemu's user-mode emulator
  kQemuSystem,   // bare metal: a cross compiler, run on an emulated board, files through semihosting
  kCudaHost,     // the .cu built as C++ with the cuda-host layer, run on the CPU
  kCudaDevice,   // nvcc, run on this machine's GPU
};

// A span of the board's address space, and what the board calls it.
struct MemoryRegion {
  std::string name;  // "ITCM", "QSPI flash"
  unsigned long origin = 0;
  unsigned long bytes = 0;
};

// The arithmetic of a float model (--precision): exact FP32; or on a CUDA
// target TF32 tensor cores (FP32 storage, operands rounded to TF32's 10-bit
// mantissa, FP32 sums) for the GEMM and convolution tiles; or FP16 / BF16
// storage of weights and activations (the pass half_storage), computed in
// FP32 registers and on FP16 / BF16 tensor cores with FP32 sums.
enum class Precision { kFP32, kTF32, kFP16, kBF16 };

struct Target {
  std::string name;     // --target
  std::string summary;  // one line, for --help and errors
  Backend backend = Backend::kCpp;
  Isa isa = Isa::kPortable;
  int vector_floats = 1;  // float32 lanes of one vector (a warp on CUDA)
  // C++: the panel sizes of GEMM operands packed at generation time
  // (templates/kernels/gemm.inc's HG_GEMM_NR / HG_GEMM_MR); 0: no packing.
  int gemm_nr = 0;
  int gemm_mr = 0;
  std::string macro;              // defined by generated code, selecting the kernels' #if branch
  std::string intrinsics_header;  // included by generated code; empty: none
  std::string compiler_flags;     // enabling its instructions ("-march=x86-64-v3"); for nvcc, the archs
  Runner runner = Runner::kNative;
  std::string cross_compiler;  // kCrossQemu, kQemuSystem: the compiler ("aarch64-linux-gnu-g++")
  std::string emulator;        // kCrossQemu, kQemuSystem: the emulator ("qemu-aarch64")
  std::string size_tool;       // kQemuSystem: measures an object's sections ("arm-none-eabi-size")
  std::string symbol_tool;     // kQemuSystem: lists an object's symbols ("arm-none-eabi-nm")
  // kQemuSystem: disassembles an object ("arm-none-eabi-objdump"): a model
  // computed wholly in int8 must have no floating-point instruction (verify).
  std::string disassembler;
  // kQemuSystem: prefixes of the symbols the model's object must not need
  // (the heap, exceptions, software double precision): the firmware part of
  // the generated-code contract, which verify checks on every board build.
  std::vector<std::string> forbidden_symbol_prefixes;
  std::string packages;        // the Debian packages that give these tools
  // kQemuSystem: the board the emulator models (its -machine) and where its
  // linker script (emit/board_files.h) puts things: the vector table and code
  // in `code`, constants and weights (all of .rodata) in `weights`, and
  // .data, .bss (the arena), the heap and the stack in `ram`. Three regions
  // apart: a board's code memory can be far smaller than its others.
  std::string board;
  MemoryRegion code, weights, ram;
  std::string needs;           // what running it needs, in words, for errors ("AVX2 and FMA")
  // x86-64: the int8 dot-product instructions (vpdpbusd: AVX-512 VNNI, or
  // AVX-VNNI on AVX2 cores), which the quantized kernels use
  // (templates/kernels/quantized_simd.inc).
  bool int8_dot = false;
  // The k values of one channel side by side in the int8 GEMM's weight
  // panels and patches (gemm_q8.inc's HG_Q8_GROUP): four for the four-byte
  // dot products (vpdpbusd, SMLAD pairs), sixteen for Helium's VMLADAVA.S8.
  int q8_group = 4;
  // The int8 convolution's output channels per weight panel (hg_conv2d_gemm_q8's
  // MR): two on the Cortex-M55, whose kernel takes channels in pairs.
  int q8_conv_channels = 8;
  // No int8 kernels: a quantized model runs in float on its dequantized
  // weights (the pass dequantize_graph) instead of being refused.
  bool int8_through_float = false;
  // --precision: what the generated code's float products compute in
  // (other than kFP32 on CUDA targets only; compile_graph checks). Every registered
  // target is kFP32; a compile's copy may say otherwise.
  Precision precision = Precision::kFP32;
  // --max-weight-growth: the most values a kernel may keep per weight it
  // reads (Winograd F(4x4, 3x3) keeps 36 per 9, F(2x2, 3x3) 16 per 9); 0:
  // no bound. Panels padded to whole vectors do not count. Like precision,
  // set on a compile's copy.
  double max_weight_growth = 0;
};

// The C type a value of `dtype` is stored as in `backend`'s generated code:
// dtype_c_type's, except CUDA's __half and __nv_bfloat16 for float16 and
// bfloat16 (templates/cuda/kernels/common.inc converts them).
std::string storage_c_type(DType dtype, Backend backend);

// The flags that build `target`'s generated code for its precision: its
// compiler_flags, except for CUDA fp16 and bf16, whose code for Hopper is
// built for sm_90a (the warpgroup products, which plain sm_90 code lacks)
// beside sm_80 and the sm_80 PTX.
std::string compiler_flags_for(const Target& target);

const std::vector<Target>& all_targets();
std::vector<std::string> target_names();
// Error naming the known targets for any other name.
const Target& find_target(const std::string& name);
// The portable C++ target: the default of every command.
const Target& default_target();
// The fastest C++ target this machine runs: what `hybgen bench` uses.
const Target& host_target();
// Whether this machine runs the C++ target's instructions natively.
bool machine_runs(const Target& target);

}  // namespace hybgen
