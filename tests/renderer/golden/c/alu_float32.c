#include <stdint.h>
/* IEEE maximum: NaN wins, -0.0 < +0.0 (exec_alu's MAX) */
static inline float fg_maxf(float a, float b) {
  if (a != a) return a;
  if (b != b) return b;
  if (a == b) return __builtin_signbit(a) ? b : a;
  return a > b ? a : b;
}
static inline double fg_maxd(double a, double b) {
  if (a != a) return a;
  if (b != b) return b;
  if (a == b) return __builtin_signbit(a) ? b : a;
  return a > b ? a : b;
}
void alu_float32(float* restrict buf0, float* restrict buf1, float* restrict buf2, unsigned char* restrict buf3, float* restrict buf4, float* restrict buf5, float* restrict buf6, float* restrict buf7, float* restrict buf8, unsigned char* restrict buf9, unsigned char* restrict buf10, unsigned char* restrict buf11, float* restrict buf12, float* restrict buf13, float* restrict buf14, float* restrict buf15, float* restrict buf16, float* restrict buf17, float* restrict buf18, float* restrict buf19, float* restrict buf20) {
  for (int32_t v5 = 0; v5 < ((int32_t)625); v5++) {
    float v7 = *(buf0 + v5);
    float v9 = *(buf1 + v5);
    float v11 = *(buf2 + v5);
    _Bool v13 = (*(buf3 + v5) != 0);
    float v16 = v7 + v9;
    *(buf4 + v5) = v16;
    float v20 = v7 - v9;
    *(buf5 + v5) = v20;
    float v24 = v7 * v9;
    *(buf6 + v5) = v24;
    float v28 = v7 / v9;
    *(buf7 + v5) = v28;
    float v32 = fg_maxf(v7, v9);
    *(buf8 + v5) = v32;
    _Bool v36 = v7 < v9;
    *(buf9 + v5) = (unsigned char)v36;
    _Bool v40 = v7 != v9;
    *(buf10 + v5) = (unsigned char)v40;
    _Bool v44 = v7 == v9;
    *(buf11 + v5) = (unsigned char)v44;
    float v48 = -v7;
    *(buf12 + v5) = v48;
    float v52 = 0x1.0000000000000p+0f / v7;
    *(buf13 + v5) = v52;
    float v56 = __builtin_sqrtf(v7);
    *(buf14 + v5) = v56;
    float v60 = __builtin_exp2f(v7);
    *(buf15 + v5) = v60;
    float v64 = __builtin_log2f(v7);
    *(buf16 + v5) = v64;
    float v68 = __builtin_sinf(v7);
    *(buf17 + v5) = v68;
    float v72 = __builtin_truncf(v7);
    *(buf18 + v5) = v72;
    float v76 = v13 ? v7 : v9;
    *(buf19 + v5) = v76;
    float v80 = __builtin_fmaf(v7, v9, v11);
    *(buf20 + v5) = v80;
  }
}
