#!/usr/bin/env bash
# TF32 "NN" with a thin C (column-major m x n x k, n <= 128) and K under 1024: the default
# runs mma:64x64 (the tiny class; cm__gemm_sm90_tiny's rule 2 starts at K = 1024 and wants 2
# parts of K for the register-A form on C^T), but at session 35 on an H100 4096 x 64 x 1000
# NN ran 1.125 / 1.125x cuBLAS with "sm90+at" forced (one part) against 0.901 / 0.906 by
# default (H200, session 34: 0.815). Here the shapes around it: the default, "sm90+at" forced
# (the library's split), "sm90+at" in one part, mma:64x64 forced, then the same again (two
# rounds). A dispatch question (no patch): where "sm90+at" wins beyond the rounds' spread,
# rule 2's floor on K and its parts rule for C^T move. One device call, carry .deps; reuses
# build-gpu/ of an earlier call (~60 s of build on a fresh one). Into $OUT, 2 files:
#   atwhole.txt  scripts/gemm-sweep-configs.sh's sweeps over $shapes, TF32 (NN and TN)
#   summary.txt  the exp_say lines
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
shapes="4096x64x256 4096x64x512 4096x64x1000 4096x64x2048 8192x64x1000 2048x64x1000 3001x64x1000 4096x32x1000 4096x127x1000 4096x128x1000 8192x128x512"
CM_BENCH_SWEEP_ONLY=tf32 exp_config_sweeps atwhole.txt "$shapes" sm90+at sm90+at,splitk=1 \
    mma:64x64 splitk=0 sm90+at sm90+at,splitk=1 mma:64x64 | tee -a "$R/summary.txt"
exp_say "done" | tee -a "$R/summary.txt"
