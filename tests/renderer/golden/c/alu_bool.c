#include <stdint.h>
void alu_bool(unsigned char* restrict buf0, unsigned char* restrict buf1, unsigned char* restrict buf2, unsigned char* restrict buf3, unsigned char* restrict buf4, unsigned char* restrict buf5, unsigned char* restrict buf6, unsigned char* restrict buf7, unsigned char* restrict buf8, unsigned char* restrict buf9, unsigned char* restrict buf10, unsigned char* restrict buf11, unsigned char* restrict buf12, unsigned char* restrict buf13, unsigned char* restrict buf14, unsigned char* restrict buf15, unsigned char* restrict buf16) {
  for (int32_t v5 = 0; v5 < ((int32_t)4); v5++) {
    _Bool v7 = (*(buf0 + v5) != 0);
    _Bool v9 = (*(buf1 + v5) != 0);
    _Bool v11 = (*(buf2 + v5) != 0);
    _Bool v13 = (*(buf3 + v5) != 0);
    _Bool v16 = v7 | v9;
    *(buf4 + v5) = (unsigned char)v16;
    _Bool v20 = v7 ^ v9;
    *(buf5 + v5) = (unsigned char)v20;
    _Bool v24 = v7 & v9;
    *(buf6 + v5) = (unsigned char)v24;
    _Bool v28 = v7 & v9;
    *(buf7 + v5) = (unsigned char)v28;
    _Bool v32 = v7 | v9;
    *(buf8 + v5) = (unsigned char)v32;
    _Bool v36 = v7 ^ v9;
    *(buf9 + v5) = (unsigned char)v36;
    _Bool v40 = v7 | v9;
    *(buf10 + v5) = (unsigned char)v40;
    _Bool v44 = v7 < v9;
    *(buf11 + v5) = (unsigned char)v44;
    _Bool v48 = v7 != v9;
    *(buf12 + v5) = (unsigned char)v48;
    _Bool v52 = v7 == v9;
    *(buf13 + v5) = (unsigned char)v52;
    _Bool v56 = !v7;
    *(buf14 + v5) = (unsigned char)v56;
    _Bool v60 = v13 ? v7 : v9;
    *(buf15 + v5) = (unsigned char)v60;
    _Bool v64 = (v7 & v9) | v11;
    *(buf16 + v5) = (unsigned char)v64;
  }
}
