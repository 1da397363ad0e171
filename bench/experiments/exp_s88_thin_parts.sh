#!/usr/bin/env bash
# The split of thin products on the mma.sync tiles' TF32 align1 form (a side of C of at most 16,
# 47-94 tiles of 64 x 64): exp_s84 (H100) measured 16 x 6000 x 2001 "NN" 0.80x cuBLAS in the
# slot rule's 2 parts (188 blocks in 264 slots), 0.93-0.96x whole, 1.03x in 8; 6000 x 16 x 2001
# 0.89x in 2, 0.76x whole, 1.09x in 8; 16 x 4000 x 2001 0.95x in 2, 0.89x in 4 (the default),
# 0.93x in 8; 3001 x 16 x 1500 1.08x in 5, 1.12x in 8. A model to test: blocks run one a
# multiprocessor at a time, time ~ ceil(tiles parts / SMs) / parts (+ the reduction), which
# ranks all but 6000 x 16's whole run. The default against CUDAMODEL_GEMM_SPLITK = 1, 2, 3, 4, 6,
# 7, 8, 12, 16, two rounds (no patch), TF32 only, thin shapes of 2000-8192 rows at K 1000-4096
# and, as controls, two wider ones. One device call, carry .deps. Into $OUT: configs1.txt,
# configs2.txt, summary.txt.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
shapes="16x6000x2001 6000x16x2001 16x4000x2001 3001x16x1500 16x3001x2001 16x5000x1501 \
12x8192x1999 8192x12x1999 16x2000x3001 2000x16x4095 64x3001x2001 3001x64x2001"
CM_BENCH_SWEEP_ONLY=tf32 exp_config_rounds "$shapes" splitk=1 splitk=2 splitk=3 splitk=4 \
    splitk=6 splitk=7 splitk=8 splitk=12 splitk=16
exp_step "configs done"
