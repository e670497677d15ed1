// The TensorFlow Lite Micro side of bench/tflm's board program (tflm_model.h).
// tflm_bench.py writes, for each model, tflm_ops.inc (the operators the model
// uses, as TFLM_OP(method, registration) lines: int8 registrations where TFLM
// has them, as its own person_detection example does) and model_data.S (the
// .tflite file, embedded by .incbin as g_tflm_model), and sets
// TFLM_ARENA_BYTES.
#include "bench/tflm/tflm_model.h"

#include <new>

#include "tensorflow/lite/micro/micro_interpreter.h"
#include "tensorflow/lite/micro/micro_mutable_op_resolver.h"
#include "tensorflow/lite/schema/schema_generated.h"

extern "C" const unsigned char g_tflm_model[];

// Named without C++ mangling so that the linker map shows it as
// .bss.tflm_arena: tflm_bench.py counts the arena as arena_used_bytes(), not
// as this array's size.
extern "C" {
alignas(16) unsigned char tflm_arena[TFLM_ARENA_BYTES];
}

namespace {

#define TFLM_OP(method, ...) +1
constexpr unsigned kOperators = 0
#include "tflm_ops.inc"
    ;
#undef TFLM_OP

using Resolver = tflite::MicroMutableOpResolver<kOperators>;

// Static storage rather than static locals: no guard variables or exit-time
// destructors, and the objects' RAM shows in the map as this file's .bss.
alignas(Resolver) unsigned char resolver_storage[sizeof(Resolver)];
alignas(tflite::MicroInterpreter) unsigned char interpreter_storage[sizeof(tflite::MicroInterpreter)];
tflite::MicroInterpreter* interpreter = nullptr;

TflmTensor describe(TfLiteTensor* t) {
  TflmTensor out{};
  if (!t) return out;
  out.data = t->data.raw;
  out.bytes = t->bytes;
  out.type = t->type;
  out.scale = t->params.scale;
  out.zero_point = t->params.zero_point;
  return out;
}

}  // namespace

const char* tflm_setup() {
  const tflite::Model* model = tflite::GetModel(g_tflm_model);
  if (model->version() != TFLITE_SCHEMA_VERSION) return "the model's schema version is not TFLITE_SCHEMA_VERSION";
  Resolver* resolver = new (resolver_storage) Resolver();
#define TFLM_OP(method, ...) \
  if (resolver->method(__VA_ARGS__) != kTfLiteOk) return "cannot register " #method;
#include "tflm_ops.inc"
#undef TFLM_OP
  interpreter = new (interpreter_storage) tflite::MicroInterpreter(model, *resolver, tflm_arena, TFLM_ARENA_BYTES);
  if (interpreter->AllocateTensors() != kTfLiteOk) return "AllocateTensors() failed (is TFLM_ARENA_BYTES too small?)";
  if (interpreter->inputs_size() != 1 || interpreter->outputs_size() != 1)
    return "the runner takes models of one input and one output";
  return nullptr;
}

TflmTensor tflm_input() { return describe(interpreter->input(0)); }
TflmTensor tflm_output() { return describe(interpreter->output(0)); }
int tflm_invoke() { return interpreter->Invoke() == kTfLiteOk ? 0 : 1; }
std::size_t tflm_arena_used_bytes() { return interpreter->arena_used_bytes(); }
std::size_t tflm_arena_capacity() { return TFLM_ARENA_BYTES; }
