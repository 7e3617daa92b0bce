/* kcgym CPU task "median": 3-element median filter; the two end points are copied. */

static int median3(int a, int b, int c)
{
    if (a > b) {
        int t = a;
        a = b;
        b = t;
    }
    /* now a <= b: the median is b clipped to [a, c] from above, or max(a, c) */
    if (c >= b)
        return b;
    return c > a ? c : a;
}

void kernel(const int *x, int *y, int n)
{
    y[0] = x[0];
    for (int i = 1; i < n - 1; i++)
        y[i] = median3(x[i - 1], x[i], x[i + 1]);
    y[n - 1] = x[n - 1];
}
