/* kcgym CPU task "towers": the Towers of Hanoi by the classic recursion; move k is written as the
 * record (disc, from peg label, to peg label) at moves[3k]. */

static int *emit_move(int *out, int disc, int from, int to)
{
    out[0] = disc;
    out[1] = from;
    out[2] = to;
    return out + 3;
}

static int *hanoi(int *out, int discs, int from, int to, int via)
{
    if (discs == 0)
        return out;
    out = hanoi(out, discs - 1, from, via, to);
    out = emit_move(out, discs, from, to);
    return hanoi(out, discs - 1, via, to, from);
}

void kernel(const int *pegs, int *moves, int discs)
{
    hanoi(moves, discs, pegs[0], pegs[2], pegs[1]);
}
