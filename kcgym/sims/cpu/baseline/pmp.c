/* kcgym CPU task "pmp": program the physical-memory-protection unit and probe it from user privilege.
 *
 * Entry i of `regions` (offset, log2 size, R/W bits) becomes the NAPOT PMP entry i over the window
 * [base + offset, base + offset + 2^log2), where base is the scratch region's address rounded up to
 * WINDOW_ALIGN. Each probe (offset, 0 load / 1 store) is performed with mstatus.MPRV = 1 and
 * MPP = U, so that it is checked as a user-mode access (privileged spec 3.1.6.3, 3.7.1); an access
 * fault traps to `pmp_trap`, which marks it and skips the faulting instruction. allowed[j] = 1 when
 * the probe completed. */

#define MSTATUS_MPP 0x1800u
#define MSTATUS_MPRV 0x20000u
#define PMP_NAPOT 0x18u
#define PMP_ENTRIES 16
#define WINDOW_ALIGN 512u

static volatile int pmp_faulted;

void pmp_trap(void);
__asm__(".text\n"
        ".align 2\n"
        "pmp_trap:\n"
        "    addi sp, sp, -16\n"
        "    sw t0, 0(sp)\n"
        "    sw t1, 4(sp)\n"
        "    csrr t0, mepc\n"
        "    addi t0, t0, 4\n" /* skip the faulting (4-byte) load or store */
        "    csrw mepc, t0\n"
        "    li t0, 1\n"
        "    lui t1, %hi(pmp_faulted)\n"
        "    sw t0, %lo(pmp_faulted)(t1)\n"
        "    lw t1, 4(sp)\n"
        "    lw t0, 0(sp)\n"
        "    addi sp, sp, 16\n"
        "    mret\n");

#define WRITE_PMPADDR(n, v) __asm__ volatile("csrw pmpaddr" #n ", %0" : : "r"(v) : "memory")
#define WRITE_PMPCFG(n, v) __asm__ volatile("csrw pmpcfg" #n ", %0" : : "r"(v) : "memory")

static void write_pmpaddr(int i, unsigned value)
{
    switch (i) {
    case 0: WRITE_PMPADDR(0, value); break;
    case 1: WRITE_PMPADDR(1, value); break;
    case 2: WRITE_PMPADDR(2, value); break;
    case 3: WRITE_PMPADDR(3, value); break;
    case 4: WRITE_PMPADDR(4, value); break;
    case 5: WRITE_PMPADDR(5, value); break;
    case 6: WRITE_PMPADDR(6, value); break;
    case 7: WRITE_PMPADDR(7, value); break;
    case 8: WRITE_PMPADDR(8, value); break;
    case 9: WRITE_PMPADDR(9, value); break;
    case 10: WRITE_PMPADDR(10, value); break;
    case 11: WRITE_PMPADDR(11, value); break;
    case 12: WRITE_PMPADDR(12, value); break;
    case 13: WRITE_PMPADDR(13, value); break;
    case 14: WRITE_PMPADDR(14, value); break;
    default: WRITE_PMPADDR(15, value); break;
    }
}

static void write_pmpcfg(int i, unsigned value)
{
    switch (i) {
    case 0: WRITE_PMPCFG(0, value); break;
    case 1: WRITE_PMPCFG(1, value); break;
    case 2: WRITE_PMPCFG(2, value); break;
    default: WRITE_PMPCFG(3, value); break;
    }
}

static int probe(unsigned address, int kind)
{
    unsigned word;
    pmp_faulted = 0;
    __asm__ volatile("csrc mstatus, %0" : : "r"(MSTATUS_MPP) : "memory");
    __asm__ volatile("csrs mstatus, %0" : : "r"(MSTATUS_MPRV) : "memory");
    if (kind == 0)
        __asm__ volatile("lw %0, 0(%1)" : "=r"(word) : "r"(address) : "memory");
    else
        __asm__ volatile("sw zero, 0(%0)" : : "r"(address) : "memory");
    __asm__ volatile("csrc mstatus, %0" : : "r"(MSTATUS_MPRV) : "memory");
    (void)word;
    return pmp_faulted == 0;
}

void kernel(const int *regions, const int *probes, int *allowed, unsigned char *scratch, int nregions, int nprobes)
{
    unsigned base = ((unsigned)scratch + WINDOW_ALIGN - 1) & ~(WINDOW_ALIGN - 1);
    unsigned cfg[PMP_ENTRIES / 4] = {0, 0, 0, 0};
    __asm__ volatile("csrw mtvec, %0" : : "r"(pmp_trap) : "memory");
    for (int i = 0; i < PMP_ENTRIES; i++) {
        unsigned napot = 0, bits = 0;
        if (i < nregions) {
            unsigned start = base + (unsigned)regions[3 * i];
            unsigned half = 1u << (regions[3 * i + 1] - 1);
            napot = (start + half - 1) >> 2;
            bits = PMP_NAPOT | ((unsigned)regions[3 * i + 2] & 3u);
        }
        write_pmpaddr(i, napot);
        cfg[i / 4] |= bits << (8 * (i % 4));
    }
    for (int k = 0; k < PMP_ENTRIES / 4; k++)
        write_pmpcfg(k, cfg[k]);
    for (int j = 0; j < nprobes; j++)
        allowed[j] = probe(base + (unsigned)probes[2 * j], probes[2 * j + 1]);
}
