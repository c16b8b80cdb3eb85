#!/usr/bin/env python3
"""check_layering.py: fails when a source file includes a header of a layer
it may not depend on (docs/ARCHITECTURE.md, "Folders and dependencies").

Dependencies go one way:
    base <- formats <- uprobes <- fastpath <- record <- tools
                    <- analysis <- output <- tools
    base <- sync <- formats, analysis, tools   (clock synchronisation, pure:
                    the reader applies a merged trace's corrections)
bpf/ is the record layout the BPF programs share with record/ (and its
static_asserts against formats/); include/ and demo/ stand alone.
Within a folder, anything goes; tests/ and bench/ may include anything.
From outside, record/, analysis/, output/ and sync/ are seen through their
one public header (record/record.h, analysis/analysis.h, output/output.h,
sync/sync.h),
which lists what the folder offers.

usage: check_layering.py [ROOT]   (exit 1 and one line per violation)
"""
import os
import re
import sys

ALLOWED = {
    "base": set(),
    "sync": {"base"},
    "formats": {"base", "sync"},
    "bpf": set(),
    "uprobes": {"base", "formats"},
    "fastpath": {"base", "formats", "uprobes"},
    "record": {"base", "formats", "uprobes", "fastpath", "bpf"},
    "analysis": {"base", "formats", "sync"},
    "output": {"base", "formats", "analysis"},
    "tools": {"base", "formats", "uprobes", "fastpath", "record", "analysis", "output", "sync"},
    "include": set(),
    "demo": {"include"},
}
# Folders that other folders include through one public header only.
PUBLIC = {"record": "record/record.h", "analysis": "analysis/analysis.h",
          "output": "output/output.h", "sync": "sync/sync.h"}
SOURCE = re.compile(r"\.(c|cc|cpp|h|hpp|inc|S)$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    bad = []
    checked = 0
    for layer, allowed in ALLOWED.items():
        top = os.path.join(root, layer)
        if not os.path.isdir(top):
            bad.append(f"{layer}/: missing (the layer table in this script is out of date)")
            continue
        for dirpath, _, files in os.walk(top):
            for name in sorted(files):
                if not SOURCE.search(name):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                checked += 1
                with open(path, encoding="utf-8", errors="replace") as f:
                    for lineno, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m or "/" not in m.group(1):
                            continue
                        target = m.group(1).split("/", 1)[0]
                        if target == layer or target not in ALLOWED:
                            continue
                        if target not in allowed:
                            bad.append(f"{rel}:{lineno}: {layer}/ may not include {m.group(1)}"
                                       f" ({layer}/ may use: {', '.join(sorted(allowed)) or 'nothing'})")
                        elif target in PUBLIC and m.group(1) != PUBLIC[target]:
                            bad.append(f"{rel}:{lineno}: {m.group(1)} is private to {target}/;"
                                       f" include {PUBLIC[target]}")
    for line in bad:
        print(line, file=sys.stderr)
    if checked == 0:
        print("check_layering: no sources found under " + root, file=sys.stderr)
        return 1
    print(f"check_layering: {checked} files, {len(bad)} violations")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
