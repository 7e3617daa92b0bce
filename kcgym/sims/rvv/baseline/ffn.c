/* FFN: H = relu(requant(X @ W1 + b1)) in a scratch buffer; Y = requant(H @ W2 + b2). */
#include "kcgym_rvv.h"

struct mlp {
    int32_t t, d, f, mult1, mult2, zero_point;
};

void kernel(const int8_t *x, const int8_t *w1, const int32_t *b1, const int8_t *w2, const int32_t *b2, int8_t *y,
            int8_t *h, const struct mlp *p) {
    gemm_requant(x, w1, b1, h, p->t, p->d, p->f, p->mult1, p->zero_point, 1);
    gemm_requant(h, w2, b2, y, p->t, p->f, p->d, p->mult2, p->zero_point, 0);
}
