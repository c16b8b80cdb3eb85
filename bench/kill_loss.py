#!/usr/bin/env python3
"""kill_loss.py: what a SIGKILLed `atrace record` loses, and what the trace
file costs at a given rate.

Loss (default): for each atrace given, N recordings of target_kill_loss
(tests/targets: kl_call(seq) at RATE calls/s, each call's CLOCK_MONOTONIC
time logged by the target itself), launched by `atrace record --args` and
SIGKILLed at a random moment from 0 to 2.5 s after the file appeared. The
loss of a kill is the time from the oldest call not in the file (made after
the recording's start) to the kill; 0 when every call is there. Prints the
maximum, the median and how many kills in the recording's first second
left a file without any event.

Size (--size SECONDS): one recording of SECONDS at each rate, stopped by
SIGINT; prints the file's bytes per call.

usage: bench/kill_loss.py [-n KILLS] [-r RATES] [--size SECONDS]
         [--seed N] [--no-args] -t TARGET ATRACE...
  TARGET  build/tests/targets/target_kill_loss
  RATES   comma-separated calls per second (default 100000,20; 10000000:
          as fast as it goes)
  --no-args  without --args: the cheaper path, more calls a second; the
          n-th entry in the file is then taken for call n (one thread)
Run as root. Prints a Markdown table.
"""
import argparse
import os
import random
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import time


def read_log(path):
    with open(path, "rb") as f:
        data = f.read()
    return [struct.unpack_from("QQ", data, i) for i in range(0, len(data) - 15, 16)]


def wait_gone(pid, timeout=20.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return
        except OSError:
            return
        time.sleep(0.02)


def trace_seqs(atrace, out):
    info = subprocess.run([atrace, "info", "--format=json", "-i", out],
                          capture_output=True, text=True)
    if info.returncode != 0:
        return None, None
    import json
    start = json.loads(info.stdout)["start_mono_ns"]
    s = subprocess.run([atrace, "script", "-i", out, "--kind=entry", "--fields=details",
                        "--no-pager"], capture_output=True, text=True)
    seqs = set()
    for line in s.stdout.splitlines():
        at = line.find("kl_call(arg1=")
        if at >= 0:
            seqs.add(int(line[at + 13:].rstrip(")")))
        elif "kl_call" in line:  # --no-args: one thread, launched: the n-th entry is call n
            seqs.add(len(seqs))
    return start, seqs


ARGS = ["--args=kl_call@arg1/u64"]


def record_cmd(atrace, out, target, rate, log):
    return [atrace, "record", "-o", out, "--select=kl_call", *ARGS,
            "--filter=off", "--", target, str(rate), log, "--quiet"]


def one_kill(atrace, target, rate, delay, tmp):
    out, log = os.path.join(tmp, "k.data"), os.path.join(tmp, "k.log")
    for p in (out, log):
        if os.path.exists(p):
            os.unlink(p)
    rec = subprocess.Popen(record_cmd(atrace, out, target, rate, log),
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    while not os.path.exists(out):
        if rec.poll() is not None:
            raise SystemExit(f"{atrace} ended without a file")
        time.sleep(0.002)
    appeared = time.monotonic_ns()
    pid = int(rec.stdout.readline().strip()[4:])
    time.sleep(max(0.0, appeared / 1e9 + delay - time.monotonic()))
    killed = time.monotonic_ns()
    rec.send_signal(signal.SIGKILL)
    rec.wait()
    os.kill(pid, signal.SIGTERM)
    wait_gone(pid)
    calls = read_log(log)
    start, seqs = trace_seqs(atrace, out)
    if start is None:
        return None, delay
    loss = 0
    for seq, t in calls:
        if start <= t <= killed and seq not in seqs:
            loss = killed - t
            break
    return (loss, len(seqs)), delay


def size_run(atrace, target, rate, seconds, tmp):
    out, log = os.path.join(tmp, "s.data"), os.path.join(tmp, "s.log")
    rec = subprocess.Popen(record_cmd(atrace, out, target, rate, log),
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    pid = int(rec.stdout.readline().strip()[4:])
    time.sleep(seconds)
    os.kill(pid, signal.SIGTERM)  # the target ends; atrace finishes the file
    rec.wait()
    return os.path.getsize(out), len(read_log(log))


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("-n", type=int, default=20)
    ap.add_argument("-r", default="100000,20")
    ap.add_argument("-t", required=True)
    ap.add_argument("--size", type=float)
    ap.add_argument("--seed", type=int, default=int(time.time()))
    ap.add_argument("--no-args", action="store_true")
    ap.add_argument("atrace", nargs="+")
    a = ap.parse_args()
    rates = [int(x) for x in a.r.split(",")]
    if a.no_args:  # the lanes' path, millions of events a second (no values record)
        ARGS.clear()
    bins = []
    tmp = tempfile.mkdtemp()
    for i, b in enumerate(a.atrace):  # copies: a rebuild meanwhile changes nothing
        bins.append(os.path.join(tmp, f"atrace{i}"))
        subprocess.run(["cp", b, bins[-1]], check=True)
    print(f"kernel {os.uname().release}, {os.cpu_count()} CPUs, seed {a.seed}")
    print()
    if a.size:
        print("| atrace | calls/s | seconds | calls | file bytes | bytes per call |")
        print("| --- | ---: | ---: | ---: | ---: | ---: |")
        for rate in rates:
            for name, b in zip(a.atrace, bins):
                size, calls = size_run(b, a.t, rate, a.size, tmp)
                print(f"| `{name}` | {rate} | {a.size:g} | {calls} | {size} | "
                      f"{size / max(calls, 1):.1f} |", flush=True)
        return
    print("| atrace | calls/s | kills | loss max (s) | loss median (s) | "
          "killed in the first second: files without events |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for rate in rates:
        rng = random.Random(a.seed + rate)
        delays = [rng.uniform(0, 2.5) for _ in range(a.n)]
        for name, b in zip(a.atrace, bins):
            losses, early, early_empty = [], 0, 0
            for d in delays:
                res, delay = one_kill(b, a.t, rate, d, tmp)
                if res is None:
                    continue
                loss, events = res
                losses.append(loss / 1e9)
                if delay < 1.0:
                    early += 1
                    early_empty += events == 0
                print(f"  {name} {rate}/s kill at {delay:.3f} s: loss {loss / 1e9:.3f} s, "
                      f"{events} calls in the file", file=sys.stderr, flush=True)
            print(f"| `{name}` | {rate} | {len(losses)} | {max(losses):.3f} | "
                  f"{statistics.median(losses):.3f} | {early_empty} of {early} |", flush=True)


if __name__ == "__main__":
    main()
