#include <stdint.h>
static inline uint32_t fg_fbits(float x) { uint32_t b; __builtin_memcpy(&b, &x, 4); return b; }
static inline float fg_bitsf(uint32_t b) { float x; __builtin_memcpy(&x, &b, 4); return x; }
static inline uint64_t fg_dbits(double x) { uint64_t b; __builtin_memcpy(&b, &x, 8); return b; }
static inline double fg_bitsd(uint64_t b) { double x; __builtin_memcpy(&x, &b, 8); return x; }
/* float16 bits -> float (exact); subnormals through an exact multiply by 2^-24 */
static inline float fg_h2f(uint16_t h) {
  uint32_t a = h & 0x7FFFu, sign = (uint32_t)(h & 0x8000u) << 16, e = a >> 10, o;
  if (e == 0) o = fg_fbits((float)a * 0x1p-24f);
  else if (e == 31) o = (a << 13) | 0x7F800000u;
  else o = (a << 13) + 0x38000000u;
  return fg_bitsf(o | sign);
}
/* float -> float16 bits, round-to-nearest-even; 65520 and above -> inf; NaN -> 0x7E00 */
static inline uint16_t fg_f2h(float x) {
  uint32_t b = fg_fbits(x), a = b & 0x7FFFFFFFu, sign = (b >> 16) & 0x8000u, h;
  if (a > 0x7F800000u) h = 0x7E00u;
  else if (a >= 0x477FF000u) h = 0x7C00u;
  else if (a < 0x38800000u) h = (uint32_t)((fg_bitsf(a) * 0x1p24f + 0x1p23f) - 0x1p23f);
  else { uint32_t m = a - (112u << 23); h = (m + 0xFFFu + ((m >> 13) & 1u)) >> 13; }
  return (uint16_t)(h | sign);
}
/* double -> float16 bits with one rounding (not via float) */
static inline uint16_t fg_d2h(double x) {
  uint64_t b = fg_dbits(x), a = b & 0x7FFFFFFFFFFFFFFFull, sign = (b >> 48) & 0x8000u, h;
  if (a > 0x7FF0000000000000ull) h = 0x7E00u;
  else if (a >= 0x40EFFE0000000000ull) h = 0x7C00u;
  else if (a < 0x3F10000000000000ull) h = (uint64_t)((fg_bitsd(a) * 0x1p24 + 0x1p52) - 0x1p52);
  else { uint64_t m = a - (1008ull << 52); h = (m + 0x1FFFFFFFFFFull + ((m >> 42) & 1u)) >> 42; }
  return (uint16_t)(h | sign);
}
static inline float fg_rh(float x) { return fg_h2f(fg_f2h(x)); }
static inline float fg_rhd(double x) { return fg_h2f(fg_d2h(x)); }
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
void alu_float16(uint16_t* restrict buf0, uint16_t* restrict buf1, uint16_t* restrict buf2, unsigned char* restrict buf3, uint16_t* restrict buf4, uint16_t* restrict buf5, uint16_t* restrict buf6, uint16_t* restrict buf7, uint16_t* restrict buf8, unsigned char* restrict buf9, unsigned char* restrict buf10, unsigned char* restrict buf11, uint16_t* restrict buf12, uint16_t* restrict buf13, uint16_t* restrict buf14, uint16_t* restrict buf15, uint16_t* restrict buf16, uint16_t* restrict buf17, uint16_t* restrict buf18, uint16_t* restrict buf19, uint16_t* restrict buf20) {
  for (int32_t v5 = 0; v5 < ((int32_t)625); v5++) {
    float v7 = fg_h2f(*(buf0 + v5));
    float v9 = fg_h2f(*(buf1 + v5));
    float v11 = fg_h2f(*(buf2 + v5));
    _Bool v13 = (*(buf3 + v5) != 0);
    float v16 = fg_rh(v7 + v9);
    *(buf4 + v5) = fg_f2h(v16);
    float v20 = fg_rh(v7 - v9);
    *(buf5 + v5) = fg_f2h(v20);
    float v24 = fg_rh(v7 * v9);
    *(buf6 + v5) = fg_f2h(v24);
    float v28 = fg_rh(v7 / v9);
    *(buf7 + v5) = fg_f2h(v28);
    float v32 = fg_maxf(v7, v9);
    *(buf8 + v5) = fg_f2h(v32);
    _Bool v36 = v7 < v9;
    *(buf9 + v5) = (unsigned char)v36;
    _Bool v40 = v7 != v9;
    *(buf10 + v5) = (unsigned char)v40;
    _Bool v44 = v7 == v9;
    *(buf11 + v5) = (unsigned char)v44;
    float v48 = -v7;
    *(buf12 + v5) = fg_f2h(v48);
    float v52 = fg_rh(0x1.0000000000000p+0f / v7);
    *(buf13 + v5) = fg_f2h(v52);
    float v56 = fg_rh(__builtin_sqrtf(v7));
    *(buf14 + v5) = fg_f2h(v56);
    float v60 = fg_rh(__builtin_exp2f(v7));
    *(buf15 + v5) = fg_f2h(v60);
    float v64 = fg_rh(__builtin_log2f(v7));
    *(buf16 + v5) = fg_f2h(v64);
    float v68 = fg_rh(__builtin_sinf(v7));
    *(buf17 + v5) = fg_f2h(v68);
    float v72 = __builtin_truncf(v7);
    *(buf18 + v5) = fg_f2h(v72);
    float v76 = v13 ? v7 : v9;
    *(buf19 + v5) = fg_f2h(v76);
    float v80 = fg_rh(fg_rh(v7 * v9) + v11);
    *(buf20 + v5) = fg_f2h(v80);
  }
}
