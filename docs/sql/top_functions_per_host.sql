-- Top functions per host of a merged trace (docs/merge.md): calls, self
-- and total time of each function on each recording, largest total first.
-- The rows of `atrace report --host=HOST` (host: the recording's index,
-- as `atrace info` lists them; a single recording is host 0, `atrace
-- report`). For the trace recorded last; put a trace_id in place of the
-- subqueries for another one.
-- Columns: host, host_name, name, module, calls, self_ns, total_ns.
SELECT host, host_name, name, module, calls, self_ns, total_ns
FROM
(
    SELECT host, name, module, calls, self_ns, total_ns
    FROM
    (
        SELECT
            host,
            function_id,
            count() AS calls,
            sum(self_ns) AS self_ns,
            sumIf(duration_ns, outermost = 1) AS total_ns
        FROM atrace.calls
        WHERE trace_id = (SELECT trace_id FROM atrace.traces ORDER BY start_realtime_ns DESC LIMIT 1)
        GROUP BY host, function_id
    )
    ANY LEFT JOIN
    (
        SELECT function_id, name, module
        FROM atrace.functions
        WHERE trace_id = (SELECT trace_id FROM atrace.traces ORDER BY start_realtime_ns DESC LIMIT 1)
    ) USING (function_id)
)
ANY LEFT JOIN
(
    SELECT host, host_name
    FROM atrace.traces
    WHERE trace_id = (SELECT trace_id FROM atrace.traces ORDER BY start_realtime_ns DESC LIMIT 1)
) USING (host)
ORDER BY host, total_ns DESC, name
