/* kcgym CPU task "multiply": C[i] = A[i] * B[i] mod 2^32, in software by shift-and-add. */

static unsigned shift_add_multiply(unsigned x, unsigned y)
{
    unsigned result = 0;
    while (y != 0) {
        if (y & 1u)
            result += x;
        x <<= 1;
        y >>= 1;
    }
    return result;
}

void kernel(const int *a, const int *b, int *c, int n)
{
    for (int i = 0; i < n; i++)
        c[i] = (int)shift_add_multiply((unsigned)a[i], (unsigned)b[i]);
}
