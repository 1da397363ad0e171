#!/usr/bin/env bash
# The first GPU run of 38b235a (the tensor-core kernel after an operand staging as a
# programmatic dependent launch, split-K's parts excluded; gemv's few-row split from K = 2000):
# 1. test_gpu_gemm's staged paths plain (test_staged_back_to_back, new: staged products back
#    to back on one stream, each on an A overwritten just before it; test_realigned,
#    test_sm90*, test_split_k*, test_explain*, test_every*, test_small_skinny_packed) and
#    test_staged_back_to_back / test_realigned / test_sm90* / test_split_k under memcheck;
#    test_gpu_gemm_batched and _threads plain: tests.txt;
# 2. bench_gemm's sweep over the staged shapes (split ones too: bf16 127 x 1000 x 3001 "NN"
#    runs mma+copy in 8 parts, now without the dependent launch) and the gemv floor's
#    neighbours, TF32 and BF16 (FP32 for gemv), two rounds at the checkout ("head"), then two
#    with pdl-stage-off.patch ("off": no dependent launch after a staging): staged.txt
#    (scripts/sweep_compare.py --table reads it).
# 3. TF32 rule 3's new column floor (64 now; 32 columns back on mma:64x64 in its parts): the
#    default against sm90+at and mma:64x64 forced over 4096 / 8192 x 32 / 48 / 64 x 800-1000
#    "NN" and held-out 6000 x 40 x 700, TF32 only, two rounds: thin1.txt, thin2.txt.
# Keep the dependent launch where "head" matches or beats "off" beyond the rounds' spread.
# One device call (~6 min cold), carry .deps. Into $OUT: tests.txt, staged.txt, thin1.txt,
# thin2.txt, summary.txt.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
{
    exp_test_runs none 280 test_staged_back_to_back test_realigned 'test_sm90*' 'test_split_k*' 'test_explain*' \
        'test_every*' test_small_skinny_packed
    exp_test_runs memcheck 240 test_staged_back_to_back test_realigned 'test_sm90*' test_split_k
    exp_test_exe none 240 test_gpu_gemm_batched
    exp_test_exe none 240 test_gpu_gemm_threads
} >"$R/tests.txt" 2>&1
exp_step "tests done"
p=bench/experiments/pdl-stage-off.patch
shapes="3001x1000x64 4096x4096x64 2001x1500x96 1000x3001x127 127x4096x127 3001x64x127 \
127x127x127 127x1000x3001 1000x127x3001 1000x4096x4096 96x1x1536 200x1x2000 160x1x1800"
exp_sweeps_ab staged.txt "$p" off "$shapes" "fp32 tf32 bf16" 200
exp_unpatch_build "$p" >>"$R/summary.txt"
exp_step "unpatched"
thin="4096x32x900 4096x32x1000 8192x32x800 4096x48x900 4096x64x1000 6000x40x700"
for i in 1 2; do
    CM_BENCH_SWEEP_ONLY=tf32 exp_config_sweeps "thin$i.txt" "$thin" sm90+at mma:64x64
done
exp_step "done"
