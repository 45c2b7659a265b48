#include <stdint.h>
void nested_int64(double* restrict buf0, double* restrict buf1, double* restrict buf2) {
  for (int64_t v4 = 0; v4 < ((int64_t)3); v4++) {
    for (int64_t v6 = 0; v6 < ((int64_t)4); v6++) {
      int64_t v7 = v4 * ((int64_t)4);
      int64_t v8 = v7 + v6;
      double v11 = *(buf0 + v4);
      double v13 = *(buf1 + v6);
      double v14 = v11 * v13;
      *(buf2 + v8) = v14;
    }
  }
}
