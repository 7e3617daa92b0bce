/* Two conv layers with ReLU: H1 = relu(requant(conv(X, W1) + b1)) in a scratch buffer, then Y from H1. */
#include "kcgym_rvv.h"

struct conv_block {
    int32_t h, cin, cout, k, mult1, mult2, zero_point;
};

void kernel(const int8_t *x, const int8_t *w1, const int32_t *b1, const int8_t *w2, const int32_t *b2, int8_t *y,
            int8_t *h1, const struct conv_block *c) {
    conv_requant(x, w1, b1, h1, c->h, c->cin, c->cout, c->k, c->mult1, c->zero_point, 1);
    conv_requant(h1, w2, b2, y, c->h, c->cout, c->cout, c->k, c->mult2, c->zero_point, 1);
}
