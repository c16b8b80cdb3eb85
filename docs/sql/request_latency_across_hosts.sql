-- Request latency across hosts (`record --kernel=+net`; the recordings of
-- a merged trace, docs/merge.md): the one-way latency of the matched
-- messages (table message_pairs: receive minus send, on the merged
-- trace's corrected time line), p50 and p99 per host, function (the
-- innermost traced call open at the send or the receive), protocol and
-- peer: the rows of `atrace report`'s messages table (`--format=json`:
-- `messages`, their latencies, latency_p50_ns and latency_p99_ns). A pair
-- counts in its send's row and in its receive's (once when the two are
-- the same row), as in report; the percentiles are nearest-rank (the
-- smallest latency with at least p % of them at or below it). `across`:
-- the row's pairs whose other end is on another host (add `AND recv_host
-- != send_host` to both WHERE clauses for those only; report has no such
-- filter). Slowest p99 first. For the trace recorded last; put a trace_id
-- in place of the subqueries for another one.
-- Columns: host, host_name, name, module, protocol, peer, pairs, across,
-- p50_ns, p99_ns, max_ns.
SELECT host, host_name, name, module, protocol, peer, pairs, across, p50_ns, p99_ns, max_ns
FROM
(
    SELECT host, function_id, name, module, protocol, peer, pairs, across, p50_ns, p99_ns, max_ns
    FROM
    (
        SELECT host, function_id, protocol, peer, pairs, across,
            arrayElement(sorted, intDiv(pairs * 50 + 99, 100)) AS p50_ns,
            arrayElement(sorted, intDiv(pairs * 99 + 99, 100)) AS p99_ns,
            max_ns
        FROM
        (
            SELECT host, function_id, protocol, peer,
                count() AS pairs,
                countIf(other_host != host) AS across,
                arraySort(groupArray(latency_ns)) AS sorted,
                max(latency_ns) AS max_ns
            FROM
            (
                SELECT send_host AS host, send_function_id AS function_id, protocol,
                    send_peer AS peer, recv_host AS other_host, latency_ns
                FROM atrace.message_pairs
                WHERE trace_id = (SELECT trace_id FROM atrace.traces ORDER BY start_realtime_ns DESC LIMIT 1)
                UNION ALL
                SELECT recv_host AS host, recv_function_id AS function_id, protocol,
                    recv_peer AS peer, send_host AS other_host, latency_ns
                FROM atrace.message_pairs
                WHERE trace_id = (SELECT trace_id FROM atrace.traces ORDER BY start_realtime_ns DESC LIMIT 1)
                    -- a pair inside one row counts once
                    AND NOT (recv_host = send_host AND recv_function_id = send_function_id
                        AND recv_peer = send_peer)
            )
            GROUP BY host, function_id, protocol, peer
        )
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
ORDER BY p99_ns DESC, host, function_id, protocol, peer
