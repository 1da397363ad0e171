#!/usr/bin/env bash
# Session 45's rules verified at the commit (exp_s81's variants shipped): the first split rule
# on the float 32 x 64 FFMA tiles in parts of >= 64 at any K, TF32 on the 16-byte mma.sync tiles
# split from K 384 in parts of >= 128 below K 1024, TF32 on the FFMA tiles running FP32's
# choice of them, and the skinny rows kernel on 4 rows a warp from a block a multiprocessor.
# test_gpu_gemm's split / skinny / odd-shape tests plain, test_split_k and test_skinny under
# memcheck; the default over the shapes the rules moved against CUDAMODEL_GEMM_SPLITK=1 (config
# rows for h100.jsonl / h200.jsonl: config_default_rows.py); then mma:64x64 forced, its default
# split against splitk=1, on TF32 shapes whose "NN" / "TN" take other kernels by default
# (4096 x 64 x 1000, measured on the H200 long ago to lose in any split). One device call,
# carry .deps. Into $OUT: tests.txt, configs1.txt, forced.txt, summary.txt. Rerun at a later
# commit, it also shows 5efcfd2 (TF32 "TN" tiny products on sm90 whole below K 1024) by default.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
exp_test_runs none 200 test_split_k test_skinny test_medium_odd test_tf32_align1 \
    test_ffma_small_class test_small_all_combinations test_explain_matches_run \
    test_reproducible >"$R/tests.txt" 2>&1
exp_step "tests done"
exp_test_runs memcheck 240 test_split_k test_skinny >>"$R/tests.txt" 2>&1
exp_step "memcheck done"
shapes="2000x16x500 1000x16x300 256x256x300 256x256x600 128x512x400 64x64x700 128x128x500 \
200x200x400 1000x32x400 64x64x1000 128x128x1500 256x128x1200 384x384x400 384x384x600 \
4096x16x1000 512x512x512 1024x256x700 300x700x900 2048x128x500 3001x64x500 3001x64x127 \
127x127x127 4096x127x127 16x5000x1501 16x6000x2001 12x6000x2001 14x5000x1500 6000x16x2001 \
16x4096x2048 16x3001x2001"
CM_BENCH_SWEEP_ONLY="fp32 tf32" exp_config_sweeps configs1.txt "$shapes" splitk=1
f="4096x64x1000 512x512x512 4096x64x600 2048x128x500 1000x1000x500"
for round in 1 2; do
    exp_sweep1 "mma#$round" "$f" tf32 100 CUDAMODEL_GEMM_CONFIG=mma:64x64
    exp_sweep1 "mma_whole#$round" "$f" tf32 100 CUDAMODEL_GEMM_CONFIG=mma:64x64 \
        CUDAMODEL_GEMM_SPLITK=1
done >"$R/forced.txt" 2>&1
exp_step "forced done"
