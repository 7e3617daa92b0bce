/* kcgym CPU task "rsort": Y = X sorted as unsigned 32-bit keys, by an LSD radix sort on bytes
 * (four counting passes: X -> tmp -> Y -> tmp -> Y; tmp is the scratch region). */

#define RADIX 256

static void pass(const unsigned *src, unsigned *dst, int n, int shift)
{
    unsigned count[RADIX];
    for (int d = 0; d < RADIX; d++)
        count[d] = 0;
    for (int i = 0; i < n; i++)
        count[(src[i] >> shift) & (RADIX - 1)]++;
    unsigned start = 0;
    for (int d = 0; d < RADIX; d++) {
        unsigned c = count[d];
        count[d] = start;
        start += c;
    }
    for (int i = 0; i < n; i++) {
        unsigned key = src[i];
        dst[count[(key >> shift) & (RADIX - 1)]++] = key;
    }
}

void kernel(const unsigned *x, unsigned *y, unsigned *tmp, int n)
{
    pass(x, tmp, n, 0);
    pass(tmp, y, n, 8);
    pass(y, tmp, n, 16);
    pass(tmp, y, n, 24);
}
