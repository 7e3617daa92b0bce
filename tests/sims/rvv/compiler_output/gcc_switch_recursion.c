int towers(int n, int from, int to, int via) { if (n == 0) return 0; return towers(n-1, from, via, to) + 1 + towers(n-1, via, to, from); }
int sw(int a, int b) { switch (a) { case 0: return b+1; case 1: return b*3; case 2: return b-7; case 3: return b^5; case 4: return b<<2; case 5: return b>>1; case 6: return b|9; default: return 0; } }
static int cmp(const void *a, const void *b) { return *(const int*)a - *(const int*)b; }
void isort(int *v, int n) { for (int i = 1; i < n; i++) { int x = v[i], j = i - 1; while (j >= 0 && v[j] > x) { v[j+1] = v[j]; j--; } v[j+1] = x; } }
int results[8];
int main(void) { int v[6] = {5, 3, 9, 1, 7, 2}; isort(v, 6); results[0] = towers(5, 1, 2, 3); for (int i = 0; i < 7; i++) results[1] += sw(i, 100 + v[i % 6]); return 0; }
