#!/usr/bin/env bash
# The batched FP32 64 x 512^3 "NN" miss (0.887-0.892x cuBLAS against the goal's 0.9; it runs
# ffma:128x128x16q3: 1024 blocks, ~3.9 waves of 2 a multiprocessor): bench_gemm --batched with
# the dispatch's choice and with each shipped FFMA tile forced (CUDAMODEL_GEMM_CONFIG; a
# non-tuning build honours only shipped ones), two rounds. No patch. One device call, carry
# .deps. Into $OUT: batched.txt, summary.txt.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
for round in 1 2; do
    for cfg in default ffma:128x128x8 ffma:128x128x8f ffma:64x64x16; do
        echo "=== config $cfg#$round"
        if [ "$cfg" = default ]; then
            timeout 120 env -u CM_BENCH_RESULTS build-gpu/bench/bench_gemm --batched
        else
            CUDAMODEL_GEMM_CONFIG=$cfg timeout 120 env -u CM_BENCH_RESULTS \
                build-gpu/bench/bench_gemm --batched
        fi
    done
done >"$R/batched.txt" 2>&1
exp_step "done"
