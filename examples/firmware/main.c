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
#include "mnist.h"

static unsigned char arena[MNIST_ARENA_BYTES] __attribute__((aligned(MNIST_ARENA_ALIGNMENT)));
static float image[MNIST_INPUT0_FLOATS];
static float scores[MNIST_OUTPUT0_FLOATS];

int main(void) {
  unsigned i;
  unsigned best = 0;
  int status;

  /* The model was trained on grey levels scaled to [0, 1]. */
  for (i = 0; i < MNIST_INPUT0_FLOATS; ++i) image[i] = (float)digit_pixels[i] / 255.0f;

  status = mnist_run(image, scores, arena);
  if (status != 0) {
    printf("mnist_run failed with status %d\n", status);
    return 2;
  }

  /* One score per class, from the last tanh: the largest is the digit. newlib-nano's printf prints no floats
   * (unless linked with -u _printf_float), so the scores are shown in thousandths. */
  printf("scores (x1000):");
  for (i = 0; i < MNIST_OUTPUT0_FLOATS; ++i) {
    if (scores[i] > scores[best]) best = i;
    printf(" %d", (int)(scores[i] * 1000.0f));
  }
  printf("\nthe digit is %u (labelled %d)\n", best, DIGIT_LABEL);
  return best == DIGIT_LABEL ? 0 : 1;
}
