-- One function on every host of a merged trace (docs/merge.md): the
-- stragglers. Per host: calls, total time, and of the finished calls the
-- average, p50, p99 and max; the slowest host first. Parameter: the
-- function, its full or short name, twice in the WHERE line (ClickHouse
-- 18.16 has no query parameters: edit the literal, the demo's
-- parse_record here). `atrace report --host=HOST
-- --format=json` prints the same calls, total_ns, avg_ns and max_ns for
-- that function. For the trace recorded last; put a trace_id in place of
-- the subqueries for another one.
-- Columns: host, host_name, calls, total_ns, avg_ns, p50_ns, p99_ns, max_ns.
SELECT host, host_name, calls, total_ns, avg_ns, q[1] AS p50_ns, q[2] AS p99_ns, max_ns
FROM
(
    SELECT
        host,
        count() AS calls,
        sumIf(duration_ns, outermost = 1) AS total_ns,
        -- report's avg: the finished calls' share of the total over their number
        intDiv(sumIf(duration_ns, outermost = 1 AND finished = 1), countIf(finished = 1)) AS avg_ns,
        quantilesExactIf(0.5, 0.99)(duration_ns, finished = 1) AS q,
        maxIf(duration_ns, finished = 1) AS max_ns
    FROM atrace.calls
    WHERE trace_id = (SELECT trace_id FROM atrace.traces ORDER BY start_realtime_ns DESC LIMIT 1)
        AND function_id GLOBAL IN
        (
            SELECT function_id
            FROM atrace.functions
            WHERE trace_id = (SELECT trace_id FROM atrace.traces ORDER BY start_realtime_ns DESC LIMIT 1)
                AND (name = 'demo::parse_record' OR short_name = 'demo::parse_record')
        )
    GROUP BY host
)
ANY LEFT JOIN
(
    SELECT host, host_name
    FROM atrace.traces
    WHERE trace_id = (SELECT trace_id FROM atrace.traces ORDER BY start_realtime_ns DESC LIMIT 1)
) USING (host)
ORDER BY avg_ns DESC, host
