/* Row-wise integer softmax: e = E[max - x]; Y = (e * 127) / sum(e), unsigned. */
#include "kcgym_rvv.h"

/* The exp table entries of one strip: E[m - x] (an indexed load, byte offsets 4 * (m - x)). */
static inline vuint32m4_t exp_strip(const int8_t *x, int32_t m, const int32_t *e, size_t vl) {
    vint32m4_t d = vrsub_vx_i32m4(vsext_vf4_i32m4(vle8_v_i8m1(x, vl), vl), m, vl);
    vuint32m4_t off = vreinterpret_v_i32m4_u32m4(vsll_vx_i32m4(d, 2, vl));
    return vreinterpret_v_i32m4_u32m4(vluxei32_v_i32m4(e, off, vl));
}

void kernel(const int8_t *x, int8_t *y, size_t rows, size_t hidden, const int32_t *e) {
    vint8m1_t lowest = vmv_s_x_i8m1(vundefined_i8m1(), -128, 1);
    vuint32m1_t zero = vmv_s_x_u32m1(vundefined_u32m1(), 0, 1);
    for (size_t r = 0; r < rows; r++, x += hidden, y += hidden) {
        int32_t m = -128;
        for (size_t j = 0; j < hidden;) {
            size_t vl = vsetvl_e8m1(hidden - j);
            int32_t strip = vmv_x_s_i8m1_i8(vredmax_vs_i8m1_i8m1(vundefined_i8m1(), vle8_v_i8m1(x + j, vl), lowest,
                                                                  vl));
            m = strip > m ? strip : m;
            j += vl;
        }
        uint32_t s = 0;
        for (size_t j = 0; j < hidden;) {
            size_t vl = vsetvl_e8m1(hidden - j);
            s += vmv_x_s_u32m1_u32(vredsum_vs_u32m4_u32m1(vundefined_u32m1(), exp_strip(x + j, m, e, vl), zero, vl));
            j += vl;
        }
        for (size_t j = 0; j < hidden;) {
            size_t vl = vsetvl_e8m1(hidden - j);
            vuint32m4_t q = vdivu_vx_u32m4(vmul_vx_u32m4(exp_strip(x + j, m, e, vl), 127, vl), s, vl);
            vuint8m1_t out = vnsrl_wx_u8m1(vnsrl_wx_u16m2(q, 0, vl), 0, vl);
            vse8_v_i8m1(y + j, vreinterpret_v_u8m1_i8m1(out), vl);
            j += vl;
        }
    }
}
