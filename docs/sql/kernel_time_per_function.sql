-- Off-CPU and system-call time per function (`record --kernel`): for each
-- function, the time its threads were switched out and spent in system
-- calls during its calls, the system calls and page faults, each with
-- callees (recursion: the outermost activation only) and without them
-- (self_). Report's kernel columns: Off-CPU, Self off, Sys time, Self
-- sys, Syscalls, Faults (`atrace report --format=json`: offcpu_ns,
-- self_offcpu_ns, syscall_ns, self_syscall_ns, syscalls, faults), in the
-- order of `--sort=offcpu`. For the trace recorded last; put a trace_id
-- in place of the subqueries for another one.
-- Columns: name, module, calls, offcpu_ns, self_offcpu_ns, syscall_ns,
-- self_syscall_ns, syscalls, self_syscalls, faults, self_faults.
SELECT name, module, calls, offcpu_ns, self_offcpu_ns, syscall_ns, self_syscall_ns,
    syscalls, self_syscalls, faults, self_faults
FROM
(
    SELECT
        function_id,
        count() AS calls,
        sumIf(offcpu_ns, outermost = 1) AS offcpu_ns,
        sum(self_offcpu_ns) AS self_offcpu_ns,
        sumIf(syscall_ns, outermost = 1) AS syscall_ns,
        sum(self_syscall_ns) AS self_syscall_ns,
        sumIf(syscalls, outermost = 1) AS syscalls,
        sum(self_syscalls) AS self_syscalls,
        sumIf(faults, outermost = 1) AS faults,
        sum(self_faults) AS self_faults
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
ORDER BY offcpu_ns DESC, name
