// The TensorFlow Lite Micro side of bench/tflm's board program: one model
// (embedded by tflm_bench.py as g_tflm_model), the operators it needs in a
// MicroMutableOpResolver, an interpreter on a static arena. Kept apart from
// runner_main.cpp (files, SysTick, stack painting) so that the flash this
// object and the TFLM library take can be told from the driver's.
//
//   if (const char* error = tflm_setup()) { ... }
//   TflmTensor in = tflm_input();  // fill in.data
//   tflm_invoke();                 // then read tflm_output().data
#ifndef BENCH_TFLM_TFLM_MODEL_H_
#define BENCH_TFLM_TFLM_MODEL_H_

#include <cstddef>

// A tensor as the driver needs it: its bytes and its quantization.
struct TflmTensor {
  void* data;
  std::size_t bytes;
  int type;  // TfLiteType: 1 float32, 3 uint8, 9 int8
  float scale;
  int zero_point;
};

// Builds the resolver and the interpreter and allocates the tensors; nullptr
// on success, else what failed.
const char* tflm_setup();
TflmTensor tflm_input();
TflmTensor tflm_output();
// One inference: 0 on success.
int tflm_invoke();
// What the arena holds after AllocateTensors(): tensor metadata, the
// operators' data and the activations (MicroInterpreter::arena_used_bytes()).
std::size_t tflm_arena_used_bytes();
// Bytes of the static array the arena is cut from.
std::size_t tflm_arena_capacity();

#endif  // BENCH_TFLM_TFLM_MODEL_H_
