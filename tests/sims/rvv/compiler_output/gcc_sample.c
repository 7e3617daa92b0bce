static const signed char tab[16] = {1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16};
int gsum; int garr[100];
static int lsum; static int larr[50];
int bigtab[8] = {1,2,3,4,5,6,7,8};
struct S {int a; char b;} st = {1, 'x'};
void kernel(const signed char *x, signed char *y, int n) {
  for (int i = 0; i < n; i++) y[i] = x[i] > 0 ? x[i] : 0;
  gsum = tab[n&15]; lsum += gsum; larr[n] = 1; garr[n]=2;
  const char *s = "hello";
  y[0] = s[n] + bigtab[n&7];
}
static int helper(int a) { return a*a*a/(a+1); }
int __attribute__((noinline)) h2(int a) { return a*7 + lsum; }
int caller(int a, int b) { return helper(a) + h2(b) + lsum; }
int sw(int a) { switch(a) { case 0: return 5; case 1: return 9; case 2: return 13; case 3: return 1; case 4: return 77; case 5: return 3; default: return 0; } }
long long mul64(long long a, long long b) { return a*b; }
int tailer(int a) { return h2(a+1); }
