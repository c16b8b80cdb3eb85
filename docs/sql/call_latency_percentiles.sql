-- Call latency percentiles per function, over the calls whose end was
-- seen (report's Min/Avg/Max count the same calls: docs/tables.md). For
-- the trace recorded last; put a trace_id in place of the subqueries for
-- another one. quantilesExact sorts each function's durations (exact, the
-- memory of one function's calls); quantiles() is the cheap estimate.
-- Columns: name, module, calls, min_ns, p50_ns, p90_ns, p99_ns, max_ns.
SELECT name, module, calls, min_ns, q[1] AS p50_ns, q[2] AS p90_ns, q[3] AS p99_ns, max_ns
FROM
(
    SELECT
        function_id,
        count() AS calls,
        min(duration_ns) AS min_ns,
        quantilesExact(0.5, 0.9, 0.99)(duration_ns) AS q,
        max(duration_ns) AS max_ns
    FROM atrace.calls
    WHERE trace_id = (SELECT trace_id FROM atrace.traces ORDER BY start_realtime_ns DESC LIMIT 1)
        AND finished = 1
    GROUP BY function_id
)
ANY LEFT JOIN
(
    SELECT function_id, name, module
    FROM atrace.functions
    WHERE trace_id = (SELECT trace_id FROM atrace.traces ORDER BY start_realtime_ns DESC LIMIT 1)
) USING (function_id)
ORDER BY p99_ns DESC, name
