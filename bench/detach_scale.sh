#!/usr/bin/env bash
# detach_scale.sh: detach at scale (issue 29) on a real program. python3
# encodes and decodes a JSON document 300 times under
# `atrace record --select='libc.so.6:*'` (about 2,000 functions probed, the
# relevance filter's defaults); every 50 ms the links of atrace's function
# programs on the process are counted from the kernel (bench/count_links.c).
# Printed: the series (time since atrace started, links, probes they hold),
# and atrace's own summary line, "decision to probes gone: median, max".
# One generation of links is 2 links per group of 64 functions; while a
# group is rebuilt, 2 more for a few ms.
#
# usage: bench/detach_scale.sh [-b BUILD] [-r ROUNDS]      (root)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=build rounds=3
while getopts b:r:h opt; do
	case $opt in b) build=$OPTARG ;; r) rounds=$OPTARG ;; *) sed -n 2,13p "$0"; exit 2 ;; esac
done
[[ $EUID -eq 0 ]] || { echo "run as root" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -o "$tmp/count_links" "$here/count_links.c"
cat >"$tmp/pyjson.py" <<'PY'
import json
doc = {"k%d" % i: [i, "v%d" % i, {"a": i * 0.5, "b": [True, None]}] for i in range(200)}
total = 0
for i in range(300):
    total += len(json.loads(json.dumps(doc)))
print(total)
PY
py=$(readlink -f /usr/bin/python3)
echo "kernel $(uname -r), $(nproc) CPUs; $py with --select='libc.so.6:*'"
for ((r = 1; r <= rounds; r++)); do
	t0=$(date +%s%N)
	"$build/atrace" record -o "$tmp/t.data" --select='libc.so.6:*' -- "$py" "$tmp/pyjson.py" \
		>/dev/null 2>"$tmp/err" &
	at=$!
	series=""
	while kill -0 "$at" 2>/dev/null; do
		t=$((($(date +%s%N) - t0) / 1000000))
		target=$(pgrep -P "$at" -x "$(basename "$py")" | head -1 || true)
		if [[ -n $target ]]; then
			series+="$t ms: $("$tmp/count_links" "$target" | awk '{print $1 " links, " $2 " probes"}'); "
		fi
		sleep 0.05
	done
	wait "$at"
	echo
	echo "round $r: $(grep -o 'probing [0-9]* functions' "$tmp/err"); $(sed -n 's/.*\(relevance filter .*\)/\1/p' "$tmp/err")"
	echo "  ${series:-no sample}"
done
