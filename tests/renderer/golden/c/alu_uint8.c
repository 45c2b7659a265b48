#include <stdint.h>
void alu_uint8(uint8_t* restrict buf0, uint8_t* restrict buf1, uint8_t* restrict buf2, unsigned char* restrict buf3, uint8_t* restrict buf4, uint8_t* restrict buf5, uint8_t* restrict buf6, uint8_t* restrict buf7, uint8_t* restrict buf8, uint8_t* restrict buf9, uint8_t* restrict buf10, uint8_t* restrict buf11, uint8_t* restrict buf12, uint8_t* restrict buf13, uint8_t* restrict buf14, uint8_t* restrict buf15, uint8_t* restrict buf16, unsigned char* restrict buf17, unsigned char* restrict buf18, unsigned char* restrict buf19, uint8_t* restrict buf20, uint8_t* restrict buf21, uint8_t* restrict buf22, uint8_t* restrict buf23) {
  for (int32_t v5 = 0; v5 < ((int32_t)289); v5++) {
    uint8_t v7 = *(buf0 + v5);
    uint8_t v9 = *(buf1 + v5);
    uint8_t v11 = *(buf2 + v5);
    _Bool v13 = (*(buf3 + v5) != 0);
    uint8_t v16 = v7 + v9;
    *(buf4 + v5) = v16;
    uint8_t v20 = v7 - v9;
    *(buf5 + v5) = v20;
    uint8_t v24 = v7 * v9;
    *(buf6 + v5) = v24;
    uint8_t v28 = (v9 == 0 ? 0 : v7 / v9);
    *(buf7 + v5) = v28;
    uint8_t v32 = (v9 == 0 ? 0 : v7 % v9);
    *(buf8 + v5) = v32;
    uint8_t v36 = (v9 == 0 ? 0 : v7 / v9);
    *(buf9 + v5) = v36;
    uint8_t v40 = (v9 == 0 ? 0 : v7 % v9);
    *(buf10 + v5) = v40;
    uint8_t v44 = (v7 > v9 ? v7 : v9);
    *(buf11 + v5) = v44;
    uint8_t v48 = ((uint8_t)v9 < 8 ? (uint8_t)((uint8_t)v7 << v9) : 0);
    *(buf12 + v5) = v48;
    uint8_t v52 = ((uint8_t)v9 < 8 ? v7 >> v9 : 0);
    *(buf13 + v5) = v52;
    uint8_t v56 = v7 & v9;
    *(buf14 + v5) = v56;
    uint8_t v60 = v7 | v9;
    *(buf15 + v5) = v60;
    uint8_t v64 = v7 ^ v9;
    *(buf16 + v5) = v64;
    _Bool v68 = v7 < v9;
    *(buf17 + v5) = (unsigned char)v68;
    _Bool v72 = v7 != v9;
    *(buf18 + v5) = (unsigned char)v72;
    _Bool v76 = v7 == v9;
    *(buf19 + v5) = (unsigned char)v76;
    uint8_t v80 = -v7;
    *(buf20 + v5) = v80;
    uint8_t v84 = v7;
    *(buf21 + v5) = v84;
    uint8_t v88 = v13 ? v7 : v9;
    *(buf22 + v5) = v88;
    uint8_t v92 = v7 * v9 + v11;
    *(buf23 + v5) = v92;
  }
}
