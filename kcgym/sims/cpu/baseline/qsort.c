/* kcgym CPU task "qsort": Y = X sorted ascending (signed). An iterative quicksort: median-of-three
 * pivot, Hoare partition, the smaller side first (an explicit stack of at most 2 log2 n bounds),
 * insertion sort below a cut-off. */

#define CUTOFF 8
#define STACK 64

static void swap(int *p, int *q)
{
    int t = *p;
    *p = *q;
    *q = t;
}

static void insertion_sort(int *a, int lo, int hi)
{
    for (int i = lo + 1; i <= hi; i++) {
        int v = a[i];
        int j = i - 1;
        while (j >= lo && a[j] > v) {
            a[j + 1] = a[j];
            j--;
        }
        a[j + 1] = v;
    }
}

static void quicksort(int *a, int n)
{
    int stack[STACK];
    int top = 0;
    int lo = 0, hi = n - 1;
    for (;;) {
        if (hi - lo < CUTOFF) {
            insertion_sort(a, lo, hi);
            if (top == 0)
                return;
            hi = stack[--top];
            lo = stack[--top];
            continue;
        }
        int mid = lo + (hi - lo) / 2;
        if (a[mid] < a[lo])
            swap(&a[mid], &a[lo]);
        if (a[hi] < a[lo])
            swap(&a[hi], &a[lo]);
        if (a[hi] < a[mid])
            swap(&a[hi], &a[mid]);
        int pivot = a[mid];
        int i = lo - 1, j = hi + 1;
        for (;;) {
            do
                i++;
            while (a[i] < pivot);
            do
                j--;
            while (a[j] > pivot);
            if (i >= j)
                break;
            swap(&a[i], &a[j]);
        }
        /* [lo, j] and [j + 1, hi]: push the larger, go on with the smaller */
        if (j - lo > hi - j - 1) {
            stack[top++] = lo;
            stack[top++] = j;
            lo = j + 1;
        } else {
            stack[top++] = j + 1;
            stack[top++] = hi;
            hi = j;
        }
    }
}

void kernel(const int *x, int *y, int n)
{
    for (int i = 0; i < n; i++)
        y[i] = x[i];
    quicksort(y, n);
}
