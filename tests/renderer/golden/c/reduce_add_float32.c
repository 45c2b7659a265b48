#include <stdint.h>
void reduce_add_float32(float* restrict buf0, float* restrict buf1) {
  float v2[1];
  for (int32_t v4 = 0; v4 < ((int32_t)3); v4++) {
    *(v2 + ((int32_t)0)) = 0x0.0p+0f;
    for (int32_t v11 = 0; v11 < ((int32_t)4); v11++) {
      float v15 = *(v2 + ((int32_t)0));
      int32_t v16 = v4 * ((int32_t)4);
      int32_t v17 = v16 + v11;
      float v19 = *(buf0 + v17);
      float v20 = v15 + v19;
      *(v2 + ((int32_t)0)) = v20;
    }
    float v26 = *(v2 + ((int32_t)0));
    *(buf1 + v4) = v26;
  }
}
