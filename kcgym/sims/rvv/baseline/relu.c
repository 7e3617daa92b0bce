/* ReLU: Y = max(X, 0) over n int8 elements. */
#include "kcgym_rvv.h"

void kernel(const int8_t *x, int8_t *y, size_t n) {
    while (n > 0) {
        size_t vl = vsetvl_e8m1(n);
        vse8_v_i8m1(y, vmax_vx_i8m1(vle8_v_i8m1(x, vl), 0, vl), vl);
        x += vl;
        y += vl;
        n -= vl;
    }
}
