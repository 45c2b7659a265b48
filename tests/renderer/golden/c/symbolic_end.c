#include <stdint.h>
void symbolic_end(int32_t* restrict buf0, int32_t* restrict buf1, int32_t var0) {
  for (int32_t v3 = 0; v3 < var0; v3++) {
    int32_t v6 = *(buf0 + v3);
    int32_t v7 = v6 + var0;
    *(buf1 + v3) = v7;
  }
}
