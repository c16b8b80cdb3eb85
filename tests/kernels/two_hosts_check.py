#!/usr/bin/env python3
"""The assertions of the two-host test (two_hosts.sh) on the merged trace.

    two_hosts_check.py CLIENT_SCRIPT INFO_JSON N [MERGED_A_SCRIPT MERGED_B_SCRIPT]

CLIENT_SCRIPT: `atrace script` of the client's trace (guest A); INFO_JSON:
`atrace info --format=json` of the merged trace; N: the exchanges made;
MERGED_*_SCRIPT: `atrace script --host host-a` (and host-b) of the merged
trace, the events of each host on the merged (corrected) time line.

The smallest round trip is measured in the client's own trace, on its own
clock: from the entry of send_request (which sends the request) to the
receive of its answer (the exchanges are in lockstep, so each send is
followed by its answer's receive). Not from the send's message event: that
is stamped at the system call's return, which under TCG can come after
the answer has arrived (a send that took 900 us, its answer received 25 us
after it returned), while the request may have left as early as the
call's entry, which `script` does not print; the function's entry is
before it. No clock correction can be trusted to less than the round trip:
the merge's bound must be narrower.

Independently of the sync report, the merged time line itself is checked
as every reader shows it: for each exchange i, the server's receive of
request i after the client's entry of send_request i, and the client's
receive of answer i after the server's receive of request i (both real
causal orders: the answer is sent after its request was received). The
sends' own time stamps are not compared with their receives: a send is
stamped at its return, which may truly come after the bytes arrived.

Prints the numbers, exits 0 when every assertion holds, 1 otherwise.
"""
import json
import re
import sys

EVENT = re.compile(r"\s(\d+)\.(\d{9}): (entry|message):\s+(send_request|recv tcp)\b")


def round_trips(script_path):
    """Round trips (ns) of the client's exchanges, in order: from the entry
    of send_request to the receive of the answer."""
    trips, sent = [], None
    with open(script_path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = EVENT.search(line)
            if not m:
                continue
            t = int(m.group(1)) * 1_000_000_000 + int(m.group(2))
            if m.group(3) == "entry":
                sent = t
            elif sent is not None:
                trips.append(t - sent)
                sent = None
    return trips


def timed(script_path, what):
    """Time stamps (ns) of the script's lines that match `what`, in order."""
    pattern = re.compile(r"\s(\d+)\.(\d{9}): " + what)
    out = []
    with open(script_path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = pattern.search(line)
            if m:
                out.append(int(m.group(1)) * 1_000_000_000 + int(m.group(2)))
    return out


def merged_order_failures(a_script, b_script, n):
    """Causal orders broken on the merged time line (see the docstring)."""
    entries = timed(a_script, r"entry:\s+send_request\b")
    answers = timed(a_script, r"message:\s+recv tcp ")
    requests = timed(b_script, r"message:\s+recv tcp ")
    if not len(entries) == len(answers) == len(requests) == n:
        return [f"merged trace: {len(entries)} send_request entries, {len(answers)} answers "
                f"and {len(requests)} requests received, not {n} each"]
    early_requests = [i for i in range(n) if requests[i] <= entries[i]]
    early_answers = [i for i in range(n) if answers[i] <= requests[i]]
    closest = min(min(r - e for e, r in zip(entries, requests)),
                  min(a - r for r, a in zip(requests, answers)))
    print(f"two_hosts_check: merged time line: {len(early_requests)} requests received before "
          f"they were sent, {len(early_answers)} answers before their requests arrived; "
          f"closest {closest} ns")
    failures = []
    if early_requests:
        failures.append(f"merged trace: request {early_requests[0]} (and {len(early_requests) - 1} "
                        "more) received before send_request was entered")
    if early_answers:
        failures.append(f"merged trace: answer {early_answers[0]} (and {len(early_answers) - 1} "
                        "more) received before its request arrived")
    return failures


def main():
    script_path, info_path, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    trips = round_trips(script_path)
    with open(info_path, encoding="utf-8") as f:
        info = json.load(f)
    pairs = info.get("sync", {}).get("pairs", [])
    failures = []
    if len(trips) != n:
        failures.append(f"the client's trace has {len(trips)} round trips, not {n}")
    min_rtt = min(trips) if trips else 0
    print(f"two_hosts_check: {len(trips)} round trips in the client's trace, "
          f"smallest {min_rtt} ns, median {sorted(trips)[len(trips) // 2] if trips else 0} ns")
    print(f"two_hosts_check: sync.pairs = {json.dumps(pairs)}")
    if len(pairs) != 1:
        failures.append(f"{len(pairs)} sync pairs, not 1")
    for p in pairs:
        hosts = sorted(p.get("hosts", []))
        if hosts != ["host-a", "host-b"]:
            failures.append(f"the pair's hosts are {hosts}, not host-a and host-b")
        if p.get("method") != "messages":
            failures.append(f"method {p.get('method')!r}, not 'messages'")
        if p.get("quality") != "ACCURATE":
            failures.append(f"quality {p.get('quality')!r}, not ACCURATE")
        if p.get("violations_after") != 0:
            failures.append(f"{p.get('violations_after')} receives before their sends after the merge")
        bound = p.get("bound_ns")
        if not isinstance(bound, (int, float)) or not 0 <= bound < min_rtt:
            failures.append(f"bound {bound} ns is not below the smallest round trip, {min_rtt} ns")
        used = p.get("messages", 0)
        if used < 950:
            failures.append(f"{used} messages used, fewer than 950 of the {2 * n}")
        print(f"two_hosts_check: offset {p.get('offset_ns')} ns, drift {p.get('drift_ppm')} ppm, "
              f"bound {bound} ns (smallest round trip {min_rtt} ns), {used} messages, "
              f"{p.get('quality')}, violations {p.get('violations_before')} before, "
              f"{p.get('violations_after')} after")
    if len(sys.argv) > 5:
        failures += merged_order_failures(sys.argv[4], sys.argv[5], n)
    for f in failures:
        print(f"two_hosts_check: FAIL: {f}")
    if not failures:
        print("two_hosts_check: PASS")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
