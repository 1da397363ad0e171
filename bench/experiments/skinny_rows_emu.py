# Host emulation of kernels/gemm_skinny.cu's skinny_rows with skinny-shifted-rows.patch and
# skinny-loads-first.patch applied: for element sizes 4 and 2, row strides (ld) of every
# residue mod 8, K with and without a tail, KC 256 and 512, the vec modes 1 (only where every
# row is 16-byte aligned) and 2, every lane's words (load_words, step 1) and their shift into
# place (seg_floats, step 2) give each row the elements of the row, in order, zero past K;
# no load reads outside [row start, row start + K) except whole aligned vectors of later
# chunks that begin up to sh elements before the chunk (inside the row). Memory is a flat list
# of element indices standing for the values (index e holds e + 1), the matrix at base offset
# `base` elements from a 16-byte boundary.
#   python3 bench/experiments/skinny_rows_emu.py   -> "ok N"
import itertools


def run(esz, ld, K, rows, base, KC, vec):
    SE = 16 // esz
    SEGS = KC // (32 * SE)
    got = {}

    def load_words(a, idx, lo, kc, v, row_start, row_end):
        # a: element address of the vector's first element; returns SE element addresses (or
        # None for zero) as the kernel would place them, and checks the reads
        whole = v and idx >= lo and idx + SE <= kc
        out = []
        for e in range(SE):
            if whole or (idx + e >= lo and idx + e < kc):
                addr = a + e
                assert addr >= row_start - (SE - 1) and addr < row_end, (addr, row_start, row_end)
                if not whole:
                    assert row_start <= addr < row_end
                out.append(addr)
            else:
                out.append(None)
        if whole:
            assert a % SE == 0, "a whole vector must be 16-byte aligned"
        return out

    for row0 in range(0, rows, 2):  # a warp, two rows
        for p in range(2):
            i = row0 + p
            if i >= rows:
                continue
            rs = base + i * ld
            sh = rs % SE if vec == 2 else 0
            vals = [0] * K
            for k0 in range(0, K, KC):
                kc = min(KC, K - k0)
                for s in range(SEGS):
                    lanes = []
                    for lane in range(32):
                        kk = s * 32 * SE + lane * SE
                        a = rs + k0 + kk - sh
                        lo = -sh if k0 > 0 else 0
                        w = load_words(a, kk - sh, lo, kc, vec != 0, rs, rs + K)
                        nxt = None
                        if sh != 0 and lane == 31:
                            nxt = load_words(a + SE, kk - sh + SE, lo, kc, True, rs, rs + K)
                        lanes.append((w, nxt))
                    for lane in range(32):
                        kk = s * 32 * SE + lane * SE
                        w, nxt = lanes[lane]
                        if sh != 0:
                            nx = lanes[lane + 1][0] if lane < 31 else nxt
                            seg = (w + nx)[sh:sh + SE]
                        else:
                            seg = w
                        for e in range(SE):
                            k = kk + e
                            addr = seg[e]
                            if k < kc:
                                assert addr == rs + k0 + k, (i, k0, k, addr)
                                vals[k0 + k] = addr
                            else:
                                assert addr is None, (i, k0, k, addr)
            got[i] = vals
    for i, v in got.items():
        assert v == [base + i * ld + k for k in range(K)], i
    return True


n = 0
for esz, KC in itertools.product((4, 2), (256, 512)):
    SE = 16 // esz
    for ld_extra, K, base, vec in itertools.product(range(8), (5, 255, 256, 300, 700),
                                                   range(SE), (1, 2)):
        ld = K + ld_extra
        if vec == 1 and (ld % SE or base % SE):
            continue  # mode 1 only where every row is aligned (the host's rule)
        run(esz, ld, K, 5, base, KC, vec)
        n += 1
print("ok", n)
