#!/usr/bin/env python3
"""Plot bench_vector's size sweep: bandwidth (GB/s) against size, ours and the peer.

Reads the benchmark records (one JSON object per line, as bench/bench_common.h writes them:
bench, case, unit, ours, peer, peer_name, ratio, goal, meets, commit, date), keeps the sweep rows
(cases add_f32_sweep_2^k and sum_f32_sweep_2^k) of one commit, and writes a PNG with one panel
for add (against a device-to-device cudaMemcpy) and one for sum (against cub::DeviceReduce::Sum),
sizes 2^10 ... 2^28 on a log2 axis, GB/s on a log axis (--linear-y: linear), each point labelled
with the ratio ours / peer. It also prints the table it plotted.

The commit is the one of the last sweep row in the file (records are appended, so that is the
newest run), or --commit. When a commit was run more than once, its last row of each case wins.

Usage:
  scripts/plot_bench.py [--results bench/results/h200.jsonl] [--commit abc1234]
                        [--out bench/results/vector_bandwidth.png] [--linear-y] [--list]

Needs matplotlib. Without it, it says how to install it into a virtual environment:
  python3 -m venv .venv && .venv/bin/pip install matplotlib
  .venv/bin/python scripts/plot_bench.py
Exit status: 0 when the PNG was written (or --list printed); 1 on bad input (unreadable file, a
line that is not JSON, no sweep rows for the commit); 2 when matplotlib is missing.
"""
import argparse
import json
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASE_RE = re.compile(r"^(add|sum)_f32_sweep_2\^(\d+)$")
OPS = {
    "add": "add (3 arrays: 12 bytes per element)",
    "sum": "sum (read: 4 bytes per element)",
}
PEER_BYTES = {"add": "8 bytes per element", "sum": "4 bytes per element"}


def fail(msg, code=1):
    print("plot_bench: " + msg, file=sys.stderr)
    sys.exit(code)


def read_rows(path):
    """The sweep rows of the file, in file order: dicts with op and log2 added."""
    try:
        f = open(path, encoding="utf-8")
    except OSError as e:
        fail("cannot read %s: %s" % (path, e.strerror))
    rows = []
    with f:
        for lineno, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                row = json.loads(line)
            except ValueError as e:
                fail("%s:%d is not JSON (%s)" % (path, lineno, e))
            if not isinstance(row, dict):
                fail("%s:%d is not a JSON object" % (path, lineno))
            m = CASE_RE.match(str(row.get("case", "")))
            if m is None:
                continue
            for key in ("ours", "peer", "commit"):
                if key not in row:
                    fail("%s:%d: sweep row %s has no '%s'" % (path, lineno, row["case"], key))
            row["op"] = m.group(1)
            row["log2"] = int(m.group(2))
            row["line"] = lineno
            rows.append(row)
    return rows


def commits_in_order(rows):
    """Commits with sweep rows, oldest first (by their last row in the file)."""
    last = {}
    for r in rows:
        last[r["commit"]] = r["line"]
    return sorted(last, key=lambda c: last[c])


def select(rows, commit):
    """{op: {log2: row}} for commit, the last row of each case winning."""
    table = {op: {} for op in OPS}
    for r in rows:
        if r["commit"] == commit:
            table[r["op"]][r["log2"]] = r
    return table


def number(v):
    return float(v) if isinstance(v, (int, float)) else float("nan")


def print_table(table, commit, dates):
    print("bench_vector sweep at %s (%s)" % (commit, ", ".join(dates) or "no date"))
    print("%-4s %6s %12s %12s %8s  %s" % ("op", "size", "ours GB/s", "peer GB/s", "ratio", "peer"))
    for op in OPS:
        for k in sorted(table[op]):
            r = table[op][k]
            print("%-4s %6s %12.1f %12.1f %8.3f  %s" % (op, "2^%d" % k, number(r["ours"]),
                  number(r["peer"]), number(r.get("ratio")), r.get("peer_name", "")))


