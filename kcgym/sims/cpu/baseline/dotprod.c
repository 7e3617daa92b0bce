/* kcgym CPU task "dotprod": Y[0] = sum_i A[i] * B[i] mod 2^32. */

void kernel(const int *a, const int *b, int *y, int n)
{
    unsigned sum = 0;
    for (int i = 0; i < n; i++)
        sum += (unsigned)a[i] * (unsigned)b[i];
    y[0] = (int)sum;
}
