// Writes a trace file. The recorder talks only to this API, so the on-disk
// encoding can change without touching it.
//
// Call order: write_header, write_probes, write_events (any number of times),
// finish. Events handed to write_events are in non-decreasing timestamp order
// within each thread; batches follow each other in time.
#pragma once

#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "formats/trace_types.h"

namespace atrace::fmt {

class TraceWriter {
 public:
  // path "-" writes to stdout. Throws std::runtime_error naming the path.
  explicit TraceWriter(const std::string& path);
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  void write_header(const TraceHeader& h);
  void write_probes(const std::vector<ProbeInfo>& probes);
  void write_events(std::span<const Event> events);
  // Final header (end clocks), thread table and loss counts; closes the file.
  void finish(const TraceHeader& h, const std::vector<ThreadInfo>& threads,
              const LostCounts& lost);

  uint64_t events_written() const { return events_written_; }
  uint64_t bytes_written() const { return bytes_written_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  uint64_t events_written_ = 0;
  uint64_t bytes_written_ = 0;
};

}  // namespace atrace::fmt
