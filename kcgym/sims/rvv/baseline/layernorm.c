/* Row-wise integer LayerNorm: c = X - (sum X >> log2 hidden); Y = clip(trunc(32 c / (isqrt(sum c^2 >> lg) + 1))). */
#include "kcgym_rvv.h"

void kernel(const int8_t *x, int8_t *y, size_t rows, size_t hidden) {
    int lg = __builtin_ctz(hidden);
    vint32m1_t zero = vmv_s_x_i32m1(vundefined_i32m1(), 0, 1);
    for (size_t r = 0; r < rows; r++, x += hidden, y += hidden) {
        int32_t sum = 0;
        for (size_t j = 0; j < hidden;) {
            size_t vl = vsetvl_e8m1(hidden - j);
            vint32m4_t v = vsext_vf4_i32m4(vle8_v_i8m1(x + j, vl), vl);
            sum += vmv_x_s_i32m1_i32(vredsum_vs_i32m4_i32m1(vundefined_i32m1(), v, zero, vl));
            j += vl;
        }
        scale_by_rms(x, y, hidden, sum >> lg, zero);
    }
}
