// Driver of bench/tflm's board program: TensorFlow Lite Micro (tflm_model.cpp)
// on an emulated Cortex-M board, measured the way `hybgen verify` measures
// generated code (templates/firmware/verify_main.cpp.in): instructions from
// SysTick under qemu's -icount (one tick per instruction), peak stack by
// painting the free stack before the call.
//
// Takes DIR from the semihosting command line; DIR/in.bin holds samples of
// the model's input as raw float32, each quantized here at the input tensor's
// scale and zero point. Sample 0 is run twice, both timed (TFLM has nothing to
// warm up; the second call shows whether the first paid for anything), the
// others once for the output check. Each sample's output tensor, its bytes as
// they are, goes to DIR/out.bin. Prints one line of measurements; any failure
// exits non-zero.
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "bench/tflm/tflm_model.h"

extern "C" std::uint32_t __stack_limit[];

namespace {

const std::uint32_t kPaint = 0xC5A5C5A5u;
volatile std::uint32_t systick_wraps;

struct SysTick {
  volatile std::uint32_t control, reload, current;
};
SysTick& systick() { return *reinterpret_cast<SysTick*>(0xE000E010u); }

void start_systick() {
  systick().reload = 0xFFFFFFu;
  systick().current = 0;
  systick().control = 7;  // enable, interrupt on wrap, core clock
}

std::uint64_t systick_ticks() {
  std::uint32_t wraps, current;
  do {
    wraps = systick_wraps;
    current = systick().current;
  } while (wraps != systick_wraps);
  return static_cast<std::uint64_t>(wraps) * 0x1000000u + (0xFFFFFFu - current);
}

// Instructions in `ticks`, by timing a loop of a known count of them.
__attribute__((noinline)) std::uint64_t instructions_in(std::uint64_t ticks) {
  const std::uint32_t kIterations = 1000000;
  std::uint32_t n = kIterations;
  const std::uint64_t t0 = systick_ticks();
  __asm__ volatile("1: subs %0, %0, #1\n\tbne 1b" : "+r"(n) : : "cc");  // 2 instructions per iteration
  const std::uint64_t loop_ticks = systick_ticks() - t0;
  return loop_ticks ? (ticks * 2 * kIterations + loop_ticks / 2) / loop_ticks : 0;
}

__attribute__((always_inline)) inline std::uint32_t* stack_pointer() {
  std::uint32_t* sp;
  __asm__ volatile("mov %0, sp" : "=r"(sp));
  return sp;
}

__attribute__((noinline)) void paint_stack() {
  std::uint32_t* const below = stack_pointer() - 64;
  for (volatile std::uint32_t* p = __stack_limit; p < below; ++p) *p = kPaint;
}

__attribute__((noinline)) unsigned long stack_used_below(const std::uint32_t* top) {
  const volatile std::uint32_t* p = __stack_limit;
  while (p < top && *p == kPaint) ++p;
  return static_cast<unsigned long>(reinterpret_cast<std::uintptr_t>(top) - reinterpret_cast<std::uintptr_t>(p));
}

bool command_line(char* buffer, int size) {
  struct {
    char* buffer;
    int size;
  } block = {buffer, size};
  register int op __asm__("r0") = 0x15;  // SYS_GET_CMDLINE
  register void* arg __asm__("r1") = &block;
  __asm__ volatile("bkpt 0xab" : "+r"(op) : "r"(arg) : "memory");
  return op == 0;
}

// newlib-nano's printf has no %f: the scale goes out as its bits.
std::uint32_t float_bits(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

int element_bytes(int type) { return type == 1 ? 4 : type == 3 || type == 9 ? 1 : 0; }

int round_to_int(float v) { return v >= 0 ? static_cast<int>(v + 0.5f) : -static_cast<int>(-v + 0.5f); }

// Reads one sample of floats from `f` into the input tensor, quantized at its
// parameters (kept as floats for a float32 input). False at the end of the file.
bool read_sample(std::FILE* f, const TflmTensor& in) {
  const std::size_t count = in.bytes / element_bytes(in.type);
  float chunk[256];
  for (std::size_t done = 0; done < count;) {
    const std::size_t n = count - done < 256 ? count - done : 256;
    if (std::fread(chunk, sizeof(float), n, f) != n) return false;
    for (std::size_t i = 0; i < n; ++i) {
      if (in.type == 1) {
        static_cast<float*>(in.data)[done + i] = chunk[i];
        continue;
      }
      int q = round_to_int(chunk[i] / in.scale) + in.zero_point;
      const int lo = in.type == 9 ? -128 : 0, hi = in.type == 9 ? 127 : 255;
      q = q < lo ? lo : q > hi ? hi : q;
      if (in.type == 9)
        static_cast<std::int8_t*>(in.data)[done + i] = static_cast<std::int8_t>(q);
      else
        static_cast<std::uint8_t*>(in.data)[done + i] = static_cast<std::uint8_t>(q);
    }
    done += n;
  }
  return true;
}

}  // namespace

extern "C" void SysTick_Handler(void) { systick_wraps = systick_wraps + 1; }

int main() {
  static char line[4096];
  if (!command_line(line, sizeof line)) {
    std::fprintf(stderr, "no semihosting command line\n");
    return 2;
  }
  const char* dir = line;
  while (*dir && *dir != ' ') ++dir;
  if (!*dir) {
    std::fprintf(stderr, "usage: program DIR\n");
    return 2;
  }
  ++dir;
  start_systick();
  // The first reading would be a full period: the counter loads its reload
  // value only at the tick after the write to it.
  while (systick().current == 0) {
  }

  const std::uint64_t s0 = systick_ticks();
  if (const char* error = tflm_setup()) {
    std::fprintf(stderr, "%s\n", error);
    return 3;
  }
  const std::uint64_t s1 = systick_ticks();
  const TflmTensor in = tflm_input(), out = tflm_output();
  if (!element_bytes(in.type) || !element_bytes(out.type)) {
    std::fprintf(stderr, "input type %d, output type %d: the runner takes float32, uint8 and int8\n", in.type,
                 out.type);
    return 3;
  }

  char path[4096];
  std::snprintf(path, sizeof path, "%s/in.bin", dir);
  std::FILE* inputs = std::fopen(path, "rb");
  std::snprintf(path, sizeof path, "%s/out.bin", dir);
  std::FILE* outputs = std::fopen(path, "wb");
  if (!inputs || !outputs) {
    std::fprintf(stderr, "cannot open %s/in.bin or %s/out.bin\n", dir, dir);
    return 4;
  }

  std::uint64_t first = 0, second = 0;
  unsigned long stack_bytes = 0;
  int samples = 0;
  for (;; ++samples) {
    if (!read_sample(inputs, in)) break;
    if (samples == 0) {
      paint_stack();
      std::uint32_t* const top = stack_pointer();
      const std::uint64_t t0 = systick_ticks();
      const int status = tflm_invoke();
      const std::uint64_t t1 = systick_ticks();
      stack_bytes = stack_used_below(top);
      if (status != 0) {
        std::fprintf(stderr, "Invoke() failed\n");
        return 5;
      }
      first = t1 - t0;
      // The planner may have reused the input's bytes: read sample 0 again.
      std::rewind(inputs);
      read_sample(inputs, in);
    }
    const std::uint64_t t0 = systick_ticks();
    const int status = tflm_invoke();
    const std::uint64_t t1 = systick_ticks();
    if (status != 0) {
      std::fprintf(stderr, "Invoke() failed\n");
      return 5;
    }
    if (samples == 0) second = t1 - t0;
    if (std::fwrite(out.data, 1, out.bytes, outputs) != out.bytes) {
      std::fprintf(stderr, "cannot write out.bin\n");
      return 4;
    }
  }
  std::fclose(inputs);
  if (std::fclose(outputs) != 0 || samples == 0) {
    std::fprintf(stderr, samples ? "cannot write out.bin\n" : "in.bin holds no whole sample\n");
    return 4;
  }
  std::printf(
      "tflm-firmware samples=%d arena_used_bytes=%lu arena_capacity=%lu stack_bytes=%lu setup_instructions=%lu "
      "instructions=%lu second_instructions=%lu output_type=%d output_scale_bits=%08lx output_zero_point=%d\n",
      samples, static_cast<unsigned long>(tflm_arena_used_bytes()), static_cast<unsigned long>(tflm_arena_capacity()),
      stack_bytes, static_cast<unsigned long>(instructions_in(s1 - s0)),
      static_cast<unsigned long>(instructions_in(first)), static_cast<unsigned long>(instructions_in(second)), out.type,
      static_cast<unsigned long>(float_bits(out.scale)), out.zero_point);
  return 0;
}
