#include <stdint.h>
typedef float fg_f32x4 __attribute__((vector_size(16)));
void vector_gated_float4(float* restrict buf0, float* restrict buf1) {
  for (int32_t v3 = 0; v3 < ((int32_t)4); v3++) {
    int32_t v4 = v3 * ((int32_t)4);
    _Bool v7 = v3 < ((int32_t)3);
    fg_f32x4 v10 = (fg_f32x4){-0x1.0000000000000p+0f, -0x1.0000000000000p+0f, -0x1.0000000000000p+0f, -0x1.0000000000000p+0f};
    if (v7) {
      fg_f32x4 v10_m; __builtin_memcpy(&v10_m, (buf0 + v4), sizeof v10_m);
      v10 = v10_m;
    }
    { fg_f32x4 s11 = v10; __builtin_memcpy((buf1 + v4), &s11, sizeof s11); }
  }
}
