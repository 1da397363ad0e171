#!/usr/bin/env bash
# The split-K rule of ac32331 (float 32 x 64 FFMA tiles from K 256, TF32 align1 over a thin C
# from K 384) verified at the commit: test_gpu_gemm's split, odd-shape and config tests plain,
# test_split_k under memcheck, then the default dispatch against CUDAMODEL_GEMM_SPLITK = 4
# over exp_s79's shapes and a few a quarter of the SMs' worth of tiles or fewer (the first
# rule, which stays unsplit below K 2048 on those tiles), two rounds. One device call, carry
# .deps. Into $OUT: tests.txt, configs1.txt, configs2.txt, summary.txt.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
# CM_S80_QUICK=1 (little device time left): the first four tests, memcheck, one round
if [ "${CM_S80_QUICK:-0}" = 1 ]; then
    exp_test_runs none 120 test_split_k test_tf32_align1 test_medium_odd test_split_k_forced \
        >"$R/tests.txt" 2>&1
else
    exp_test_runs none 200 test_split_k test_split_k_forced test_medium_odd test_tf32_align1 \
        test_wave_split test_ffma_small_class test_reproducible test_small_all_combinations \
        test_split_k_graph test_explain_matches_run test_every_config >"$R/tests.txt" 2>&1
fi
exp_step "tests done"
exp_test_runs memcheck 240 test_split_k >>"$R/tests.txt" 2>&1
exp_step "memcheck done"
shapes="3001x12x500 4096x12x400 3001x8x300 8192x12x300 3001x12x256 4096x12x767 3001x64x500 \
3001x127x500 384x384x400 700x300x400 1000x127x300 3001x12x600 384x384x600 4096x16x1000 \
2000x16x500 1000x16x300 256x256x300 256x256x600 128x512x400 64x64x300 16x3001x2001 16x5000x1501 \
16x6000x2001 16x7000x2001"
if [ "${CM_S80_QUICK:-0}" = 1 ]; then
    CM_BENCH_SWEEP_ONLY="fp32 tf32" exp_config_sweeps configs1.txt "$shapes" splitk=4
else
    CM_BENCH_SWEEP_ONLY="fp32 tf32" exp_config_rounds "$shapes" splitk=4
fi
exp_step "configs done"
