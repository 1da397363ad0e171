#!/usr/bin/env bash
# test_skinny's failure at b371688 in full (exp_s73): its output, not only the last lines.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build
OUT=/tmp bash scripts/gpu-test-one.sh -t none -s 60 -f test_skinny test_gpu_gemm
grep -v "^\[ *OK\|RUN" /tmp/one-test_gpu_gemm-none.txt | tail -40
