#include <stdint.h>
void gated_float32(float* restrict buf0, float* restrict buf1, float* restrict buf2) {
  for (int32_t v4 = 0; v4 < ((int32_t)8); v4++) {
    int32_t v7 = v4 + ((int32_t)3);
    _Bool v8 = v7 < ((int32_t)8);
    float v11 = -0x1.0000000000000p+1f;
    if (v8) {
      v11 = *(buf0 + v7);
    }
    *(buf1 + v4) = v11;
    int32_t v14 = v4 & ((int32_t)1);
    _Bool v16 = v14 == ((int32_t)0);
    float v19 = *(buf0 + v4);
    if (v16) *(buf2 + v4) = v19;
  }
}
