#!/usr/bin/env python3
"""The "=== config default" section of a scripts/gemm-sweep-configs.sh output (an experiment's
configs1.txt) as rows of bench/results/<card>.jsonl: one JSON object per case.

usage: config_default_rows.py SWEEPS.txt COMMIT DATE >> bench/results/h100.jsonl
"""
import json
import re
import sys

PEER = {"fp32": "cublasGemmEx_32F", "tf32": "cublasGemmEx_FAST_TF32",
        "bf16": "cublasGemmEx_BF16", "bf16o": "cublasGemmEx_BF16",
        "3xtf32": "cublasGemmEx_32F"}


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    path, commit, date = sys.argv[1:]
    section, rows, last = None, [], None
    for line in open(path):
        m = re.match(r"=== config (\S+)", line)
        if m:
            section = m.group(1).split("#")[0]
            continue
        if section != "default":
            continue
        m = re.match(r"(sweep_(\w+?)_\S+)\s+(\S+) (\S+)\s+(\S+) \S+\s+(\S+)\s+(\S+)\s+(yes|NO)\s*$",
                     line)
        if m:
            last = {"bench": "gemm", "case": m.group(1), "unit": m.group(4),
                    "ours": float(m.group(3)), "peer": float(m.group(5)),
                    "peer_name": PEER[m.group(2)], "ratio": float(m.group(6)),
                    "goal": m.group(7), "meets": m.group(8) == "yes", "commit": commit,
                    "date": date}
            rows.append(last)
            continue
        k = re.match(r"\s+(sweep_\S+)\s+\S+\s+kernel (\S+)", line)
        if k and last is not None and k.group(1) == last["case"]:
            last["kernel"] = k.group(2)
    if not rows:
        sys.exit(f"{path}: no default rows")
    for r in rows:
        print(json.dumps(r, separators=(",", ":")))


if __name__ == "__main__":
    main()
