#!/usr/bin/env python3
"""Compare bench_gemm --sweep runs under forced configurations (scripts/gemm-sweep-configs.sh).

    scripts/sweep_compare.py sweeps.txt [--margin 1.10] [--all]

Input: "=== config <name>" headers, each followed by one sweep's output (the table rows
"sweep_<prec>_<m>x<n>x<k>_<ops> ... <ratio> <goal> yes|NO" and their indented "kernel <name>"
lines). Several plain sweep files can be given instead, each named by its file name.
Output: for every case where a forced configuration beat the default's ratio (ours / cuBLAS)
by at least --margin (default 1.10), the case, the default's ratio and kernel, the best forced
configuration, its ratio and the kernel its sweep named (a forced name a shape cannot take
runs the dispatch's fallback: then the "win" is the spread between runs); then, per
configuration, how many cases it wins that way, and the cases that stay under 0.9x whatever
runs them. --all lists every case. --table prints instead one row a case with every run's
ratio and, after it, the kernel column of that run (the kernel family, "+copy" for staged
operands, "+a1" for operands read by the TF32 align1 form, "/N" for N parts of K). A configuration run twice is named "<name>#2" the second
time.
"""
import argparse
import re
import sys

KERNEL = re.compile(r"^\s+(sweep_\S+)\s.*\bkernel\s+(\S+)")


def parse_sweep(lines):
    ratios, kernels = {}, {}
    for line in lines:
        t = line.split()
        # a table row: case, ours, unit, peer, unit, ratio, goal (one word in the sweep), meets
        if len(t) >= 8 and t[0].startswith("sweep_") and t[-1] in ("yes", "NO"):
            try:
                ratios[t[0]] = float(t[-3])
            except ValueError:
                pass
            continue
        m = KERNEL.match(line)
        if m:
            kernels[m.group(1)] = m.group(2)
    return ratios, kernels


def read_runs(paths):
    runs = {}  # config -> (ratios, kernels), in order
    for path in paths:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
        chunks, name, cur = [], None, []
        for line in lines:
            if line.startswith("=== config "):
                if name is not None:
                    chunks.append((name, cur))
                name, cur = line[len("=== config "):].strip(), []
            else:
                cur.append(line)
        if name is not None:
            chunks.append((name, cur))
        else:
            chunks.append((path.rsplit("/", 1)[-1], lines))
        for n, ls in chunks:
            key, i = n, 2
            while key in runs:
                key, i = f"{n}#{i}", i + 1
            runs[key] = parse_sweep(ls)
    return runs


def print_table(runs, base):
    names = list(runs)
    base_r = runs[base][0]
    width = max(18, *(len(n) for n in names))
    print(f"{'case':36s} " + " ".join(f"{n:>{width}s}" for n in names))
    for case in base_r:
        cells = []
        for n in names:
            r = runs[n][0].get(case)
            k = runs[n][1].get(case, "?")
            cells.append(f"{'-' if r is None else f'{r:.3f}'} {k}"[:width].rjust(width))
        print(f"{case:36s} " + " ".join(cells))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--margin", type=float, default=1.10)
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--table", action="store_true")
    a = ap.parse_args()
    runs = read_runs(a.files)
    if not runs:
        sys.exit("no sweep found")
    names = list(runs)
    base = "default" if "default" in runs else names[0]
    base_r, base_k = runs[base]
    if not base_r:
        sys.exit(f"the {base} run has no sweep rows")
    if a.table:
        print_table(runs, base)
        return
    wins = {n: 0 for n in names if n != base}
    stuck = []
    print(f"{'case':36s} {base:>8s} {'kernel':18s} {'best forced':>14s} {'ratio':>7s}  kernel")
    for case, r0 in base_r.items():
        best, best_r = None, r0
        for n in names:
            if n == base:
                continue
            r = runs[n][0].get(case)
            if r is not None and r > best_r:
                best, best_r = n, r
        won = best is not None and best_r >= a.margin * r0
        if won:
            wins[best] += 1
        if a.all or won:
            bk = runs[best][1].get(case, "?") if best else ""
            print(f"{case:36s} {r0:8.3f} {base_k.get(case, '?'):18s} "
                  f"{(best or '-'):>14s} {best_r:7.3f}  {bk}")
        if best_r < 0.9:
            stuck.append((case, best_r))
    print(f"\ncases won by at least {a.margin:.2f}x the {base} ratio, per forced configuration:")
    for n, c in wins.items():
        print(f"  {n:16s} {c}")
    print(f"\nunder 0.9x whatever runs them: {len(stuck)} of {len(base_r)}")
    for case, r in sorted(stuck, key=lambda t: t[1])[:20]:
        print(f"  {case:36s} {r:.3f}")


if __name__ == "__main__":
    main()
