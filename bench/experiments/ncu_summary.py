#!/usr/bin/env python3
"""One line per kernel of exp_gemm_ncu.sh's output: grid, block, durations (ns under ncu),
achieved occupancy, registers, DRAM and SM throughput (% of peak), per case and pass.

    python3 bench/experiments/ncu_summary.py ncu.txt
"""
import collections
import re
import sys


def main(path):
    data = collections.OrderedDict()
    cur = None
    for line in open(path, encoding="utf-8", errors="replace"):
        if line.startswith("==="):
            cur = line.strip()
            data[cur] = collections.OrderedDict()
            continue
        m = re.match(r'\s*(\d+) (.*) \| (.*) \| (.*?)"?,?$', line.rstrip())
        if not m or cur is None:
            if "sweep_" in line and cur:
                print(cur, line.strip()[:110])
            continue
        n, kern, metric, val = m.groups()
        if kern == "Kernel Name":
            continue
        kern = re.sub(r"\(.*", "", kern)
        kern = re.sub(r"cm_gemm_[a-z]+_detail::|<unnamed>::|void ", "", kern)[:70]
        data[cur].setdefault(kern, collections.defaultdict(list))[metric] += [val] * int(n)
    for case, kerns in data.items():
        print(case)
        for k, m in kerns.items():
            def first(name, count=1):
                return " / ".join(m[name][:count]) or "-"
            print(f"    {k} | grid {first('Grid Size')} | block {first('Block Size')}"
                  f" | duration {first('Duration', 4)} | occupancy {first('Achieved Occupancy')}"
                  f" | registers {first('Registers Per Thread')}"
                  f" | DRAM {first('DRAM Throughput')} | SM {first('Compute (SM) Throughput')}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: ncu_summary.py NCU_OUTPUT")
    main(sys.argv[1])
