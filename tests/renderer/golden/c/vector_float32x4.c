#include <stdint.h>
/* float -> int as exec_alu: truncate through a 32- or 64-bit signed integer; NaN and values
   it can't hold give its minimum (x86's "integer indefinite"); uint64 takes [2^63, 2^64) */
static inline int32_t fg_f2i32(double x) {
  return (x >= -0x1p31 && x < 0x1p31) ? (int32_t)x : (int32_t)0x80000000u;
}
static inline int64_t fg_f2i64(double x) {
  return (x >= -0x1p63 && x < 0x1p63) ? (int64_t)x : (int64_t)0x8000000000000000ull;
}
static inline uint64_t fg_f2u64(double x) {
  if (x >= 0x1p63 && x < 0x1p64) return (uint64_t)x;
  return (uint64_t)fg_f2i64(x);
}
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
typedef float fg_f32x4 __attribute__((vector_size(16)));
typedef unsigned char fg_u8x4 __attribute__((vector_size(4)));
typedef int32_t fg_i32x4 __attribute__((vector_size(16)));
void vector_float32x4(float* restrict buf0, float* restrict buf1, float* restrict buf2, float* restrict buf3, float* restrict buf4, unsigned char* restrict buf5, float* restrict buf6, float* restrict buf7, float* restrict buf8, float* restrict buf9, float* restrict buf10, int32_t* restrict buf11) {
  for (int32_t v3 = 0; v3 < ((int32_t)4); v3++) {
    int32_t v5 = v3 * ((int32_t)4);
    fg_f32x4 v8_m; __builtin_memcpy(&v8_m, (buf0 + v5), sizeof v8_m);
    fg_f32x4 v8 = v8_m;
    fg_f32x4 v10_m; __builtin_memcpy(&v10_m, (buf1 + v5), sizeof v10_m);
    fg_f32x4 v10 = v10_m;
    fg_f32x4 v11 = v8 + v10;
    { fg_f32x4 s12 = v11; __builtin_memcpy((buf2 + v5), &s12, sizeof s12); }
    fg_f32x4 v15 = v8 * v10;
    { fg_f32x4 s16 = v15; __builtin_memcpy((buf3 + v5), &s16, sizeof s16); }
    fg_f32x4 v19 = (fg_f32x4){fg_maxf(v8[0], v10[0]), fg_maxf(v8[1], v10[1]), fg_maxf(v8[2], v10[2]), fg_maxf(v8[3], v10[3])};
    { fg_f32x4 s20 = v19; __builtin_memcpy((buf4 + v5), &s20, sizeof s20); }
    fg_u8x4 v23 = (fg_u8x4){v8[0] < v10[0], v8[1] < v10[1], v8[2] < v10[2], v8[3] < v10[3]};
    { fg_u8x4 s24 = (fg_u8x4){(unsigned char)v23[0], (unsigned char)v23[1], (unsigned char)v23[2], (unsigned char)v23[3]}; __builtin_memcpy((buf5 + v5), &s24, sizeof s24); }
    fg_u8x4 v27 = (fg_u8x4){v10[0] < v8[0], v10[1] < v8[1], v10[2] < v8[2], v10[3] < v8[3]};
    fg_f32x4 v28 = (fg_f32x4){v27[0] ? v8[0] : v10[0], v27[1] ? v8[1] : v10[1], v27[2] ? v8[2] : v10[2], v27[3] ? v8[3] : v10[3]};
    { fg_f32x4 s29 = v28; __builtin_memcpy((buf6 + v5), &s29, sizeof s29); }
    fg_f32x4 v32 = v8 / v10;
    { fg_f32x4 s33 = v32; __builtin_memcpy((buf7 + v5), &s33, sizeof s33); }
    fg_f32x4 v36 = (fg_f32x4){__builtin_sqrtf(v8[0]), __builtin_sqrtf(v8[1]), __builtin_sqrtf(v8[2]), __builtin_sqrtf(v8[3])};
    { fg_f32x4 s37 = v36; __builtin_memcpy((buf8 + v5), &s37, sizeof s37); }
    fg_f32x4 v40 = (fg_f32x4){v8[3], v8[2], v8[1], v8[0]};
    { fg_f32x4 s41 = v40; __builtin_memcpy((buf9 + v5), &s41, sizeof s41); }
    float v44 = v10[1];
    float v45 = v10[2];
    float v46 = v10[3];
    float v47 = v10[0];
    fg_f32x4 v48 = (fg_f32x4){v44, v45, v46, v47};
    { fg_f32x4 s49 = v48; __builtin_memcpy((buf10 + v5), &s49, sizeof s49); }
    fg_i32x4 v52 = (fg_i32x4){(int32_t)fg_f2i32(v8[0]), (int32_t)fg_f2i32(v8[1]), (int32_t)fg_f2i32(v8[2]), (int32_t)fg_f2i32(v8[3])};
    { fg_i32x4 s53 = v52; __builtin_memcpy((buf11 + v5), &s53, sizeof s53); }
  }
}
