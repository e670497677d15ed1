/* Bare-metal firmware that classifies a handwritten digit with the MNIST CNN
 * that hybgen generated (mnist.h, mnist.cpp, mnist_weights.cpp from
 * hybgen_add_model in CMakeLists.txt), written in C as firmware often is.
 *
 * Where things live: the weights are const arrays of the generated library,
 * so the linker puts them in flash (.rodata) beside the code; the arena, the
 * model's only working memory, is a static array in .bss (RAM), sized by the
 * header at compile time, so nothing is allocated at run time. The result is
 * printed through semihosting (newlib's rdimon), which qemu-system-arm or a
 * debugger answers; on a board without a debugger, print to a UART. */
#include <stdio.h>

#include "digit.h"

/* The same program for the float32 model and for its int8 form (built with
 * MNIST_INT8 defined: mnist_int8.h from hybgen_add_model(... QUANTIZE int8),
 * integer arithmetic inside, float input and scores at its edges). */
#if defined(MNIST_INT8)
#include "mnist_int8.h"
#define MODEL_ARENA_BYTES MNIST_INT8_ARENA_BYTES
#define MODEL_ARENA_ALIGNMENT MNIST_INT8_ARENA_ALIGNMENT
#define MODEL_INPUT0_FLOATS MNIST_INT8_INPUT0_FLOATS
#define MODEL_OUTPUT0_FLOATS MNIST_INT8_OUTPUT0_FLOATS
#define model_run mnist_int8_run
#else
#include "mnist.h"
#define MODEL_ARENA_BYTES MNIST_ARENA_BYTES
#define MODEL_ARENA_ALIGNMENT MNIST_ARENA_ALIGNMENT
#define MODEL_INPUT0_FLOATS MNIST_INPUT0_FLOATS
#define MODEL_OUTPUT0_FLOATS MNIST_OUTPUT0_FLOATS
#define model_run mnist_run
#endif

static unsigned char arena[MODEL_ARENA_BYTES] __attribute__((aligned(MODEL_ARENA_ALIGNMENT)));
static float image[MODEL_INPUT0_FLOATS];
static float scores[MODEL_OUTPUT0_FLOATS];

int main(void) {
  unsigned i;
  unsigned best = 0;
  int status;

  /* The model was trained on grey levels scaled to [0, 1]. */
  for (i = 0; i < MODEL_INPUT0_FLOATS; ++i) image[i] = (float)digit_pixels[i] / 255.0f;

  status = model_run(image, scores, arena);
  if (status != 0) {
    printf("run failed with status %d\n", status);
    return 2;
  }

  /* One score per class, from the last tanh: the largest is the digit. newlib-nano's printf prints no floats
   * (unless linked with -u _printf_float), so the scores are shown in thousandths. */
  printf("scores (x1000):");
  for (i = 0; i < MODEL_OUTPUT0_FLOATS; ++i) {
    if (scores[i] > scores[best]) best = i;
    printf(" %d", (int)(scores[i] * 1000.0f));
  }
  printf("\nthe digit is %u (labelled %d)\n", best, DIGIT_LABEL);
  return best == DIGIT_LABEL ? 0 : 1;
}
