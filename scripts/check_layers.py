#!/usr/bin/env python3
"""check_layers.py: every dependency between files of src/ goes down the module layers.

Layers, bottom to top: core, memory, exec, compute, multi, diag (README, "Architecture").
A file depends on another when it includes it or calls a non-static cm_/cm__ function or uses
a CM_ macro defined there (the same approximate rules as shared/tools/circles.py: names inside
string literals of .c files count too, so user-facing text that names a public call belongs in
a header). Prints each upward dependency; exit status 1 when there is one."""
import os, re, sys
from collections import defaultdict

ORDER = ["core", "memory", "exec", "compute", "multi", "diag"]
root = sys.argv[1] if len(sys.argv) > 1 else "src"
files = [os.path.join(r, f) for r, _, fs in os.walk(root) for f in fs if f.endswith((".c", ".h"))]
unit = lambda p: os.path.splitext(p)[0]
layer = lambda p: ORDER.index(os.path.relpath(p, root).split(os.sep)[0])
text = {}
for p in files:
    s = open(p, errors="replace").read()
    s = re.sub(r"/\*.*?\*/", " ", s, flags=re.S)
    text[p] = re.sub(r"//[^\n]*", " ", s)
defs = defaultdict(set)
for p, s in text.items():
    for m in re.finditer(r"^(?!static)[A-Za-z_][\w \t\*]*?\b(cm_\w+)\s*\([^;{]*\)\s*\{", s, re.M):
        defs[m.group(1)].add(p)
    for m in re.finditer(r"^\s*#\s*define\s+(CM_\w+|cm_\w+)", s, re.M):
        defs[m.group(1)].add(p)
bad = 0
for p, s in sorted(text.items()):
    for m in re.finditer(r'#\s*include\s+"([^"]+)"', s):
        inc = os.path.normpath(os.path.join(os.path.dirname(p), m.group(1)))
        if inc in text and layer(inc) > layer(p):
            print(f"{p} includes {inc} (a layer above)"); bad += 1
    if p.endswith(".h"):
        continue
    for name in sorted(set(re.findall(r"\b(cm_\w+|CM_\w+)\b", s))):
        owners = defs.get(name, set())
        if len(owners) == 1:
            o = next(iter(owners))
            if layer(o) > layer(p):
                print(f"{p} uses {name} of {o} (a layer above)"); bad += 1
print(f"check_layers: {len(files)} files of {root}/, {bad} upward dependenc{'y' if bad == 1 else 'ies'}")
sys.exit(1 if bad else 0)
