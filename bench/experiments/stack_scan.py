#!/usr/bin/env python3
"""A poor man's backtrace of every thread of a process, for machines without gdb.

For each thread: its state, wait channel and blocked system call, then the words of its stack
(from the stack pointer up, STACK_BYTES) that point into an executable mapping, named
library+offset, with addr2line's function for files under the build directory. Candidates,
not a real unwind: stale return addresses also show. Usage: stack_scan.py PID [STACK_BYTES]
"""
import os
import shutil
import struct
import subprocess
import sys


def maps(pid):
    out = []
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            parts = line.split()
            if len(parts) < 6 or "x" not in parts[1]:
                continue
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            out.append((lo, hi, int(parts[2], 16), parts[5]))
    return out


def name(addr, exe_maps):
    for lo, hi, off, path in exe_maps:
        if lo <= addr < hi:
            return path, addr - lo + off
    return None


def func(path, off):
    if "build-gpu" not in path or shutil.which("addr2line") is None:
        return ""
    try:
        r = subprocess.run(["addr2line", "-f", "-C", "-e", path, hex(off)], capture_output=True,
                           text=True, timeout=10)
        return r.stdout.split("\n")[0]
    except (OSError, subprocess.SubprocessError):
        return ""


def main():
    pid = int(sys.argv[1])
    nbytes = int(sys.argv[2]) if len(sys.argv) > 2 else 16384
    exe_maps = maps(pid)
    mem = open(f"/proc/{pid}/mem", "rb")
    for tid in sorted(os.listdir(f"/proc/{pid}/task"), key=int):
        t = f"/proc/{pid}/task/{tid}"
        comm = open(f"{t}/comm").read().strip()
        wchan = open(f"{t}/wchan").read().strip()
        state = open(f"{t}/stat").read().rsplit(")", 1)[1].split()[0]
        try:
            sc = open(f"{t}/syscall").read().split()
        except OSError:
            sc = []
        print(f"--- tid {tid} {comm} state={state} wchan={wchan} syscall={' '.join(sc[:1])}")
        if len(sc) < 3 or not sc[-1].startswith("0x"):
            continue  # running: no saved user registers to read
        sp, pc = int(sc[-2], 16), int(sc[-1], 16)
        hits = [pc]
        try:
            mem.seek(sp)
            data = mem.read(nbytes)
        except OSError:
            data = b""
        for i in range(0, len(data) - 7, 8):
            (w,) = struct.unpack_from("<Q", data, i)
            if name(w, exe_maps) is not None:
                hits.append(w)
        seen = 0
        for w in hits:
            path, off = name(w, exe_maps) or ("?", w)
            print(f"    {os.path.basename(path)}+{off:#x} {func(path, off)}")
            seen += 1
            if seen >= 40:
                break


if __name__ == "__main__":
    main()
