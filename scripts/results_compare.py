#!/usr/bin/env python3
"""Compare two commits' GEMM rows in bench/results/h200.jsonl, case by case.

    scripts/results_compare.py OLD NEW [--results PATH] [--match TEXT] [--show N]

OLD and NEW are commits as the rows name them (git rev-parse --short). Each may be given as
COMMIT@PATH to read that commit's rows from another file (a device run's h200.jsonl before it
is appended). For every case both commits measured (bench "gemm"; a case measured several
times is averaged), prints the change NEW / OLD of the ratio (ours / peer, higher is better)
with both commits' ratios, the N largest losses and gains (--show, default 15); then, over the
sweep cases both measured (sweep_...), how many stay under 0.9x in each (by the worse and the
better of a commit's runs) and the geometric mean of their ratios. --match keeps the cases
whose name contains TEXT (several: comma-separated, any of them). A single short case moves
+-10 % between runs (bench/NOTES-gemm.md): read changes below that as noise unless both of two
runs agree.

--drift TEXT (comma-separated, any) names cases whose kernels the change did not touch (e.g.
"_1x,x1x,x1_" for the matrix-vector cases): the geometric mean of their NEW / OLD is the two
runs' machine drift (H200s differ by a few percent, small cases by up to 10 %), printed first;
each listed change is then also shown divided by it. --drift same takes the cases whose kernel
(the rows' "kernel" field, bench_gemm's tag from cm_gemm_explain: name, "+copy", "/parts") is
the same in both commits.

Rows that carry the kernel show it after the ratios: [tag] when both commits ran the same,
[old -> new] when it changed ("?" for a commit whose rows lack it). --changed lists only the
cases whose kernel changed (both known).
"""
import argparse
import collections
import json
import math
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load(spec, default_path, kernels):
    """The commit's ratios by case; kernels[case] gets the set of its kernel tags."""
    commit, _, path = spec.partition("@")
    rows = collections.defaultdict(list)
    with open(path or default_path, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            r = json.loads(line)
            if r.get("bench") == "gemm" and r.get("commit") == commit and r.get("ratio"):
                rows[r["case"]].append(float(r["ratio"]))
                if r.get("kernel"):
                    kernels[r["case"]].add(r["kernel"])
    return commit, rows


def summary(rows, keys):
    sweep = {c: v for c, v in rows.items() if c.startswith("sweep_") and c in keys}
    if not sweep:
        return "no sweep cases"
    worse = sum(1 for v in sweep.values() if min(v) < 0.9)
    better = sum(1 for v in sweep.values() if max(v) < 0.9)
    geo = math.exp(sum(math.log(sum(v) / len(v)) for v in sweep.values()) / len(sweep))
    return f"{len(sweep)} sweep cases, under 0.9x {worse} (worse run) / {better} (better run), " \
           f"geometric mean {geo:.3f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--results", default=os.path.join(ROOT, "bench", "results", "h200.jsonl"))
    ap.add_argument("--match", default="")
    ap.add_argument("--show", type=int, default=15)
    ap.add_argument("--drift", default="")
    ap.add_argument("--changed", action="store_true")
    a = ap.parse_args()
    old_k, new_k = collections.defaultdict(set), collections.defaultdict(set)
    try:
        old_c, old = load(a.old, a.results, old_k)
        new_c, new = load(a.new, a.results, new_k)
    except (OSError, ValueError) as e:
        print(f"results_compare: {e}", file=sys.stderr)
        return 2
    if not old or not new:
        print(f"no gemm rows for {old_c if not old else new_c}", file=sys.stderr)
        return 1
    def matches(case, spec):
        return any(t in case for t in spec.split(",") if t)

    def change(case):
        return (sum(new[case]) / len(new[case])) / (sum(old[case]) / len(old[case]))

    def tag(ks):
        return "/".join(sorted(ks)) if ks else "?"

    def kernel_changed(case):
        return bool(old_k[case]) and bool(new_k[case]) and old_k[case] != new_k[case]

    def same_kernel(case):
        return bool(old_k[case]) and old_k[case] == new_k[case]

    drift = None
    if a.drift:
        ref = [c for c in set(old) & set(new)
               if (same_kernel(c) if a.drift == "same" else matches(c, a.drift))]
        if not ref:
            print(f"results_compare: no case both commits measured matches {a.drift!r}",
                  file=sys.stderr)
            return 1
        drift = math.exp(sum(math.log(change(c)) for c in ref) / len(ref))
        print(f"machine drift NEW / OLD over {len(ref)} cases matching {a.drift!r}: {drift:.3f}")
    changes = []
    for case in sorted(set(old) & set(new)):
        if a.match and not matches(case, a.match):
            continue
        if a.changed and not kernel_changed(case):
            continue
        changes.append((change(case), case, old[case], new[case]))
    changes.sort()
    fmt = lambda v: " ".join(f"{x:.3f}" for x in v)
    picked = changes
    if len(changes) > 2 * a.show:
        picked = changes[:a.show] + [None] + changes[-a.show:]
    for c in picked:
        if c is None:
            print("...")
            continue
        rel = f"  (/ drift: {c[0] / drift:.3f})" if drift else ""
        ks = ""
        if old_k[c[1]] or new_k[c[1]]:
            ks = (f"  [{tag(new_k[c[1]])}]" if old_k[c[1]] == new_k[c[1]]
                  else f"  [{tag(old_k[c[1]])} -> {tag(new_k[c[1]])}]")
        print(f"{c[0]:6.3f}  {c[1]:38s} {fmt(c[2])} -> {fmt(c[3])}{rel}{ks}")
    both = set(old) & set(new)
    print(f"{old_c}: {summary(old, both)}")
    print(f"{new_c}: {summary(new, both)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
