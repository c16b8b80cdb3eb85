// analysis/: the public face of what reports are built from, for output/
// and tools/ (the one header a file outside analysis/ includes;
// tests/check_layering.py).
//
//   call_replay.h         the one replay of a trace's calls, with listeners
//   profile.h             listener: the per-function table (Profile)
//   call_tree.h           listener: one node per call path
//   export_timeline.h     listener: the spans timeline viewers draw
//   timeline_downsample.h the HTML timeline's sampling of those spans
//   function_names.h      how every view names a function
//   process_text.h        how every view names a process (NSpid, cgroup)
//   stack_callers.h       listener: callers named by recorded call stacks
//   stack_frames.h        the addresses of recorded call stacks, named
//   syscall_names.h       system call numbers to names
//   value_groups.h        listener: calls grouped by a recorded argument (--group-by)
//   clock_summary.h       a trace's clock snapshots in a few numbers (info)
//   clock_merge.h         a merge's clock corrections from the traces' evidence
//   message_match.h       which send each received message came from
//   message_flows.h       those pairs as arrows, for the streaming exporters
//   flow_graph.h          listener: who hands values, bytes and wake-ups to whom
//   flow_view.h           that graph per function/thread/process/module/host, split in two
//   raw_time.h            a merged trace's corrected times back to each host's clock
#pragma once

#include "analysis/call_replay.h"
#include "analysis/call_tree.h"
#include "analysis/clock_merge.h"
#include "analysis/clock_summary.h"
#include "analysis/export_timeline.h"
#include "analysis/flow_graph.h"
#include "analysis/flow_view.h"
#include "analysis/function_names.h"
#include "analysis/message_flows.h"
#include "analysis/message_match.h"
#include "analysis/process_text.h"
#include "analysis/profile.h"
#include "analysis/raw_time.h"
#include "analysis/stack_callers.h"
#include "analysis/stack_frames.h"
#include "analysis/syscall_names.h"
#include "analysis/timeline_downsample.h"
#include "analysis/value_groups.h"
