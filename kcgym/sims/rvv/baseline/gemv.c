/* y[i] = requant(sum_j A[i, j] x[j]): widening products, reduced strip by strip; the requant in scalar code. */
#include "kcgym_rvv.h"

void kernel(const int8_t *a, const int8_t *x, int8_t *y, size_t m, size_t n, int32_t mult, int32_t zero_point) {
    vint32m1_t zero = vmv_s_x_i32m1(vundefined_i32m1(), 0, 1);
    for (size_t i = 0; i < m; i++) {
        int32_t acc = 0;
        for (size_t j = 0; j < n;) {
            size_t vl = vsetvl_e8m1(n - j);
            vint16m2_t p = vwmul_vv_i16m2(vle8_v_i8m1(a + i * n + j, vl), vle8_v_i8m1(x + j, vl), vl);
            acc += vmv_x_s_i32m1_i32(vwredsum_vs_i16m2_i32m1(vundefined_i32m1(), p, zero, vl));
            j += vl;
        }
        y[i] = requant_scalar(acc, mult, zero_point);
    }
}
