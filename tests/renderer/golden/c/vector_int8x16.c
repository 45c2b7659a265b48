#include <stdint.h>
typedef int8_t fg_i8x16 __attribute__((vector_size(16)));
typedef unsigned char fg_u8x16 __attribute__((vector_size(16)));
typedef float fg_f32x16 __attribute__((vector_size(64)));
void vector_int8x16(int8_t* restrict buf0, int8_t* restrict buf1, int8_t* restrict buf2, int8_t* restrict buf3, int8_t* restrict buf4, unsigned char* restrict buf5, int8_t* restrict buf6, int8_t* restrict buf7, int8_t* restrict buf8, int8_t* restrict buf9, int8_t* restrict buf10, int8_t* restrict buf11, float* restrict buf12) {
  for (int32_t v3 = 0; v3 < ((int32_t)4); v3++) {
    int32_t v6 = v3 * ((int32_t)16);
    fg_i8x16 v9_m; __builtin_memcpy(&v9_m, (buf0 + v6), sizeof v9_m);
    fg_i8x16 v9 = v9_m;
    fg_i8x16 v11_m; __builtin_memcpy(&v11_m, (buf1 + v6), sizeof v11_m);
    fg_i8x16 v11 = v11_m;
    fg_i8x16 v12 = v9 + v11;
    { fg_i8x16 s13 = v12; __builtin_memcpy((buf2 + v6), &s13, sizeof s13); }
    fg_i8x16 v16 = v9 * v11;
    { fg_i8x16 s17 = v16; __builtin_memcpy((buf3 + v6), &s17, sizeof s17); }
    fg_i8x16 v20 = (fg_i8x16){(v9[0] > v11[0] ? v9[0] : v11[0]), (v9[1] > v11[1] ? v9[1] : v11[1]), (v9[2] > v11[2] ? v9[2] : v11[2]), (v9[3] > v11[3] ? v9[3] : v11[3]), (v9[4] > v11[4] ? v9[4] : v11[4]), (v9[5] > v11[5] ? v9[5] : v11[5]), (v9[6] > v11[6] ? v9[6] : v11[6]), (v9[7] > v11[7] ? v9[7] : v11[7]), (v9[8] > v11[8] ? v9[8] : v11[8]), (v9[9] > v11[9] ? v9[9] : v11[9]), (v9[10] > v11[10] ? v9[10] : v11[10]), (v9[11] > v11[11] ? v9[11] : v11[11]), (v9[12] > v11[12] ? v9[12] : v11[12]), (v9[13] > v11[13] ? v9[13] : v11[13]), (v9[14] > v11[14] ? v9[14] : v11[14]), (v9[15] > v11[15] ? v9[15] : v11[15])};
    { fg_i8x16 s21 = v20; __builtin_memcpy((buf4 + v6), &s21, sizeof s21); }
    fg_u8x16 v24 = (fg_u8x16){v9[0] < v11[0], v9[1] < v11[1], v9[2] < v11[2], v9[3] < v11[3], v9[4] < v11[4], v9[5] < v11[5], v9[6] < v11[6], v9[7] < v11[7], v9[8] < v11[8], v9[9] < v11[9], v9[10] < v11[10], v9[11] < v11[11], v9[12] < v11[12], v9[13] < v11[13], v9[14] < v11[14], v9[15] < v11[15]};
    { fg_u8x16 s25 = (fg_u8x16){(unsigned char)v24[0], (unsigned char)v24[1], (unsigned char)v24[2], (unsigned char)v24[3], (unsigned char)v24[4], (unsigned char)v24[5], (unsigned char)v24[6], (unsigned char)v24[7], (unsigned char)v24[8], (unsigned char)v24[9], (unsigned char)v24[10], (unsigned char)v24[11], (unsigned char)v24[12], (unsigned char)v24[13], (unsigned char)v24[14], (unsigned char)v24[15]}; __builtin_memcpy((buf5 + v6), &s25, sizeof s25); }
    fg_u8x16 v28 = (fg_u8x16){v11[0] < v9[0], v11[1] < v9[1], v11[2] < v9[2], v11[3] < v9[3], v11[4] < v9[4], v11[5] < v9[5], v11[6] < v9[6], v11[7] < v9[7], v11[8] < v9[8], v11[9] < v9[9], v11[10] < v9[10], v11[11] < v9[11], v11[12] < v9[12], v11[13] < v9[13], v11[14] < v9[14], v11[15] < v9[15]};
    fg_i8x16 v29 = (fg_i8x16){v28[0] ? v9[0] : v11[0], v28[1] ? v9[1] : v11[1], v28[2] ? v9[2] : v11[2], v28[3] ? v9[3] : v11[3], v28[4] ? v9[4] : v11[4], v28[5] ? v9[5] : v11[5], v28[6] ? v9[6] : v11[6], v28[7] ? v9[7] : v11[7], v28[8] ? v9[8] : v11[8], v28[9] ? v9[9] : v11[9], v28[10] ? v9[10] : v11[10], v28[11] ? v9[11] : v11[11], v28[12] ? v9[12] : v11[12], v28[13] ? v9[13] : v11[13], v28[14] ? v9[14] : v11[14], v28[15] ? v9[15] : v11[15]};
    { fg_i8x16 s30 = v29; __builtin_memcpy((buf6 + v6), &s30, sizeof s30); }
    fg_i8x16 v33 = (fg_i8x16){(v11[0] == 0 ? 0 : v11[0] == -1 ? (int8_t)(0 - (uint8_t)v9[0]) : v9[0] / v11[0]), (v11[1] == 0 ? 0 : v11[1] == -1 ? (int8_t)(0 - (uint8_t)v9[1]) : v9[1] / v11[1]), (v11[2] == 0 ? 0 : v11[2] == -1 ? (int8_t)(0 - (uint8_t)v9[2]) : v9[2] / v11[2]), (v11[3] == 0 ? 0 : v11[3] == -1 ? (int8_t)(0 - (uint8_t)v9[3]) : v9[3] / v11[3]), (v11[4] == 0 ? 0 : v11[4] == -1 ? (int8_t)(0 - (uint8_t)v9[4]) : v9[4] / v11[4]), (v11[5] == 0 ? 0 : v11[5] == -1 ? (int8_t)(0 - (uint8_t)v9[5]) : v9[5] / v11[5]), (v11[6] == 0 ? 0 : v11[6] == -1 ? (int8_t)(0 - (uint8_t)v9[6]) : v9[6] / v11[6]), (v11[7] == 0 ? 0 : v11[7] == -1 ? (int8_t)(0 - (uint8_t)v9[7]) : v9[7] / v11[7]), (v11[8] == 0 ? 0 : v11[8] == -1 ? (int8_t)(0 - (uint8_t)v9[8]) : v9[8] / v11[8]), (v11[9] == 0 ? 0 : v11[9] == -1 ? (int8_t)(0 - (uint8_t)v9[9]) : v9[9] / v11[9]), (v11[10] == 0 ? 0 : v11[10] == -1 ? (int8_t)(0 - (uint8_t)v9[10]) : v9[10] / v11[10]), (v11[11] == 0 ? 0 : v11[11] == -1 ? (int8_t)(0 - (uint8_t)v9[11]) : v9[11] / v11[11]), (v11[12] == 0 ? 0 : v11[12] == -1 ? (int8_t)(0 - (uint8_t)v9[12]) : v9[12] / v11[12]), (v11[13] == 0 ? 0 : v11[13] == -1 ? (int8_t)(0 - (uint8_t)v9[13]) : v9[13] / v11[13]), (v11[14] == 0 ? 0 : v11[14] == -1 ? (int8_t)(0 - (uint8_t)v9[14]) : v9[14] / v11[14]), (v11[15] == 0 ? 0 : v11[15] == -1 ? (int8_t)(0 - (uint8_t)v9[15]) : v9[15] / v11[15])};
    { fg_i8x16 s34 = v33; __builtin_memcpy((buf7 + v6), &s34, sizeof s34); }
    fg_i8x16 v37 = (fg_i8x16){((uint8_t)v11[0] < 8 ? (int8_t)((uint8_t)v9[0] << v11[0]) : 0), ((uint8_t)v11[1] < 8 ? (int8_t)((uint8_t)v9[1] << v11[1]) : 0), ((uint8_t)v11[2] < 8 ? (int8_t)((uint8_t)v9[2] << v11[2]) : 0), ((uint8_t)v11[3] < 8 ? (int8_t)((uint8_t)v9[3] << v11[3]) : 0), ((uint8_t)v11[4] < 8 ? (int8_t)((uint8_t)v9[4] << v11[4]) : 0), ((uint8_t)v11[5] < 8 ? (int8_t)((uint8_t)v9[5] << v11[5]) : 0), ((uint8_t)v11[6] < 8 ? (int8_t)((uint8_t)v9[6] << v11[6]) : 0), ((uint8_t)v11[7] < 8 ? (int8_t)((uint8_t)v9[7] << v11[7]) : 0), ((uint8_t)v11[8] < 8 ? (int8_t)((uint8_t)v9[8] << v11[8]) : 0), ((uint8_t)v11[9] < 8 ? (int8_t)((uint8_t)v9[9] << v11[9]) : 0), ((uint8_t)v11[10] < 8 ? (int8_t)((uint8_t)v9[10] << v11[10]) : 0), ((uint8_t)v11[11] < 8 ? (int8_t)((uint8_t)v9[11] << v11[11]) : 0), ((uint8_t)v11[12] < 8 ? (int8_t)((uint8_t)v9[12] << v11[12]) : 0), ((uint8_t)v11[13] < 8 ? (int8_t)((uint8_t)v9[13] << v11[13]) : 0), ((uint8_t)v11[14] < 8 ? (int8_t)((uint8_t)v9[14] << v11[14]) : 0), ((uint8_t)v11[15] < 8 ? (int8_t)((uint8_t)v9[15] << v11[15]) : 0)};
    { fg_i8x16 s38 = v37; __builtin_memcpy((buf8 + v6), &s38, sizeof s38); }
    fg_i8x16 v41 = v9 ^ v11;
    { fg_i8x16 s42 = v41; __builtin_memcpy((buf9 + v6), &s42, sizeof s42); }
    fg_i8x16 v45 = (fg_i8x16){v9[15], v9[14], v9[13], v9[12], v9[11], v9[10], v9[9], v9[8], v9[7], v9[6], v9[5], v9[4], v9[3], v9[2], v9[1], v9[0]};
    { fg_i8x16 s46 = v45; __builtin_memcpy((buf10 + v6), &s46, sizeof s46); }
    int8_t v49 = v11[1];
    int8_t v50 = v11[2];
    int8_t v51 = v11[3];
    int8_t v52 = v11[4];
    int8_t v53 = v11[5];
    int8_t v54 = v11[6];
    int8_t v55 = v11[7];
    int8_t v56 = v11[8];
    int8_t v57 = v11[9];
    int8_t v58 = v11[10];
    int8_t v59 = v11[11];
    int8_t v60 = v11[12];
    int8_t v61 = v11[13];
    int8_t v62 = v11[14];
    int8_t v63 = v11[15];
    int8_t v64 = v11[0];
    fg_i8x16 v65 = (fg_i8x16){v49, v50, v51, v52, v53, v54, v55, v56, v57, v58, v59, v60, v61, v62, v63, v64};
    { fg_i8x16 s66 = v65; __builtin_memcpy((buf11 + v6), &s66, sizeof s66); }
    fg_f32x16 v69 = (fg_f32x16){(float)v9[0], (float)v9[1], (float)v9[2], (float)v9[3], (float)v9[4], (float)v9[5], (float)v9[6], (float)v9[7], (float)v9[8], (float)v9[9], (float)v9[10], (float)v9[11], (float)v9[12], (float)v9[13], (float)v9[14], (float)v9[15]};
    { fg_f32x16 s70 = v69; __builtin_memcpy((buf12 + v6), &s70, sizeof s70); }
  }
}
