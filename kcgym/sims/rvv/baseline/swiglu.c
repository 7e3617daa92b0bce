/* SwiGLU: G = S[requant(X Wg) + 128], U = requant(X Wu), H = clip((G U + 32) >> 6), Y = requant(H Wd). */
#include "kcgym_rvv.h"

#define GATE_SHIFT 6

struct swiglu {
    int32_t t, d, f, mult_g, mult_u, mult_d, zero_point;
};

/* scratch: G, U and H, t * f bytes each. */
void kernel(const int8_t *x, const int8_t *wg, const int8_t *wu, const int8_t *wd, const int8_t *s, int8_t *y,
            int8_t *scratch, const struct swiglu *p) {
    size_t count = (size_t)p->t * p->f;
    int8_t *g = scratch, *u = scratch + count, *h = scratch + 2 * count;
    gemm_requant(x, wg, NULL, g, p->t, p->d, p->f, p->mult_g, p->zero_point, 0);
    gemm_requant(x, wu, NULL, u, p->t, p->d, p->f, p->mult_u, p->zero_point, 0);
    table_lookup(g, g, count, s);
    for (size_t i = 0; i < count;) {
        size_t vl = vsetvl_e8m1(count - i);
        vint16m2_t prod = vwmul_vv_i16m2(vle8_v_i8m1(g + i, vl), vle8_v_i8m1(u + i, vl), vl);
        vse8_v_i8m1(h + i, vnclip_wx_i8m1(vssra_vx_i16m2(prod, GATE_SHIFT, vl), 0, vl), vl);
        i += vl;
    }
    gemm_requant(h, wd, NULL, y, p->t, p->f, p->d, p->mult_d, p->zero_point, 0);
}
