/* kcgym CPU task "dhrystone": R. Weicker's Dhrystone (version 2 structure), written for kcgym.
 *
 * One pass of the main loop per row of `seeds`; the classic constants Int_1_Loc = 2, Int_2_Loc = 3
 * at the top of the loop are taken from the row instead (1 <= a < b <= 14), so the result depends
 * on the input. The globals Arr_1_Glob and Arr_2_Glob are the output tensors; the final values of
 * the other globals and locals are written to the 16-word record `state`. No libc: string copy and
 * compare are local functions. */

#define ARRAY 50
#define STRING 31

typedef enum { IDENT_1, IDENT_2, IDENT_3, IDENT_4, IDENT_5 } Enumeration;

typedef struct Record {
    struct Record *ptr_comp;
    Enumeration discr;
    Enumeration enum_comp;
    int int_comp;
    char str_comp[STRING];
} Record;

static Record *ptr_glob, *next_ptr_glob;
static int int_glob, bool_glob;
static char ch_1_glob, ch_2_glob;
static int *arr_1_glob;        /* [ARRAY] */
static int (*arr_2_glob)[ARRAY]; /* [ARRAY][ARRAY] */

static void str_copy(char *dst, const char *src)
{
    while ((*dst++ = *src++) != 0)
        ;
}

static int str_compare(const char *s, const char *t)
{
    while (*s != 0 && *s == *t) {
        s++;
        t++;
    }
    return (int)(unsigned char)*s - (int)(unsigned char)*t;
}

static int str_sum(const char *s)
{
    int sum = 0;
    while (*s != 0)
        sum += (unsigned char)*s++;
    return sum;
}

static void record_copy(Record *dst, const Record *src)
{
    dst->ptr_comp = src->ptr_comp;
    dst->discr = src->discr;
    dst->enum_comp = src->enum_comp;
    dst->int_comp = src->int_comp;
    str_copy(dst->str_comp, src->str_comp);
}

static int func_3(Enumeration value)
{
    return value == IDENT_3;
}

static Enumeration func_1(char ch_1, char ch_2)
{
    char loc_1 = ch_1;
    char loc_2 = loc_1;
    if (loc_2 != ch_2)
        return IDENT_1;
    ch_1_glob = loc_1;
    return IDENT_2;
}

static int func_2(const char *s1, const char *s2)
{
    int loc = 2;
    char ch = 0;
    while (loc <= 2)
        if (func_1(s1[loc], s2[loc + 1]) == IDENT_1) {
            ch = 'A';
            loc += 1;
        }
    if (ch >= 'W' && ch < 'Z')
        loc = 7;
    if (ch == 'R')
        return 1;
    if (str_compare(s1, s2) > 0) {
        loc += 7;
        int_glob = loc;
        return 1;
    }
    return 0;
}

static void proc_7(int a, int b, int *out)
{
    int loc = a + 2;
    *out = b + loc;
}

static void proc_6(Enumeration value, Enumeration *out)
{
    *out = value;
    if (!func_3(value))
        *out = IDENT_4;
    switch (value) {
    case IDENT_1:
        *out = IDENT_1;
        break;
    case IDENT_2:
        *out = int_glob > 100 ? IDENT_1 : IDENT_4;
        break;
    case IDENT_3:
        *out = IDENT_2;
        break;
    case IDENT_4:
        break;
    case IDENT_5:
        *out = IDENT_3;
        break;
    }
}

static void proc_3(Record **ptr_ref)
{
    if (ptr_glob != 0)
        *ptr_ref = ptr_glob->ptr_comp;
    proc_7(10, int_glob, &ptr_glob->int_comp);
}

static void proc_1(Record *p)
{
    Record *next = p->ptr_comp;
    record_copy(next, ptr_glob);
    p->int_comp = 5;
    next->int_comp = p->int_comp;
    next->ptr_comp = p->ptr_comp;
    proc_3(&next->ptr_comp);
    if (next->discr == IDENT_1) {
        next->int_comp = 6;
        proc_6(p->enum_comp, &next->enum_comp);
        next->ptr_comp = ptr_glob->ptr_comp;
        proc_7(next->int_comp, 10, &next->int_comp);
    } else {
        record_copy(p, p->ptr_comp);
    }
}

static void proc_2(int *value)
{
    int loc = *value + 10;
    Enumeration e = IDENT_2;
    do
        if (ch_1_glob == 'A') {
            loc -= 1;
            *value = loc - int_glob;
            e = IDENT_1;
        }
    while (e != IDENT_1);
}

