/* The consumer's C program: proves that the generated header and the kernel archive form a
 * C interface, by calling the i32 kernel from plain C99 and checking its result exactly. */
#include "consumer_kernels.h"

#include <stdio.h>

enum { ROWS = 8, COLS = 11 };

int main(void) {
  int32_t a[ROWS * COLS], b[COLS], s[ROWS];
  int bad = 0, count = 0;
  uint32_t seed = 12345u;
  for (int i = 0; i < ROWS * COLS; ++i) {
    seed = seed * 1664525u + 1013904223u;
    a[i] = (int32_t)(seed >> 20) - 2048;
  }
  for (int k = 0; k < COLS; ++k) {
    seed = seed * 1664525u + 1013904223u;
    b[k] = (int32_t)(seed >> 20) - 2048;
  }
  if (consumer_kernels_int_dot(a, b, s) != 0) {
    fprintf(stderr, "FAIL: consumer_kernels_int_dot returned non-zero\n");
    return 1;
  }
  for (int i = 0; i < ROWS; ++i) {
    int64_t want = 5;
    for (int k = 0; k < COLS; ++k) want += (int64_t)a[i * COLS + k] * b[k];
    if (s[i] != want) {
      fprintf(stderr, "FAIL: int_dot S[%d] = %d, expected %lld\n", i, (int)s[i], (long long)want);
      bad = 1;
    }
  }
  if (consumer_kernels_kernels(&count) == NULL || count != 4) {
    fprintf(stderr, "FAIL: consumer_kernels_kernels() lists %d kernels, expected 4\n", count);
    bad = 1;
  }
  if (bad) return 1;
  printf("consumer_c: int_dot S[%d] matches the reference exactly; the table lists %d kernels\n", ROWS, count);
  return 0;
}
