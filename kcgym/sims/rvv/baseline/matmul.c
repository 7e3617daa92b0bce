/* GEMM, batched GEMM and Linear: Y = requant(X @ W (+ bias)), shapes in struct gemm. */
#include "kcgym_rvv.h"

struct gemm {
    int32_t batch, m, k, n, mult, zero_point;
};

/* bias may be NULL (matmul, batch_matmul); batch matrices follow each other in X, W and Y. */
void kernel(const int8_t *x, const int8_t *w, const int32_t *bias, int8_t *y, const struct gemm *g) {
    for (int32_t b = 0; b < g->batch; b++)
        gemm_requant(x + b * g->m * g->k, w + b * g->k * g->n, bias, y + b * g->m * g->n, g->m, g->k, g->n,
                     g->mult, g->zero_point, 0);
}
