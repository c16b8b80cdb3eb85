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
#   env OUT     work directory (default /tmp/atrace-ch-bench); removed at the
#               end unless KEEP=1
#   env PORT    the server's HTTP port (default 18300; TCP: PORT+1)
#
# Needs clickhouse-server and clickhouse-client (Debian 12: 18.16) and
# /usr/bin/time. Prints one block per size: the file, the load (wall, atrace's
# CPU, calls per second), the bytes on the server, each query's time.
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

echo "commit $(git -C "$ROOT" rev-parse --short HEAD), load average $(cut -d' ' -f1-3 /proc/loadavg)"
for n in $SIZES; do
	trace=$OUT/synth-$n.data
	"$BUILD/bench/format_synth" -n "$n" -t 8 -o "$trace" >/dev/null
	q "DROP DATABASE IF EXISTS bench"
	/usr/bin/time -f "%e %U %S" -o "$OUT/time" \
		"$BUILD/atrace" convert -i "$trace" --to=clickhouse -o "http://127.0.0.1:$PORT/bench" 2>"$OUT/load.err"
	read -r wall user sys < "$OUT/time"
	calls=$(q "SELECT count() FROM bench.calls")
	bytes=$(stat -c %s "$trace")
	on_server=$(q "SELECT sum(bytes_on_disk) FROM system.parts WHERE database = 'bench' AND table = 'calls' AND active")
	echo "== $n events: $calls calls, file $bytes bytes ($(echo "scale=2; $bytes / $calls" | bc) bytes/call)"
	echo "load: wall ${wall} s, atrace CPU $(echo "$user + $sys" | bc) s, $(echo "scale=3; $calls / $wall / 1000000" | bc) M calls/s"
	echo "server: calls $on_server bytes ($(echo "scale=2; $on_server / $calls" | bc) bytes/call)"
	q "SELECT name, formatReadableSize(sum(data_compressed_bytes)) FROM system.columns WHERE database = 'bench' AND table = 'calls' GROUP BY name ORDER BY sum(data_compressed_bytes) DESC LIMIT 6 FORMAT TSV" | tr '\n' ' '
	echo
	for f in "$ROOT"/docs/sql/*.sql; do
		sql=$(sed 's/atrace\./bench./g; s/demo::parse_record/bench::function_3/g' "$f")
		start=$(date +%s.%N)
		q "$sql" >/dev/null
		echo "query $(basename "$f"): $(echo "$(date +%s.%N) - $start" | bc | cut -c1-5) s"
	done
	rm -f "$trace"
done
