#!/usr/bin/env bash
# Experiment (issue #15, next after session 25): where the bounded FFMA form's dispatch stalls
# sit. Session 25's ncu (bench/NOTES-gemm.md) measured 0.90 cycles of "dispatch stall" per
# issued instruction in the bounded kernel (4096 x 4096 x 3000 NN, column-major) against 0.50
# in the whole-tile one (x 2992), with the same instructions executed; the SASS of the two
# loops shows no worse schedule. This profiles one launch of each with Nsight Compute's full
# set and source counters, keeps the reports in $OUT (ffma-<case>.ncu-rep, open them with
# ncu-ui) and prints, per kernel, the 25 SASS lines with the most dispatch-stall samples.
# Run on the device from the repository root after a build of build-gpu/ (gpu-check.sh's, or
# this script's own when there is none); carry .deps only for gpu-check's build.
set -u
R="${OUT:-/tmp}"
if [ ! -x build-gpu/bench/bench_gemm ]; then
    cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
        -DCUDAMODEL_BUILD_TESTS=OFF -DCUDAMODEL_BUILD_EXAMPLES=OFF -DCUDAMODEL_BUILD_TOOLS=OFF \
        >"$R/exp-build.txt" 2>&1 &&
        cmake --build build-gpu --parallel "$(nproc)" --target bench_gemm >>"$R/exp-build.txt" 2>&1 ||
        { tail -20 "$R/exp-build.txt"; exit 1; }
fi
for c in ${CM_EXP_CASES:-4096x4096x2992_NN 4096x4096x3000_NN}; do
    shape="${c%_*}"
    CM_BENCH_SWEEP_ONLY="fp32_$c" CM_BENCH_SWEEP_SHAPES="$shape" timeout 240 \
        ncu --clock-control none --set full --import-source no \
        --kernel-name regex:gemm_ffma_pipe --launch-count 1 -f -o "$R/ffma-$c" \
        build-gpu/bench/bench_gemm --sweep >"$R/ncu-run-$c.txt" 2>&1
    echo "=== $c"
    # the source page: one row per SASS instruction with its sampled stall reasons
    ncu -i "$R/ffma-$c.ncu-rep" --page source --print-source sass --csv 2>/dev/null \
        >"$R/src-$c.csv"
    python3 - "$R/src-$c.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], encoding="utf-8", errors="replace")))
head = next((i for i, r in enumerate(rows) if any("Source" == x or "Address" in x for x in r)), None)
if head is None:
    print("no source table"); sys.exit(0)
cols = rows[head]
key = next((j for j, x in enumerate(cols) if "dispatch" in x.lower()), None)
src = next((j for j, x in enumerate(cols) if x == "Source"), 1)
if key is None:
    print("no dispatch-stall column; columns:", cols[:40]); sys.exit(0)
def num(x):
    try: return float(x.replace(",", ""))
    except ValueError: return 0.0
body = [r for r in rows[head + 1:] if len(r) > key]
tot = sum(num(r[key]) for r in body)
print(f"{cols[key]}: {tot:.0f} samples")
for r in sorted(body, key=lambda r: -num(r[key]))[:25]:
    print(f"{num(r[key]):8.0f}  {r[src][:100]}")
PY
done
