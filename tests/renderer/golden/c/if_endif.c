#include <stdint.h>
void if_endif(float* restrict buf0, float* restrict buf1) {
  for (int32_t v3 = 0; v3 < ((int32_t)8); v3++) {
    _Bool v5 = v3 < ((int32_t)3);
    if (v5) {
      float v9 = *(buf0 + v3);
      float v11 = v9 * 0x1.0000000000000p+1f;
      *(buf1 + v3) = v11;
    }
  }
}
