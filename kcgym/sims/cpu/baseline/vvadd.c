/* kcgym CPU task "vvadd": C[i] = A[i] + B[i] mod 2^32. */

void kernel(const int *a, const int *b, int *c, int n)
{
    for (int i = 0; i < n; i++)
        c[i] = (int)((unsigned)a[i] + (unsigned)b[i]);
}
