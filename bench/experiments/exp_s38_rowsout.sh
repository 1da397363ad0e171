#!/usr/bin/env bash
# An epilogue for C without 16-byte rows (ffma-rows-out.patch, kernels/gemm_ffma.cu's
# rows_out): most FP32 sweep cases under 0.9x have M = 3001 or 127 (C's columns of 3001 / 127
# floats), where every FFMA epilogue stores element by element, a warp store writing 8 floats
# 16 bytes apart in each of 4 rows (4 x 4-5 sectors for 32 floats, each sector written 4
# times). The patch stages such a tile through shared memory (the operand buffers, free after
# the main loop) a band of rows at a time and the block writes each row in runs of consecutive
# elements (a warp store: 32 consecutive floats of one row, 4-5 sectors). In the general
# kernels of the 64 x 64 and 32 x 64 tiles (not 128 x 128: ptxas spilled 8-44 bytes at their
# register cap; sm_90's code only, CM__GEMM_SM90_ONLY_BODY) and, with CM__FFMA_ROWS_OUT_PIPE=1
# (the patch's default), the pipelined and edge kernels (sm_90 only already). SASS
# (cuobjdump): sm_80's 88 kernels byte-identical to the checkout's; sm_90 with
# CM__FFMA_ROWS_OUT_PIPE=0 the 28 pipelined / edge kernels and the 28 general 128 x 128 ones
# byte-identical (only the 32 small general kernels change); with 1 the pipelined kernels'
# main loops are rescheduled too (1149-1194 instructions a K tile, against 1149-1192), so the
# aligned FP32 shapes (4096^3 among them) are measured too. No spill, no warning; gemm_ffma.cu's default-list
# compile within the machine's spread (156.6 s against 146.9 / 158.4 at the checkout). One device call, carry .deps; on a machine that ran the full check or a
# fresh one. Into $OUT, 3 files:
#   rowsout.txt  the sweep over $shapes (FP32, NN and TN): "=== config head#i", then
#                patched "rows#i" (pipe 1), then "rows-pipe0#i" (CM__FFMA_ROWS_OUT_PIPE 0),
#                i = 1, 2. Ship the general kernels' part if the unaligned shapes they run
#                (3001 x 1000 x 64, 3001 x 64 x 127, 127 x 4096 x 127...) gain beyond head's
#                spread; the pipelined part only if 3001 x 4096 x 1000 / 3001^3 gain and
#                4096^3 / 8192^3 / 1000 x 3001 x 64 do not lose.
#   tests.txt    test_gpu_gemm's test_every_config (every built configuration forced on tails,
#                whole tiles and misaligned operands, C with pad 3 and offset 1 among them)
#                with the whole patch (pipe 1), plain, then under memcheck: last, so that the
#                measurements come back even where the call's 600 s end the tests
#   summary.txt  the exp_say lines
# The patch stays applied (exp_apply notes kernels/gemm_ffma.cu for the next build).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
shapes="3001x1000x64 3001x127x1000 3001x4096x1000 3001x64x127 3001x3001x3001 127x1000x3001 127x4096x127 1000x3001x64 4096x1000x64 1000x127x3001 4096x4096x4096"
exp_sweeps_ab rowsout.txt bench/experiments/ffma-rows-out.patch rows "$shapes" "fp32" 150
pipe_build() {
    sed -i "s/^#  define CM__FFMA_ROWS_OUT_PIPE [01]$/#  define CM__FFMA_ROWS_OUT_PIPE $1/" \
        kernels/gemm_ffma.cu
    cmake --build build-gpu --parallel 16 >/tmp/patch-build.txt 2>&1 ||
        { echo "pipe-$1 build failed"; tail -30 /tmp/patch-build.txt; } >>"$R/summary.txt"
    exp_say "pipe-$1 build done" | tee -a "$R/summary.txt"
}
# CM_EXP_PIPE0=0 leaves out the pipe-0 round and its two rebuilds (~190 s each on the H200):
# the whole patch alone then fits one call with its tests
if [ "${CM_EXP_PIPE0:-1}" != 0 ]; then
    pipe_build 0
    exp_sweeps2 rows-pipe0 "$shapes" "fp32" 150 >>"$R/rowsout.txt" 2>&1
    exp_say "rows-pipe0 done" | tee -a "$R/summary.txt"
    # the tests last (the measurements come back even if the call's limit ends them), on the
    # whole patch
    pipe_build 1
fi
{
    exp_test_runs none 300 test_every_config
    exp_test_runs memcheck 400 test_every_config
} >"$R/tests.txt" 2>&1
exp_say "done" | tee -a "$R/summary.txt"
