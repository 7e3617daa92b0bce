/* Depthwise conv, stride 1, 'same' zero padding, NHWC: per pixel and channel strip, widening MACs over the taps. */
#include "kcgym_rvv.h"

struct depthwise {
    int32_t h, c, k, mult, zero_point;
};

void kernel(const int8_t *x, const int8_t *w, const int32_t *bias, int8_t *y, const struct depthwise *d) {
    int h = d->h, c = d->c, k = d->k, p = k / 2;
    for (int oy = 0; oy < h; oy++) {
        for (int ox = 0; ox < h; ox++) {
            for (int ch = 0; ch < c;) {
                size_t vl = vsetvl_e32m4(c - ch);
                vint32m4_t acc = vle32_v_i32m4(bias + ch, vl);
                for (int ky = 0; ky < k; ky++) {
                    int iy = oy + ky - p;
                    if (iy < 0 || iy >= h)
                        continue;
                    for (int kx = 0; kx < k; kx++) {
                        int ix = ox + kx - p;
                        if (ix < 0 || ix >= h)
                            continue;
                        vint8m1_t xv = vle8_v_i8m1(x + (iy * h + ix) * c + ch, vl);
                        vint8m1_t wv = vle8_v_i8m1(w + (ky * k + kx) * c + ch, vl);
                        acc = vwadd_wv_i32m4(acc, vwmul_vv_i16m2(xv, wv, vl), vl);
                    }
                }
                vse8_v_i8m1(y + (oy * h + ox) * c + ch, requant(acc, d->mult, d->zero_point, vl), vl);
                ch += vl;
            }
        }
    }
}