def plot(table, commit, dates, out, linear_y, source):
    try:
        import matplotlib
    except ImportError:
        fail("matplotlib is not installed for %s. Install it into a virtual environment and run "
             "the script with that environment's python:\n"
             "  python3 -m venv .venv && .venv/bin/pip install matplotlib\n"
             "  .venv/bin/python scripts/plot_bench.py %s\n"
             "(or: pip install --user matplotlib; Debian: apt-get install python3-matplotlib)"
             % (sys.executable, " ".join(sys.argv[1:])), 2)
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FixedLocator, NullLocator

    fig, axes = plt.subplots(1, 2, figsize=(13, 5.2), constrained_layout=True)
    for ax, op in zip(axes, OPS):
        ks = sorted(table[op])
        ax.set_title(OPS[op])
        ax.set_xscale("log", base=2)
        ax.set_xlim(2 ** 9.5, 2 ** 28.5)
        ticks = [2 ** k for k in range(10, 29, 2)]
        ax.xaxis.set_major_locator(FixedLocator(ticks))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xticklabels(["$2^{%d}$" % k for k in range(10, 29, 2)])
        ax.set_xlabel("elements (float32)")
        ax.set_ylabel("GB/s")
        ax.grid(True, which="major", alpha=0.3)
        if not ks:
            ax.text(0.5, 0.5, "no %s sweep rows" % op, transform=ax.transAxes, ha="center")
            continue
        xs = [2 ** k for k in ks]
        ours = [number(table[op][k]["ours"]) for k in ks]
        peer = [number(table[op][k]["peer"]) for k in ks]
        peer_name = table[op][ks[-1]].get("peer_name", "peer")
        ax.plot(xs, ours, "o-", color="tab:blue", label="libcudamodel")
        ax.plot(xs, peer, "s--", color="tab:gray", label="%s (%s)" % (peer_name, PEER_BYTES[op]))
        for x, k, o, p in zip(xs, ks, ours, peer):
            ratio = number(table[op][k].get("ratio"))
            top = max(v for v in (o, p) if v == v) if (o == o or p == p) else None
            if ratio == ratio and top is not None:  # not NaN
                ax.annotate("%.2fx" % ratio, (x, top), textcoords="offset points",
                            xytext=(0, 8), ha="center", fontsize=7, color="tab:blue")
        vals = [v for v in ours + peer if v == v and v > 0]
        if linear_y:
            ax.set_ylim(0, max(vals) * 1.1 if vals else 1)
        else:
            ax.set_yscale("log")
            if vals:
                ax.set_ylim(min(vals) / 1.5, max(vals) * 1.8)
        ax.legend(loc="upper left", fontsize=8)
    fig.suptitle("bench_vector size sweep (%s): bandwidth against size, ratio = ours / peer\n"
                 "commit %s, %s" % (source, commit, ", ".join(dates) or "no date"))
    outdir = os.path.dirname(os.path.abspath(out))
    os.makedirs(outdir, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", default=os.path.join(REPO, "bench", "results", "h200.jsonl"),
                    help="benchmark records, one JSON object per line (default: %(default)s)")
    ap.add_argument("--commit", help="the commit whose sweep to plot (default: the newest)")
    ap.add_argument("--out", default=os.path.join(REPO, "bench", "results", "vector_bandwidth.png"),
                    help="the PNG to write (default: %(default)s)")
    ap.add_argument("--linear-y", action="store_true",
                    help="linear GB/s axis (default: logarithmic, so small sizes show too)")
    ap.add_argument("--list", action="store_true", help="list the commits with sweep rows and exit")
    args = ap.parse_args()

    rows = read_rows(args.results)
    commits = commits_in_order(rows)
    if args.list:
        for c in commits:
            print(c)
        return 0
    if not commits:
        fail("%s has no sweep rows (cases add_f32_sweep_2^k / sum_f32_sweep_2^k); run "
             "bench_vector with CM_BENCH_RESULTS set first" % args.results)
    commit = args.commit if args.commit else commits[-1]
    if commit not in commits:
        fail("no sweep rows for commit %s in %s; commits with sweep rows: %s"
             % (commit, args.results, ", ".join(commits)))
    table = select(rows, commit)
    dates = sorted({str(r.get("date")) for op in table for r in table[op].values()
                    if r.get("date")})
    missing = ["%s 2^%d" % (op, k) for op in OPS for k in range(10, 29, 2) if k not in table[op]]
    if missing:
        print("plot_bench: warning: no rows for " + ", ".join(missing), file=sys.stderr)
    print_table(table, commit, dates)
    plot(table, commit, dates, args.out, args.linear_y, os.path.basename(args.results))
    print("wrote " + args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
