/* Shared routines of kcgym's RVV baseline kernels: C with RVV 1.0 intrinsics (clang-14 names).
 *
 * Written the way the paper's Coral baseline is: plain strip-mined loops at LMUL=1 on the int8
 * data (int32 accumulators in the matching m4 group), operands streamed from memory, one output
 * strip at a time, no unrolling and no staging. clang -O2 does the rest.
 *
 * Reductions add up in a scalar, strip by strip (vmv.x.s of each vredsum): a reduction vector carried
 * across a loop makes clang emit whole-register moves (vmv1r.v), which kcgym's RVV ISA does not have.
 *
 * Requantisation (every matrix and conv task): y = clip(((acc * mult + 2^15) >> 16) + zero_point):
 * vssra rounds with vxrm = rnu, the reset value, so it adds 2^15 before shifting.
 */
#ifndef KCGYM_RVV_H
#define KCGYM_RVV_H

#include <riscv_vector.h>
#include <stddef.h>
#include <stdint.h>

#define REQUANT_SHIFT 16

/* int32 accumulators (e32, m4) -> int8: multiply, rounding shift, zero point, saturate (vnclip twice). */
static inline vint8m1_t requant(vint32m4_t acc, int32_t mult, int32_t zero_point, size_t vl) {
    acc = vmul_vx_i32m4(acc, mult, vl);
    acc = vssra_vx_i32m4(acc, REQUANT_SHIFT, vl);
    acc = vadd_vx_i32m4(acc, zero_point, vl);
    return vnclip_wx_i8m1(vnclip_wx_i16m2(acc, 0, vl), 0, vl);
}

/* The same for one scalar accumulator. */
static inline int8_t requant_scalar(int32_t acc, int32_t mult, int32_t zero_point) {
    int32_t v = ((acc * mult + (1 << (REQUANT_SHIFT - 1))) >> REQUANT_SHIFT) + zero_point;
    return (int8_t)(v > 127 ? 127 : v < -128 ? -128 : v);
}

/* Y[m, n] = requant(X[m, k] @ W[k, n] (+ bias[n])), optionally max(., 0): per row, per column strip, per k. */
static inline void gemm_requant(const int8_t *x, const int8_t *w, const int32_t *bias, int8_t *y, size_t m,
                                size_t k, size_t n, int32_t mult, int32_t zero_point, int relu) {
    for (size_t i = 0; i < m; i++) {
        const int8_t *xrow = x + i * k;
        for (size_t j = 0; j < n;) {
            size_t vl = vsetvl_e32m4(n - j);
            vint32m4_t acc = bias ? vle32_v_i32m4(bias + j, vl) : vmv_v_x_i32m4(0, vl);
            for (size_t kk = 0; kk < k; kk++) {
                vint32m4_t wv = vsext_vf4_i32m4(vle8_v_i8m1(w + kk * n + j, vl), vl);
                acc = vmacc_vx_i32m4(acc, xrow[kk], wv, vl);
            }
            vint8m1_t out = requant(acc, mult, zero_point, vl);
            if (relu)
                out = vmax_vx_i8m1(out, 0, vl);
            vse8_v_i8m1(y + i * n + j, out, vl);
            j += vl;
        }
    }
}

/* 'Same' convolution, stride 1, NHWC: X (h, h, cin), W (k, k, cin, cout), bias (cout) -> Y (h, h, cout). */
static inline void conv_requant(const int8_t *x, const int8_t *w, const int32_t *bias, int8_t *y, int h, int cin,
                                int cout, int k, int32_t mult, int32_t zero_point, int relu) {
    int p = k / 2;
    for (int oy = 0; oy < h; oy++) {
        for (int ox = 0; ox < h; ox++) {
            for (int co = 0; co < cout;) {
                size_t vl = vsetvl_e32m4(cout - co);
                vint32m4_t acc = vle32_v_i32m4(bias + co, vl);
                for (int ky = 0; ky < k; ky++) {
                    int iy = oy + ky - p;
                    if (iy < 0 || iy >= h)
                        continue;
                    for (int kx = 0; kx < k; kx++) {
                        int ix = ox + kx - p;
                        if (ix < 0 || ix >= h)
                            continue;
                        const int8_t *xp = x + (iy * h + ix) * cin;
                        const int8_t *wp = w + ((ky * k + kx) * cin) * cout + co;
                        for (int c = 0; c < cin; c++) {
                            vint32m4_t wv = vsext_vf4_i32m4(vle8_v_i8m1(wp + c * cout, vl), vl);
                            acc = vmacc_vx_i32m4(acc, xp[c], wv, vl);
                        }
                    }
                }
                vint8m1_t out = requant(acc, mult, zero_point, vl);
                if (relu)
                    out = vmax_vx_i8m1(out, 0, vl);
                vse8_v_i8m1(y + (oy * h + ox) * cout + co, out, vl);
                co += vl;
            }
        }
    }
}

/* Y[i] = T[X[i] + 128] over n elements: an indexed load at X xor 0x80 (the int8 -> unsigned index). */
static inline void table_lookup(const int8_t *x, int8_t *y, size_t n, const int8_t *table) {
    while (n > 0) {
        size_t vl = vsetvl_e8m1(n);
        vuint8m1_t idx = vreinterpret_v_i8m1_u8m1(vxor_vx_i8m1(vle8_v_i8m1(x, vl), -128, vl));
        vse8_v_i8m1(y, vluxei8_v_i8m1(table, idx, vl), vl);
        x += vl;
        y += vl;
        n -= vl;
    }
}

/* floor(sqrt(v)), bit by bit. */
static inline uint32_t isqrt(uint32_t v) {
    uint32_t r = 0;
    for (uint32_t bit = 1u << 15; bit; bit >>= 1)
        if ((r + bit) * (r + bit) <= v)
            r += bit;
    return r;
}

/* One row of LayerNorm / RMSNorm: y = clip(trunc_div(32 * (x - centre), isqrt(sum (x - centre)^2 >> lg) + 1)).
 * zero: a vector whose element 0 is 0 (the reductions' start value). */
static inline void scale_by_rms(const int8_t *x, int8_t *y, size_t hidden, int32_t centre, vint32m1_t zero) {
    int lg = __builtin_ctz(hidden);
    int32_t sum = 0;
    for (size_t j = 0; j < hidden;) {
        size_t vl = vsetvl_e8m1(hidden - j);
        vint32m4_t c = vsub_vx_i32m4(vsext_vf4_i32m4(vle8_v_i8m1(x + j, vl), vl), centre, vl);
        sum += vmv_x_s_i32m1_i32(vredsum_vs_i32m4_i32m1(vundefined_i32m1(), vmul_vv_i32m4(c, c, vl), zero, vl));
        j += vl;
    }
    int32_t s = (int32_t)isqrt((uint32_t)(sum >> lg)) + 1;
    for (size_t j = 0; j < hidden;) {
        size_t vl = vsetvl_e8m1(hidden - j);
        vint32m4_t c = vsub_vx_i32m4(vsext_vf4_i32m4(vle8_v_i8m1(x + j, vl), vl), centre, vl);
        vint32m4_t q = vdiv_vx_i32m4(vsll_vx_i32m4(c, 5, vl), s, vl);
        vse8_v_i8m1(y + j, vnclip_wx_i8m1(vnclip_wx_i16m2(q, 0, vl), 0, vl), vl);
        j += vl;
    }
}

#endif
