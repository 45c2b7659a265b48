#include <stdint.h>
void alu_int32(int32_t* restrict buf0, int32_t* restrict buf1, int32_t* restrict buf2, unsigned char* restrict buf3, int32_t* restrict buf4, int32_t* restrict buf5, int32_t* restrict buf6, int32_t* restrict buf7, int32_t* restrict buf8, int32_t* restrict buf9, int32_t* restrict buf10, int32_t* restrict buf11, int32_t* restrict buf12, int32_t* restrict buf13, int32_t* restrict buf14, int32_t* restrict buf15, int32_t* restrict buf16, unsigned char* restrict buf17, unsigned char* restrict buf18, unsigned char* restrict buf19, int32_t* restrict buf20, int32_t* restrict buf21, int32_t* restrict buf22, int32_t* restrict buf23) {
  for (int32_t v5 = 0; v5 < ((int32_t)289); v5++) {
    int32_t v7 = *(buf0 + v5);
    int32_t v9 = *(buf1 + v5);
    int32_t v11 = *(buf2 + v5);
    _Bool v13 = (*(buf3 + v5) != 0);
    int32_t v16 = v7 + v9;
    *(buf4 + v5) = v16;
    int32_t v20 = v7 - v9;
    *(buf5 + v5) = v20;
    int32_t v24 = v7 * v9;
    *(buf6 + v5) = v24;
    int32_t v28 = (v9 == 0 ? 0 : v9 == -1 ? (int32_t)(0 - (uint32_t)v7) : v7 / v9);
    *(buf7 + v5) = v28;
    int32_t v32 = (v9 == 0 || v9 == -1 ? 0 : v7 % v9);
    *(buf8 + v5) = v32;
    int32_t v36 = ({ int32_t q_ = (v9 == 0 ? 0 : v9 == -1 ? (int32_t)(0 - (uint32_t)v7) : v7 / v9), r_ = (v9 == 0 || v9 == -1 ? 0 : v7 % v9); (int32_t)(q_ - (r_ != 0 && ((r_ ^ v9) < 0))); });
    *(buf9 + v5) = v36;
    int32_t v40 = ({ int32_t r_ = (v9 == 0 || v9 == -1 ? 0 : v7 % v9); (int32_t)(r_ != 0 && ((r_ ^ v9) < 0) ? r_ + v9 : r_); });
    *(buf10 + v5) = v40;
    int32_t v44 = (v7 > v9 ? v7 : v9);
    *(buf11 + v5) = v44;
    int32_t v48 = ((uint32_t)v9 < 32 ? (int32_t)((uint32_t)v7 << v9) : 0);
    *(buf12 + v5) = v48;
    int32_t v52 = (v7 >> ((uint32_t)v9 < 32 ? v9 : 31));
    *(buf13 + v5) = v52;
    int32_t v56 = v7 & v9;
    *(buf14 + v5) = v56;
    int32_t v60 = v7 | v9;
    *(buf15 + v5) = v60;
    int32_t v64 = v7 ^ v9;
    *(buf16 + v5) = v64;
    _Bool v68 = v7 < v9;
    *(buf17 + v5) = (unsigned char)v68;
    _Bool v72 = v7 != v9;
    *(buf18 + v5) = (unsigned char)v72;
    _Bool v76 = v7 == v9;
    *(buf19 + v5) = (unsigned char)v76;
    int32_t v80 = -v7;
    *(buf20 + v5) = v80;
    int32_t v84 = v7;
    *(buf21 + v5) = v84;
    int32_t v88 = v13 ? v7 : v9;
    *(buf22 + v5) = v88;
    int32_t v92 = v7 * v9 + v11;
    *(buf23 + v5) = v92;
  }
}
