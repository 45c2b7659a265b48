#include <stdint.h>
void multicore(float* restrict buf0, float* restrict buf1, int32_t core_id) {
  for (int32_t v5 = 0; v5 < ((int32_t)5); v5++) {
    int32_t v6 = core_id * ((int32_t)5);
    int32_t v7 = v6 + v5;
    float v10 = *(buf0 + v7);
    float v11 = (float)core_id;
    float v12 = v10 + v11;
    *(buf1 + v7) = v12;
  }
}
