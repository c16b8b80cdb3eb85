// Where a recording's events go besides the trace file, or instead of it
// (RecordOptions::output empty): `atrace top` gives the recorder a sink
// that aggregates them as they arrive. It sees what the file would get, in
// the same order and at the same moments, so whatever reads a trace reads
// a sink's events the same way.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "formats/trace_types.h"

namespace atrace {

class EventSink {
 public:
  virtual ~EventSink() = default;
  // Once, when the probes are in: the header with its start clocks and
  // the probe table.
  virtual void begin(const formats::TraceHeader& header,
                     const std::vector<formats::ProbeInfo>& probes) = 0;
  // Any number of times: events in time order within each thread (as
  // formats::TraceWriter::write_events gets them).
  virtual void events(std::span<const formats::Event> events) = 0;
  // Every wake-up of the drain loop (CLOCK_MONOTONIC); true ends the
  // recording as a stop signal would.
  virtual bool tick(uint64_t now) = 0;
  // Once, after the last events: the header with its end clocks, the
  // threads' names and the losses. Before a launched target is waited for.
  virtual void end(const formats::TraceHeader& header,
                   const std::vector<formats::ThreadInfo>& threads,
                   const formats::LostCounts& lost) = 0;
};

}  // namespace atrace
