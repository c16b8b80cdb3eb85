-- Top functions per process: calls, self and total time of each function
-- in each process (a merged trace: each host's processes), largest total
-- first. The rows of `atrace report --pid=PID` (of a merged trace:
-- `--host=HOST --pid=PID`), one table per process (docs/tables.md). For
-- the trace recorded last; put a trace_id in place of the subqueries for
-- another one.
-- Columns: host, pid, name, module, calls, self_ns, total_ns.
SELECT host, pid, name, module, calls, self_ns, total_ns
FROM
(
    SELECT
        host,
        pid,
        function_id,
        count() AS calls,
        sum(self_ns) AS self_ns,
        -- recursion: only the outermost activation counts in the total
        sumIf(duration_ns, outermost = 1) AS total_ns
    FROM atrace.calls
    WHERE trace_id = (SELECT trace_id FROM atrace.traces ORDER BY start_realtime_ns DESC LIMIT 1)
    GROUP BY host, pid, function_id
)
ANY LEFT JOIN
(
    SELECT function_id, name, module
    FROM atrace.functions
    WHERE trace_id = (SELECT trace_id FROM atrace.traces ORDER BY start_realtime_ns DESC LIMIT 1)
) USING (function_id)
ORDER BY host, pid, total_ns DESC, name
