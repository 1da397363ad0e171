#!/usr/bin/env bash
# BF16 "NN" whose MN-major operand has rows of 16 but not 32 bytes: the transposed-B form
# ("sm90+bt", the default for these shapes) ran bf16 1000 x 4096 x 4096 NN 0.81-0.84x cuBLAS
# and 3000 x 4096 x 4096 0.80-0.81x where rows of 4000 / 8000 bytes (M = 2000 / 4000) ran
# 0.97-0.99x; copying such rows into whole 128-byte lines first (stage128.patch's arm) gained
# little and lost elsewhere (bench/NOTES-gemm.md, session 34). Here the other form the library
# has: "sm90+pack" forced (the transposing pack into K-major scratch, then the TN kernel; a
# forced "sm90" takes the transposed-B form here, as the default does, so session 35's run of
# this script with "sm90" compared the form with itself) against "sm90+bt", twice each in
# turn, at the checkout (no patch). Dispatch the pack for these rows if it wins beyond the
# rounds' spread. One device call, carry .deps; reuses build-gpu/ of an
# earlier call on the same machine (~60 s of build on a fresh one). Into $OUT, 2 files:
#   btpack.txt   scripts/gemm-sweep-configs.sh's sweeps (default, then each forced) over
#                $shapes, BF16 and BF16-out (scripts/sweep_compare.py --table reads it)
#   summary.txt  the exp_say lines
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
shapes="1000x4096x4096 3000x4096x4096 1000x8192x4096 1000x2048x4096 2000x4096x4096 3001x4096x1000 4096x4096x4096"
CM_BENCH_SWEEP_ONLY=bf16 exp_config_sweeps btpack.txt "$shapes" sm90+pack sm90+bt sm90+pack sm90+bt |
    tee -a "$R/summary.txt"
exp_say "done" | tee -a "$R/summary.txt"
