-- Top functions by self time, with calls and total time: the rows of
-- `atrace report --sort=self` (docs/tables.md). For the trace recorded
-- last; put a trace_id in place of the subqueries for another one.
-- Columns: name, module, calls, self_ns, total_ns.
SELECT name, module, calls, self_ns, total_ns
FROM
(
    SELECT
        function_id,
        count() AS calls,
        sum(self_ns) AS self_ns,
        -- recursion: only the outermost activation counts in the total
        sumIf(duration_ns, outermost = 1) AS total_ns
    FROM atrace.calls
    WHERE trace_id = (SELECT trace_id FROM atrace.traces ORDER BY start_realtime_ns DESC LIMIT 1)
    GROUP BY function_id
)
ANY LEFT JOIN
(
    SELECT function_id, name, module
    FROM atrace.functions
    WHERE trace_id = (SELECT trace_id FROM atrace.traces ORDER BY start_realtime_ns DESC LIMIT 1)
) USING (function_id)
ORDER BY self_ns DESC, name
