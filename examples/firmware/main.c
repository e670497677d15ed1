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
#include <stdint.h>
#include <stdio.h>

#include "digit.h"

/* The same program for the float32 model and for its int8 form (built with
 * MNIST_INT8 defined: mnist_int8.h from hybgen_add_model(... QUANTIZE int8
 * IO_PRECISION quantized), integer arithmetic throughout: it takes the int8
 * image and gives int8 scores, whose scales and zero points the header
 * gives). */
#if defined(MNIST_INT8)
#include "mnist_int8.h"
#define MODEL_ARENA_BYTES MNIST_INT8_ARENA_BYTES
#define MODEL_ARENA_ALIGNMENT MNIST_INT8_ARENA_ALIGNMENT
#define MODEL_INPUT0_FLOATS MNIST_INT8_INPUT0_FLOATS
#define MODEL_OUTPUT0_FLOATS MNIST_INT8_OUTPUT0_FLOATS
#define model_run mnist_int8_run
typedef int8_t value_t;
#else
#include "mnist.h"
#define MODEL_ARENA_BYTES MNIST_ARENA_BYTES
#define MODEL_ARENA_ALIGNMENT MNIST_ARENA_ALIGNMENT
#define MODEL_INPUT0_FLOATS MNIST_INPUT0_FLOATS
#define MODEL_OUTPUT0_FLOATS MNIST_OUTPUT0_FLOATS
#define model_run mnist_run
typedef float value_t;
#endif

static unsigned char arena[MODEL_ARENA_BYTES] __attribute__((aligned(MODEL_ARENA_ALIGNMENT)));
static value_t image[MODEL_INPUT0_FLOATS];
static value_t scores[MODEL_OUTPUT0_FLOATS];

int main(void) {
  unsigned i;
  unsigned best = 0;
  int status;

  /* The model was trained on grey levels scaled to [0, 1]. The int8 model
   * takes them as its input's integers, q = round(level / scale) +
   * zero_point, saturated: a sensor's driver would produce those directly. */
  for (i = 0; i < MODEL_INPUT0_FLOATS; ++i) {
    const float level = (float)digit_pixels[i] / 255.0f;
#if defined(MNIST_INT8)
    const float q = level / MNIST_INT8_INPUT0_SCALE + (float)MNIST_INT8_INPUT0_ZERO_POINT;
    const long rounded = (long)(q < 0 ? q - 0.5f : q + 0.5f);
    image[i] = (int8_t)(rounded < -128 ? -128 : rounded > 127 ? 127 : rounded);
#else
    image[i] = level;
#endif
  }

  status = model_run(image, scores, arena);
  if (status != 0) {
    printf("run failed with status %d\n", status);
    return 2;
  }

  /* One score per class, from the last tanh: the largest is the digit (the
   * int8 scores order as the real values they stand for). newlib-nano's
   * printf prints no floats (unless linked with -u _printf_float), so the
   * float scores are shown in thousandths, the int8 ones as integers. */
#if defined(MNIST_INT8)
  printf("scores (int8, scale %d/1000000, zero point %d):", (int)(MNIST_INT8_OUTPUT0_SCALE * 1e6f),
         MNIST_INT8_OUTPUT0_ZERO_POINT);
#else
  printf("scores (x1000):");
#endif
  for (i = 0; i < MODEL_OUTPUT0_FLOATS; ++i) {
    if (scores[i] > scores[best]) best = i;
#if defined(MNIST_INT8)
    printf(" %d", (int)scores[i]);
#else
    printf(" %d", (int)(scores[i] * 1000.0f));
#endif
  }
  printf("\nthe digit is %u (labelled %d)\n", best, DIGIT_LABEL);
  return best == DIGIT_LABEL ? 0 : 1;
}
