#!/usr/bin/env bash
# Typed tables into ClickHouse (issue 33; results in docs/BENCHMARKS.md,
# section "Typed tables into ClickHouse"): load rate end to end from the
# trace file, bytes on the server per call against atrace's own file, and
# the time of every shipped query of docs/sql/, on a synthetic trace of
# bench/format_synth (8 threads, 16 functions, nested calls).
#
#   bench/clickhouse_load.sh [EVENTS...]      (default: 20M; two events a call)
#
#   env BUILD   the atrace build (default build); needs bench/format_synth there
#   env OLD     another atrace binary, loaded alternately with BUILD's in the
#               same run (RUNS times each), for a before/after comparison
#   env RUNS    loads per binary and size (default 1)
#   env ALONE   1: the server alone (below) at every size; 0: never; default:
#               up to 20 M calls (it writes the calls to files, 160 B a call)
#   env OUT     work directory (default /tmp/atrace-ch-bench); removed at the
#               end unless KEEP=1
#   env PORT    the server's HTTP port (default 18300; TCP: PORT+1)
#
# Needs clickhouse-server and clickhouse-client (Debian 12: 18.16) and
# /usr/bin/time. Prints one block per size: the file, each load (wall,
# atrace's CPU, the server's CPU from the load's start until its merges
# ended, calls per second, all per million calls too), the bytes on the
# server, the server alone taking the same calls from a file in one INSERT
# (TabSeparated, and Native in the sorting key's order, what atrace sends),
# each query's time. CPU seconds are user + system time (/proc/PID/stat):
# on a shared machine they move far less than wall times.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
OUT=${OUT:-/tmp/atrace-ch-bench}
PORT=${PORT:-18300}
TCP=$((PORT + 1))
SIZES=${*:-20M}

mkdir -p "$OUT/ch"
cat > "$OUT/ch/config.xml" <<XML
<yandex>
  <logger><level>warning</level><log>$OUT/ch/server.log</log><errorlog>$OUT/ch/error.log</errorlog></logger>
  <http_port>$PORT</http_port> <tcp_port>$TCP</tcp_port> <listen_host>127.0.0.1</listen_host>
  <path>$OUT/ch/data/</path> <tmp_path>$OUT/ch/tmp/</tmp_path>
  <users_config>/etc/clickhouse-server/users.xml</users_config>
  <default_profile>default</default_profile> <default_database>default</default_database>
  <mark_cache_size>536870912</mark_cache_size>
</yandex>
XML
clickhouse-server --config-file="$OUT/ch/config.xml" >/dev/null 2>&1 &
server=$!
cleanup() {
	kill "$server" 2>/dev/null || true
	wait "$server" 2>/dev/null || true
	[ "${KEEP:-0}" = 1 ] || rm -rf "$OUT"
}
trap cleanup EXIT
q() { clickhouse-client --host=127.0.0.1 --port=$TCP --query="$1"; }
for _ in $(seq 100); do q "SELECT 1" >/dev/null 2>&1 && break; sleep 0.2; done

