#include "targets/target.h"

#include "ir/error.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif

namespace hybgen {
namespace {

Target find_target(std::string name, std::string summary, Isa isa, int lanes, int nr, int mr, std::string macro,
                  std::string header, std::string flags, std::string needs) {
  Target t;
  t.name = std::move(name);
  t.summary = std::move(summary);
  t.isa = isa;
  t.vector_floats = lanes;
  t.gemm_nr = nr;
  t.gemm_mr = mr;
  t.macro = std::move(macro);
  t.intrinsics_header = std::move(header);
  t.compiler_flags = std::move(flags);
  t.needs = std::move(needs);
  return t;
}

Target cuda_target(std::string name, std::string summary, Runner runner, std::string needs) {
  Target t;
  t.name = std::move(name);
  t.summary = std::move(summary);
  t.backend = Backend::kCuda;
  t.isa = Isa::kCuda;
  t.vector_floats = 32;
  t.macro = "HG_TARGET_CUDA";
  // Machine code for sm_80 and sm_90 from one PTX (built once), and that PTX
  // itself for the driver to compile on newer GPUs.
  t.compiler_flags = "-gencode 'arch=compute_80,code=[sm_80,sm_90,compute_80]'";
  t.runner = runner;
  t.needs = std::move(needs);
  t.int8_through_float = true;  // no int8 CUDA kernels yet
  return t;
}

std::vector<Target> make_targets() {
  std::vector<Target> targets;
  // The GEMM panel sizes follow gemm.inc's #if chain:
  // __AVX512F__ | __AVX2__ && __FMA__ | __ARM_NEON | otherwise, and the
  // Cortex-M paths its HG_TARGET_CORTEX_* macros pin (4 x 4 on all three).
  targets.push_back(find_target("generic", "portable C++11 for any compiler and machine", Isa::kPortable, 1, 8, 4,
                               "HG_TARGET_GENERIC", "", "", "any machine"));
  targets.push_back(find_target("x86-64-v3", "x86-64 with AVX2 and FMA (Haswell, Zen)", Isa::kAvx2, 8, 8, 6,
                               "HG_TARGET_X86_64_V3", "immintrin.h", "-march=x86-64-v3", "AVX2 and FMA"));
  // The same kernels with AVX-VNNI (the VEX form of vpdpbusd, 256 bits) for
  // int8: cores with AVX2 and no AVX-512 (Alder Lake and later client cores,
  // Sierra Forest).
  Target v3_vnni =
      find_target("x86-64-v3-vnni", "x86-64 with AVX2, FMA and AVX-VNNI (Alder Lake, Arrow Lake)", Isa::kAvx2, 8, 8, 6,
                  "HG_TARGET_X86_64_V3", "immintrin.h", "-march=x86-64-v3 -mavxvnni", "AVX2, FMA and AVX-VNNI");
  v3_vnni.int8_dot = true;
  targets.push_back(v3_vnni);
  targets.push_back(find_target("x86-64-v4", "x86-64 with AVX-512 (Skylake-X, Zen 4)", Isa::kAvx512, 16, 16, 8,
                               "HG_TARGET_X86_64_V4", "immintrin.h", "-march=x86-64-v4", "AVX-512"));
  // The same kernels with AVX-512 VNNI for int8 (Cascade Lake, Ice Lake, Zen 4 and later).
  Target vnni =
      find_target("x86-64-v4-vnni", "x86-64 with AVX-512 and VNNI (Cascade Lake, Zen 4)", Isa::kAvx512, 16, 16, 8,
                  "HG_TARGET_X86_64_V4", "immintrin.h", "-march=x86-64-v4 -mavx512vnni", "AVX-512 with VNNI");
  vnni.int8_dot = true;
  targets.push_back(vnni);
  Target arm = find_target("armv8-a", "AArch64 with NEON", Isa::kNeon, 4, 4, 8, "HG_TARGET_ARMV8_A", "arm_neon.h",
                          "-march=armv8-a", "an AArch64 (NEON) machine");
  arm.runner = Runner::kCrossQemu;
  arm.cross_compiler = "aarch64-linux-gnu-g++";
  arm.emulator = "qemu-aarch64";
  arm.packages = "g++-aarch64-linux-gnu qemu-user";
  targets.push_back(arm);
  // Microcontrollers: single precision only, hard-float ABI, Thumb-2. Boards
  // as qemu-system-arm 7.2 models them (hw/arm/mps2.c, hw/arm/mps2-tz.c; the
  // sources and Arm's application notes are in docs/firmware.md). Code sits
  // where the core boots, data in the RAM nearest the core, and weights in a
  // memory of their own, so that the code memory's size does not bound them
  // (the AN547's ITCM is 512 KiB). The MPS2 images (AN386, AN500)
  // boot from 4 MiB of ZBT SSRAM at 0, keep data in 4 MiB of SSRAM at
  // 0x20000000 and have 16 MiB of PSRAM, at 0x21000000 on the AN386 and
  // 0x60000000 on the AN500. The AN547 (SSE-300) boots from its 512 KiB ITCM,
  // has 512 KiB of DTCM, and 8 MiB of QSPI flash at 0x28000000, which qemu
  // models as ROM: weights there, as a product keeps them in flash.
  auto cortex_m = [](std::string name, std::string summary, Isa isa, int lanes, std::string macro,
                     std::string header, std::string flags, std::string board, MemoryRegion code,
                     MemoryRegion weights, MemoryRegion ram) {
    Target t = find_target(std::move(name), std::move(summary), isa, lanes, 4, 4, std::move(macro),
                           std::move(header), std::move(flags), "");
    t.needs = "a " + t.name + " board";
    t.runner = Runner::kQemuSystem;
    t.cross_compiler = "arm-none-eabi-g++";
    t.emulator = "qemu-system-arm";
    t.size_tool = "arm-none-eabi-size";
    t.symbol_tool = "arm-none-eabi-nm";
    t.disassembler = "arm-none-eabi-objdump";
    // The heap (malloc and operator new), exceptions and their unwinding,
    // and the EABI's software double-precision routines (__aeabi_d*).
    t.forbidden_symbol_prefixes = {"__aeabi_d", "malloc", "free", "calloc", "realloc", "_Znw", "_Zna", "_Zdl", "_Zda",
                                   "__cxa_", "_Unwind_", "__gxx_personality", "__aeabi_unwind_cpp"};
    t.packages = "gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm";
    t.board = std::move(board);
    t.code = std::move(code);
    t.weights = std::move(weights);
    t.ram = std::move(ram);
    return t;
  };
  const MemoryRegion mps2_code{"ZBT SSRAM1", 0x00000000, 0x400000}, mps2_data{"ZBT SSRAM2&3", 0x20000000, 0x400000};
  targets.push_back(cortex_m("cortex-m4", "Cortex-M4 with its single-precision FPU (Armv7E-M)", Isa::kCortexM, 1,
                             "HG_TARGET_CORTEX_M4", "",
                             "-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16", "mps2-an386", mps2_code,
                             {"PSRAM", 0x21000000, 0x1000000}, mps2_data));
  targets.push_back(cortex_m("cortex-m7", "Cortex-M7 with a single-precision FPU (Armv7E-M)", Isa::kCortexM, 1,
                             "HG_TARGET_CORTEX_M7", "",
                             "-mcpu=cortex-m7 -mthumb -mfloat-abi=hard -mfpu=fpv5-sp-d16", "mps2-an500", mps2_code,
                             {"PSRAM", 0x60000000, 0x1000000}, mps2_data));
  targets.push_back(cortex_m("cortex-m55", "Cortex-M55 with Helium (Armv8.1-M MVE, single precision)",
                             Isa::kHelium, 4, "HG_TARGET_CORTEX_M55", "arm_mve.h",
                             "-mcpu=cortex-m55 -mthumb -mfloat-abi=hard", "mps3-an547", {"ITCM", 0x00000000, 0x80000},
                             {"QSPI flash", 0x28000000, 0x800000}, {"DTCM", 0x20000000, 0x80000}));
  targets.back().q8_group = 16;
  targets.back().q8_conv_channels = 2;
  targets.push_back(cuda_target("cuda", "CUDA for NVIDIA GPUs, sm_80 and later (runtime API only)",
                                Runner::kCudaDevice, "an NVIDIA GPU of compute capability 8.0 or later"));
  targets.push_back(cuda_target("cuda-host",
                                "the CUDA backend's code run on the CPU through a test-only emulation layer",
                                Runner::kCudaHost, "any machine"));
  return targets;
}

}  // namespace

std::string compiler_flags_for(const Target& target) {
  const bool half = target.precision == Precision::kFP16 || target.precision == Precision::kBF16;
  if (target.backend == Backend::kCuda && half)
    return "-gencode 'arch=compute_80,code=[sm_80,compute_80]' -gencode 'arch=compute_90a,code=sm_90a'";
  return target.compiler_flags;
}

std::string backend_name(Backend backend) { return backend == Backend::kCuda ? "CUDA" : "C++"; }

const std::vector<Backend>& all_backends() {
  static const std::vector<Backend> backends{Backend::kCpp, Backend::kCuda};
  return backends;
}

std::string storage_c_type(DType dtype, Backend backend) {
  if (backend == Backend::kCuda && dtype == DType::kFloat16) return "__half";
  if (backend == Backend::kCuda && dtype == DType::kBFloat16) return "__nv_bfloat16";
  return dtype_c_type(dtype);
}

const std::vector<Target>& all_targets() {
  static const std::vector<Target> targets = make_targets();
  return targets;
}

std::vector<std::string> target_names() {
  std::vector<std::string> names;
  for (const Target& t : all_targets()) names.push_back(t.name);
  return names;
}

const Target& find_target(const std::string& name) {
  for (const Target& t : all_targets())
    if (t.name == name) return t;
  std::string known;
  for (const Target& t : all_targets()) known += (known.empty() ? "" : ", ") + t.name;
  throw Error("unknown target '" + name + "', expected one of " + known);
}

const Target& default_target() { return all_targets().front(); }

namespace {
Isa host_isa() {
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
    return Isa::kAvx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::kAvx2;
  return Isa::kPortable;
#elif defined(__aarch64__)
  return Isa::kNeon;
#else
  return Isa::kPortable;
#endif
}

// Whether this machine has the int8 dot products of the targets of `isa`.
bool host_has_int8_dot(Isa isa) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (isa == Isa::kAvx512) return __builtin_cpu_supports("avx512vnni");
  // AVX-VNNI: CPUID leaf 7, subleaf 1, EAX bit 4 (clang 14 has no
  // __builtin_cpu_supports name for it); asked only with AVX2 present, whose
  // check covers the OS keeping the YMM state.
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (isa == Isa::kAvx2) return __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) && (eax >> 4 & 1);
  return false;
#else
  return false;
#endif
}
}  // namespace

const Target& host_target() {
  const Isa isa = host_isa();
  const Target* best = nullptr;
  for (const Target& t : all_targets())
    if (t.backend == Backend::kCpp && t.isa == isa && (!t.int8_dot || host_has_int8_dot(isa)))
      if (!best || t.int8_dot) best = &t;
  return best ? *best : default_target();
}

bool machine_runs(const Target& target) {
  if (target.backend != Backend::kCpp) return false;
  if (target.int8_dot && !host_has_int8_dot(target.isa)) return false;
  const Isa host = host_isa();
  return target.isa == Isa::kPortable || target.isa == host || (target.isa == Isa::kAvx2 && host == Isa::kAvx512);
}

}  // namespace hybgen
