#!/usr/bin/env python3
"""docs/kernels.md from the last multi-kernel run (tests/kernels/run.sh).

    tests/kernels/kernels_md.py BUILD_DIR KERNEL... > docs/kernels.md

Reads BUILD_DIR/kernels/KERNEL/features.txt (`atrace info --kernel` on that
kernel) and results.txt (the subset's PASS/FAIL lines).
"""
import pathlib
import sys


def features(path):
    release, rows = "?", {}
    for line in path.read_text().splitlines():
        if line.startswith("Kernel "):
            release = line[len("Kernel "):].rstrip(":")
        elif line.startswith("  ") and ": " in line:
            name, rest = line.strip().split(": ", 1)
            present = rest.startswith("yes")
            rows[name] = (present, rest.split(" -- ", 1)[1] if " -- " in rest else "")
    return release, rows


def main():
    build = pathlib.Path(sys.argv[1]) / "kernels"
    kernels = sys.argv[2:]
    runs = [(k, *features(build / k / "features.txt")) for k in kernels]
    results = {k: (build / k / "results.txt").read_text().split("\n") for k in kernels}
    names = []
    for _, _, rows in runs:
        names += [n for n in rows if n not in names]
    out = [
        "# Kernels",
        "",
        "What atrace finds on each kernel it is tested on, and what it does",
        "without what is missing. Generated from the last run of",
        "`tests/kernels/run.sh` (part of `make test`: the host kernel, and",
        "Debian 12's cloud kernels booted under QEMU) by",
        "`tests/kernels/kernels_md.py`: each column is `atrace info --kernel`",
        "on that kernel. Every feature is probed on the running kernel (its BTF,",
        "test loads, kallsyms), never read off the version number;",
        "kernel-notes/ explains each one.",
        "",
        "Minimum: Linux 5.15 with BTF (`CONFIG_DEBUG_INFO_BTF=y`), checked at",
        "start; tested on the kernels below.",
        "",
        "| feature | " + " | ".join(f"{k} (`{rel}`)" for k, rel, _ in runs) + " | without it |",
        "| --- | " + " | ".join("---" for _ in runs) + " | --- |",
    ]
    for n in names:
        cells, without = [], ""
        for _, _, rows in runs:
            present, w = rows.get(n, (None, ""))
            cells.append("?" if present is None else "yes" if present else "**no**")
            without = without or w
        if not without:
            without = ("cannot record" if n.endswith("(required)")
                       else "present on every kernel tested (see kernel-notes/)")
        out.append(f"| {n} | " + " | ".join(cells) + f" | {without} |")
    out += [
        "",
        "A recording keeps what its kernel lacked that changes its numbers or",
        "contents in the trace header: `atrace info` prints these as `Kernel",
        "limit:` lines, `atrace report` as footnotes naming the numbers they",
        "touch, `atrace report --format=json` as `kernel_limits`. `atrace info",
        "--kernel` (as root) and `atrace record -v` print the table's column",
        "for the kernel they run on.",
        "",
        "## The multi-kernel tests",
        "",
        "The same subset of the integration tests (launch and attach, exact",
        "counts in executables and libraries with both attach modes, kernel",
        "events, USDT with strings, a relevance filter detaching, `kill -9` of",
        "the recorder) runs on every kernel, by the same binaries; results of",
        "the last run:",
        "",
        "| kernel | passed | failed |",
        "| --- | --- | --- |",
    ]
    for k in kernels:
        lines = results[k]
        out.append(f"| {k} | {sum(l.startswith('PASS') for l in lines)} | "
                   f"{sum(l.startswith('FAIL') for l in lines)} |")
    out += [
        "",
        "No timing is taken under QEMU: TCG emulates the CPU, so what a probe",
        "costs there says nothing about real hardware.",
        "",
        "To run and regenerate: `tests/kernels/run.sh build host 6.12 6.1`",
        "(ctest runs it as `kernels.HostAnd6.1And6.12`; the kernels are",
        "downloaded once into `build/kernels/`), then",
        "`tests/kernels/kernels_md.py build host 6.12 6.1 > docs/kernels.md`.",
        "",
        "`tests/kernels/two_hosts.sh build` (ctest: `kernels.TwoHosts`) boots",
        "two 6.12 guests at once, cabled to each other, records a client in",
        "one and its server in the other and merges the traces on the host",
        "(docs/merge.md, \"Tested on two hosts\").",
        "",
    ]
    sys.stdout.write("\n".join(out))


main()
