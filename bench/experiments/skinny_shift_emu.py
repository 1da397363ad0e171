# Host emulation of skinny-shifted-rows.patch's load_seg_shifted (kernels/gemm_skinny.cu): for
# 4- and 2-byte elements, every misalignment sh of a row, first and later chunks (k0) and chunk
# lengths kc, the 32 lanes' aligned vectors, lane + 1's vector by "shuffle" (lane 31 loading its
# own), the two selects and the funnel shift give each lane the row's elements kk .. kk + SE - 1
# (zero from kc on), and nothing before the row's start is read in the first chunk.
#   python3 bench/experiments/skinny_shift_emu.py   -> "ok 300"
import random
def emu(esz, rowlen, sh, k0, kc, seed):
    random.seed(seed)
    SE=16//esz
    # memory: elements; row starts at element offset sh within an aligned block (index base)
    mem=[random.getrandbits(8*esz) for _ in range(sh+rowlen+64)]
    row=lambda k: mem[sh+k]
    def words(idx, lo):   # vector starting at chunk element idx (aligned)
        el=[]
        full = idx>=lo and idx+SE<=kc
        for e in range(SE):
            kk=idx+e
            if full or (kk>=lo and kk<kc):
                # must be within memory and not before row start (k0+kk>=0 when not full... )
                g=k0+kk
                assert g>=-sh
                if g<0: assert full, "read before row start"
                el.append(mem[sh+g])
            else: el.append(0)
        if esz==4: return el
        return [el[2*j] | el[2*j+1]<<16 for j in range(4)]
    segs=256//(32*SE)
    lo = -sh if k0>0 else 0
    for s in range(segs):
        A=[words(s*32*SE+l*SE-sh, lo) for l in range(32)]
        for l in range(32):
            kk=s*32*SE+l*SE
            w=A[l]+(A[l+1] if l<31 else words(kk-sh+SE, lo))
            b=sh*esz; ws=b>>2; rb=(b&3)*8
            z=w[ws:ws+5]
            o=[((z[q] | z[q+1]<<32) >> rb) & 0xffffffff for q in range(4)]
            if esz==4: v=o
            else: v=sum([[x & 0xffff, x>>16] for x in o],[])
            for e in range(SE):
                k=kk+e
                exp = row(k0+k) if k<kc else 0
                assert v[e]==exp,(esz,sh,k0,kc,l,e,v[e],exp)
n=0
for esz in (4,2):
    SE=16//esz
    for sh in range(1,SE):
        for k0 in (0,256,512):
            for kc in (1,5,7,8,9,100,129,200,255,256):
                emu(esz,2000,sh,k0,kc,n); n+=1
print("ok",n)
