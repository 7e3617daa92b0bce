/* Conv2D, stride 1, 'same' zero padding, NHWC: Y = requant(conv2d(X, W) + bias). */
#include "kcgym_rvv.h"

struct conv {
    int32_t h, cin, cout, k, mult, zero_point;
};

void kernel(const int8_t *x, const int8_t *w, const int32_t *bias, int8_t *y, const struct conv *c) {
    conv_requant(x, w, bias, y, c->h, c->cin, c->cout, c->k, c->mult, c->zero_point, 0);
}
