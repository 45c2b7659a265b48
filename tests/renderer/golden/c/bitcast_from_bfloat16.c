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
static inline float fg_bf2f(uint16_t h) { return fg_bitsf((uint32_t)h << 16); }
/* float -> bfloat16 bits, round-to-nearest-even; NaN keeps its sign and becomes quiet */
static inline uint16_t fg_f2bf(float x) {
  uint32_t b = fg_fbits(x);
  if (x != x) return (uint16_t)(((b >> 16) & 0x8000u) | 0x7FC0u);
  return (uint16_t)((b + 0x7FFFu + ((b >> 16) & 1u)) >> 16);
}
static inline float fg_rbf(float x) { return fg_bf2f(fg_f2bf(x)); }
void bitcast_from_bfloat16(uint16_t* restrict buf0, uint16_t* restrict buf1, int16_t* restrict buf2, uint16_t* restrict buf3) {
  for (int32_t v2 = 0; v2 < ((int32_t)48); v2++) {
    float v4 = fg_bf2f(*(buf0 + v2));
    uint16_t v7 = (uint16_t)fg_f2bf(v4);
    *(buf1 + v2) = v7;
    int16_t v11 = (int16_t)fg_f2bf(v4);
    *(buf2 + v2) = v11;
    float v15 = fg_h2f(fg_f2bf(v4));
    *(buf3 + v2) = fg_f2h(v15);
  }
}
