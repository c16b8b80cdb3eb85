-- The slowest calls, with their callers: the 20 longest finished calls,
-- each with its thread, when it began (ns after the recording's start),
-- its function, and the function of the call it was made from (its traced
-- caller; "" for an outermost call). The slowest call of a function is
-- report's max_ns (`atrace report --format=json`), and its caller is one
-- of the rows of `atrace report --callers=FUNCTION`. For the trace
-- recorded last; put a trace_id in place of the subqueries for another
-- one. (ClickHouse 18.16 takes one JOIN per SELECT: hence the nesting.
-- GLOBAL: on a cluster, the right side is read once, not by every shard.)
-- Columns: duration_ns, host, pid, tid, start_ns, name, caller, depth, call_id.
SELECT duration_ns, host, pid, tid, start_ns, name, caller, depth, call_id
FROM
(
    SELECT duration_ns, host, pid, tid, start_ns, name, parent_function, depth, call_id
    FROM
    (
        SELECT duration_ns, host, pid, tid, start_ns, function_id, parent_function, depth, call_id
        FROM
        (
            SELECT duration_ns, host, pid, tid, start_ns - trace_start AS start_ns, function_id,
                depth, call_id, parent_id
            FROM atrace.calls
            GLOBAL ANY LEFT JOIN
            (
                SELECT trace_id, host, start_ns AS trace_start FROM atrace.traces
            ) USING (trace_id, host)
            WHERE trace_id = (SELECT trace_id FROM atrace.traces ORDER BY start_realtime_ns DESC LIMIT 1)
                AND finished = 1
            ORDER BY duration_ns DESC, call_id
            LIMIT 20
        )
        ANY LEFT JOIN
        (
            -- the callers of those 20
            SELECT call_id AS parent_id, function_id AS parent_function
            FROM atrace.calls
            WHERE trace_id = (SELECT trace_id FROM atrace.traces ORDER BY start_realtime_ns DESC LIMIT 1)
                AND call_id GLOBAL IN
                (
                    SELECT parent_id
                    FROM atrace.calls
                    WHERE trace_id = (SELECT trace_id FROM atrace.traces ORDER BY start_realtime_ns DESC LIMIT 1)
                        AND finished = 1
                    ORDER BY duration_ns DESC, call_id
                    LIMIT 20
                )
        ) USING (parent_id)
    )
    ANY LEFT JOIN
    (
        SELECT function_id, name
        FROM atrace.functions
        WHERE trace_id = (SELECT trace_id FROM atrace.traces ORDER BY start_realtime_ns DESC LIMIT 1)
    ) USING (function_id)
)
ANY LEFT JOIN
(
    SELECT function_id AS parent_function, name AS caller
    FROM atrace.functions
    WHERE trace_id = (SELECT trace_id FROM atrace.traces ORDER BY start_realtime_ns DESC LIMIT 1)
) USING (parent_function)
ORDER BY duration_ns DESC, call_id