tck=$(getconf CLK_TCK)
server_cpu() { awk -v t="$tck" '{ printf "%.2f", ($14 + $15) / t }' "/proc/$server/stat"; }
merges_done() { while [ "$(q "SELECT count() FROM system.merges")" != 0 ]; do sleep 0.2; done; }
per_m() { echo "scale=3; $1 * 1000000 / $2" | bc; }
# load NAME BINARY TRACE: one load into a fresh database `bench`.
load() {
	q "DROP DATABASE IF EXISTS bench"
	merges_done
	local before after
	before=$(server_cpu)
	/usr/bin/time -f "%e %U %S %M" -o "$OUT/time" \
		"$2" convert -i "$3" --to=clickhouse -o "http://127.0.0.1:$PORT/bench" 2>"$OUT/load.err"
	merges_done
	after=$(server_cpu)
	read -r wall user sys rss < "$OUT/time"
	calls=$(q "SELECT count() FROM bench.calls")
	local cpu server_s
	cpu=$(echo "$user + $sys" | bc)
	server_s=$(echo "$after - $before" | bc)
	echo "load $1: wall ${wall} s, $(echo "scale=3; $calls / $wall / 1000000" | bc) M calls/s;" \
		"atrace CPU ${cpu} s ($(per_m "$cpu" "$calls") s/M calls, max RSS $((rss / 1024)) MiB);" \
		"server CPU ${server_s} s ($(per_m "$server_s" "$calls") s/M calls) with its merges"
}
# alone FORMAT FILE: the server's CPU for one INSERT of FILE into a fresh
# copy of bench.calls (and that copy's merges).
alone() {
	q "DROP TABLE IF EXISTS bench.calls_copy"
	q "CREATE TABLE bench.calls_copy AS bench.calls"
	merges_done
	local before after start
	before=$(server_cpu)
	start=$(date +%s.%N)
	curl -sS --data-binary "@$2" "http://127.0.0.1:$PORT/?query=INSERT%20INTO%20bench.calls_copy%20FORMAT%20$1"
	local wall
	wall=$(echo "$(date +%s.%N) - $start" | bc)
	merges_done
	after=$(server_cpu)
	echo "server alone, $1 ($(stat -c %s "$2") bytes, one INSERT): wall ${wall:0:5} s," \
		"server CPU $(echo "$after - $before" | bc) s ($(per_m "$(echo "$after - $before" | bc)" "$calls") s/M calls)"
}

echo "commit $(git -C "$ROOT" rev-parse --short HEAD), load average $(cut -d' ' -f1-3 /proc/loadavg)"
for n in $SIZES; do
	trace=$OUT/synth-$n.data
	"$BUILD/bench/format_synth" -n "$n" -t 8 -o "$trace" >/dev/null
	bytes=$(stat -c %s "$trace")
	echo "== $n events, file $bytes bytes"
	for _ in $(seq "${RUNS:-1}"); do
		[ -z "${OLD:-}" ] || load "old ($OLD)" "$OLD" "$trace"
		load "$BUILD/atrace" "$BUILD/atrace" "$trace"
	done
	on_server=$(q "SELECT sum(bytes_on_disk) FROM system.parts WHERE database = 'bench' AND table = 'calls' AND active")
	echo "$calls calls, $(echo "scale=2; $bytes / $calls" | bc) bytes/call in the file;" \
		"on the server calls $on_server bytes ($(echo "scale=2; $on_server / $calls" | bc) bytes/call)"
	q "SELECT name, formatReadableSize(sum(data_compressed_bytes)) FROM system.columns WHERE database = 'bench' AND table = 'calls' GROUP BY name ORDER BY sum(data_compressed_bytes) DESC LIMIT 6 FORMAT TSV" | tr '\n' ' '
	echo
	if [ "${ALONE:-auto}" = 1 ] || { [ "${ALONE:-auto}" = auto ] && [ "$calls" -le 20000000 ]; }; then
		q "SELECT * FROM bench.calls FORMAT TabSeparated" > "$OUT/calls.tsv"
		q "SELECT * FROM bench.calls ORDER BY trace_id, function_id, start_ns FORMAT Native" > "$OUT/calls.native"
		alone TabSeparated "$OUT/calls.tsv"
		alone Native "$OUT/calls.native"
		rm -f "$OUT/calls.tsv" "$OUT/calls.native"
		q "DROP TABLE bench.calls_copy"
	fi
	for f in "$ROOT"/docs/sql/*.sql; do
		sql=$(sed 's/atrace\./bench./g; s/demo::parse_record/bench::function_3/g' "$f")
		start=$(date +%s.%N)
		q "$sql" >/dev/null
		echo "query $(basename "$f"): $(echo "$(date +%s.%N) - $start" | bc | cut -c1-5) s"
	done
	rm -f "$trace"
done
