#!/usr/bin/env python3
"""ctest docs.ReadmeExamples: the README's examples are what atrace prints.

Runs every `$ build/atrace ...` line of README.md's code blocks that needs
nothing but the demo (`make demo`'s recording of build/atrace-demo and
what is made from it) and compares what the README shows under it with
what the command prints now: the first line with its numbers taken out,
and every column header line word for word. Numbers are the machine's;
the words are the tool's, and a README that has drifted from them fails
here (issue 31: the list header said PATH where atrace prints PLACE).

Also: the man pages name only docs that `cmake --install` installs.

usage: docs_examples.py BUILD_DIR SOURCE_DIR   (as root: it records)
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile

build, source = (os.path.abspath(p) for p in sys.argv[1:3])
failures = []


def fail(text):
    failures.append(text)
    print("FAIL: " + text)


def examples(readme):
    """(command, shown lines) for each `$ ` line in a fenced block; the shown
    lines stop at the next command, the fence, or a `...` line."""
    out, fenced, cmd, shown, cut = [], False, None, [], False
    for line in readme.splitlines():
        if line.startswith("```"):
            if cmd:
                out.append((cmd, shown))
            fenced, cmd, shown, cut = not fenced, None, [], False
        elif fenced and line.startswith("$ "):
            if cmd:
                out.append((cmd, shown))
            cmd, shown, cut = line[2:], [], False
        elif fenced and cmd:
            if line.strip() == "...":
                cut = True
            elif not cut:
                shown.append(line)
    return out


NUMBER = re.compile(r"\d+(\.\d+)?( ?(ns|us|ms|s|%|KiB|MiB|B))?\b")


def masked(line):
    """The line with its numbers (and their units) as N: what does not
    depend on the machine or the moment."""
    return " ".join(NUMBER.sub("N", line).split())


def is_header(line):
    """A column header: three or more words, no digits ("Calls  Total ...")."""
    words = line.split()
    return len(words) >= 3 and not re.search(r"\d", line) and not line.rstrip().endswith(":")


def runnable(cmd):
    """The examples made from the demo's trace alone: build/atrace on
    build/demo.data or build/atrace-demo, no PID, program, file or server
    of the reader's own (loading into ClickHouse is the Tables tests')."""
    return cmd.startswith(("sudo build/atrace ", "build/atrace ")) and (
        "build/demo.data" in cmd or "build/atrace-demo" in cmd) and "http://" not in cmd


readme = open(os.path.join(source, "README.md"), encoding="utf-8").read()
cases = [(c, s) for c, s in examples(readme) if runnable(c)]
# The recording goes first: the others read its trace.
cases.sort(key=lambda c: " record " not in c[0])
if not cases or " record " not in cases[0][0]:
    fail("README.md shows no `build/atrace record ... build/atrace-demo` example")
with tempfile.TemporaryDirectory() as work:
    # The README's paths are relative to a checkout: build/ here is the
    # build's atrace and demo, and the trace is written beside them.
    os.mkdir(os.path.join(work, "build"))
    for name in ("atrace", "atrace-demo"):
        os.symlink(os.path.join(build, name), os.path.join(work, "build", name))
    for cmd, shown in cases:
        run = cmd[len("sudo "):] if cmd.startswith("sudo ") else cmd
        # A pipe (`| head -2`) needs the shell; the README's commands are sh.
        r = subprocess.run(["sh", "-c", run], cwd=work, capture_output=True, text=True,
                           env=dict(os.environ, NO_COLOR="1"), timeout=300)
        printed = (r.stdout + r.stderr).splitlines()
        print(f"$ {cmd}: exit {r.returncode}, {len(printed)} lines")
        if r.returncode != 0:
            fail(f"`{cmd}` exited {r.returncode}: {r.stderr.strip()[:300]}")
            continue
        shown = [s for s in shown if s.strip()]
        if not shown:
            continue
        first = masked(shown[0])
        if first not in (masked(p) for p in printed):
            fail(f"`{cmd}`: README shows\n    {shown[0]}\n  atrace printed no such line "
                 f"(numbers aside); its first: {printed[0] if printed else '(nothing)'}")
        for i, line in enumerate(shown[1:], 1):
            # A table under a title the run did not print ("Detached by the
            # relevance filter:" when this machine's run detached nothing)
            # is one this run had no rows for, not drift.
            title = shown[i - 1].strip()
            if title.endswith(":") and title not in (p.strip() for p in printed):
                continue
            if is_header(line) and line.split() not in (p.split() for p in printed):
                near = next((p for p in printed if is_header(p)), "(no header)")
                fail(f"`{cmd}`: README's header\n    {line.strip()}\n  is not in the output; "
                     f"atrace's: {near.strip()}")

# The man pages point to the docs `cmake --install` puts in DOCDIR: each
# must be one of docs/*.md, which it installs (cmake/man_completion.cmake).
named = 0
for page in sorted(os.listdir(os.path.join(build, "man"))):
    text = open(os.path.join(build, "man", page), encoding="utf-8").read()
    for doc in sorted(set(re.findall(r"/doc/atrace/([A-Za-z0-9_.\\-]+?\.md)", text))):
        doc = doc.replace("\\-", "-")
        named += 1
        if not os.path.exists(os.path.join(source, "docs", doc)):
            fail(f"man/{page} names {doc}, which docs/ does not have (not installed)")

if named == 0:
    fail("the man pages name no installed doc (.../doc/atrace/NAME.md): man_page.sh's sed?")
if failures:
    print(f"docs.ReadmeExamples: {len(failures)} failure(s)")
    sys.exit(1)
print(f"docs.ReadmeExamples: ok ({len(cases)} README examples run, "
      f"{named} installed docs named by the man pages)")
