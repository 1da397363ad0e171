#!/usr/bin/env bash
# FP32 parity (4096^3 / 8192^3 at 0.92x cublasSgemm): the 128-thread tiles of 16 x 8 outputs a
# thread (warps of 64 x 64, as cuBLAS's sm80_xmma 128x128x8 stage3 warpsize2x2x1 FFMA kernel
# that ncu showed on the H200) at BK 16, never measured (128x128x8q3t, BK 8, ran 0.865x in
# session 3 against 128x128x8q3's 0.881x). Static count (sm_90 SASS of the tuning build, nvcc
# 13.0, the main loop of the whole-tile kernels): 128x128x16q3 (shipped) 1149-1183
# instructions a K tile for 1024 FFMAs (FFMA share 0.866-0.891, 64 LDS.128 + 3 LDS), 16q3t
# 2231-2277 for 2048 (0.899-0.918, 96 LDS.128 + 3), 207-249 registers, no spill: ~3 % more
# of the issue slots on FFMAs, with 8 warps a multiprocessor instead of 16.
# ffma-big-t-ship.patch ships 128x128x16q3t and a 4-stage 128x128x16q4t (table lines only,
# their fallback 16q3's 128x128x8f: as their own fallback their general kernels compiled for
# every architecture doubled gemm_ffma.cu's compile time) so that build-gpu/ compiles them
# without a tuning build. Shipped for good, a winning t tile replaces 16q3 in the sm_90 table
# (each costs ~48 s of sm_90 compile: bench/NOTES-gemm.md, session 33). One device call, carry .deps; on a
# machine that ran the full check (build-gpu/ reused) or a fresh one. Into $OUT, 3 files:
#   ffmat.txt    FP32 sweeps over $shapes (NN and TN): the default, then 16q3, 16q3t, 16q4t
#                forced, twice each in turn (scripts/sweep_compare.py --table). Ship a t tile
#                for the large FP32 class if it beats 16q3 at 4096^3 / 8192^3 in both rounds
#                and loses nowhere else beyond the rounds' spread.
#   every.txt    test_gpu_gemm's test_every_config with the patch (every built configuration
#                forced on tails, whole tiles and misaligned operands: the two t tiles included)
#   summary.txt  the exp_say lines
# The patch stays applied (exp_apply notes it for the next build); exp_unpatch takes it out.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
# not in a pipeline: a failed apply (exp_apply) ends the script
exp_patch_build bench/experiments/ffma-big-t-ship.patch >>"$R/summary.txt"
exp_say "patched build done" | tee -a "$R/summary.txt"
shapes="4096x4096x4096 8192x8192x8192 2048x2048x2048 1000x4096x4096 4096x4096x1000 4096x4096x3001 3001x4096x1000"
CM_BENCH_SWEEP_ONLY=fp32 exp_config_sweeps ffmat.txt "$shapes" ffma:128x128x16q3 \
    ffma:128x128x16q3t ffma:128x128x16q4t ffma:128x128x16q3 ffma:128x128x16q3t \
    ffma:128x128x16q4t | tee -a "$R/summary.txt"
exp_test_runs none 300 test_every_config >"$R/every.txt" 2>&1
exp_say "tests done" | tee -a "$R/summary.txt"
exp_say "done" | tee -a "$R/summary.txt"