static void proc_4(void)
{
    int loc = ch_1_glob == 'A';
    bool_glob = loc | bool_glob;
    ch_2_glob = 'B';
}

static void proc_5(void)
{
    ch_1_glob = 'A';
    bool_glob = 0;
}

static void proc_8(int *arr_1, int (*arr_2)[ARRAY], int int_1, int int_2)
{
    int loc = int_1 + 5;
    arr_1[loc] = int_2;
    arr_1[loc + 1] = arr_1[loc];
    arr_1[loc + 30] = loc;
    for (int index = loc; index <= loc + 1; ++index)
        arr_2[loc][index] = loc;
    arr_2[loc][loc - 1] += 1;
    arr_2[loc + 20][loc] = arr_1[loc];
    int_glob = 5;
}

void kernel(const int *seeds, int *state, int *arr1, int *arr2, int runs)
{
    Record glob, next_glob;
    char str_1_loc[STRING], str_2_loc[STRING];
    int int_1_loc = 0, int_2_loc = 0, int_3_loc = 0;
    Enumeration enum_loc = IDENT_1;
    char ch_index = 0;

    arr_1_glob = arr1;
    arr_2_glob = (int (*)[ARRAY])arr2;
    for (int i = 0; i < ARRAY; i++)
        arr_1_glob[i] = 0;
    for (int i = 0; i < ARRAY; i++)
        for (int j = 0; j < ARRAY; j++)
            arr_2_glob[i][j] = 0;
    int_glob = 0;
    bool_glob = 0;
    ch_1_glob = 0;
    ch_2_glob = 0;

    next_ptr_glob = &next_glob;
    ptr_glob = &glob;
    ptr_glob->ptr_comp = next_ptr_glob;
    ptr_glob->discr = IDENT_1;
    ptr_glob->enum_comp = IDENT_3;
    ptr_glob->int_comp = 40;
    str_copy(ptr_glob->str_comp, "DHRYSTONE PROGRAM, SOME STRING");
    next_glob.ptr_comp = 0;
    next_glob.discr = IDENT_1;
    next_glob.enum_comp = IDENT_1;
    next_glob.int_comp = 0;
    next_glob.str_comp[0] = 0;
    str_copy(str_1_loc, "DHRYSTONE PROGRAM, 1'ST STRING");
    str_2_loc[0] = 0;
    arr_2_glob[8][7] = 10;

    for (int run = 1; run <= runs; ++run) {
        proc_5();
        proc_4();
        int_1_loc = seeds[2 * (run - 1)];
        int_2_loc = seeds[2 * (run - 1) + 1];
        str_copy(str_2_loc, "DHRYSTONE PROGRAM, 2'ND STRING");
        enum_loc = IDENT_2;
        bool_glob = !func_2(str_1_loc, str_2_loc);
        while (int_1_loc < int_2_loc) {
            int_3_loc = 5 * int_1_loc - int_2_loc;
            proc_7(int_1_loc, int_2_loc, &int_3_loc);
            int_1_loc += 1;
        }
        proc_8(arr_1_glob, arr_2_glob, int_1_loc, int_3_loc);
        proc_1(ptr_glob);
        for (ch_index = 'A'; ch_index <= ch_2_glob; ++ch_index) {
            if (enum_loc == func_1(ch_index, 'C')) {
                proc_6(IDENT_1, &enum_loc);
                str_copy(str_2_loc, "DHRYSTONE PROGRAM, 3'RD STRING");
                int_2_loc = run;
                int_glob = run;
            }
        }
        int_2_loc = int_2_loc * int_1_loc;
        int_1_loc = int_2_loc / int_3_loc;
        int_2_loc = 7 * (int_2_loc - int_3_loc) - int_1_loc;
        proc_2(&int_1_loc);
    }

    state[0] = int_glob;
    state[1] = bool_glob;
    state[2] = ch_1_glob;
    state[3] = ch_2_glob;
    state[4] = int_1_loc;
    state[5] = int_2_loc;
    state[6] = int_3_loc;
    state[7] = enum_loc;
    state[8] = glob.int_comp;
    state[9] = glob.enum_comp;
    state[10] = glob.discr;
    state[11] = next_glob.int_comp;
    state[12] = next_glob.enum_comp;
    state[13] = next_glob.discr;
    state[14] = str_sum(str_2_loc);
    state[15] = ch_index;
}
