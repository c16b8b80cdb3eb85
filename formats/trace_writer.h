// Writes a trace file (format 2, formats/FORMAT.md). The recorder talks only
// to this API, so the on-disk encoding can change without touching it.
//
// Call order: write_header, write_probes, write_events (any number of times,
// also with no events: that is when blocks are flushed by age), finish;
// write_processes at any point after the header.
// Events handed to write_events are in non-decreasing timestamp order within
// each thread; batches follow each other in time.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "formats/corrections.h"
#include "formats/error.h"
#include "formats/series.h"
#include "formats/trace_types.h"

namespace atrace::formats {

struct WriterOptions {
  int zstd_level = 3;
  // A thread's block is written when its encoded events reach this size...
  size_t block_bytes = 64 * 1024;
  // ...or when its oldest event is this old (CLOCK_MONOTONIC ns), checked
  // at each write_events call, so a killed writer loses at most about this
  // much (the recorder's, shorter: record/kill_bound.h).
  uint64_t max_age_ns = 1000000000ull;
  // "Now" on the events' clock (CLOCK_MONOTONIC); tests inject their own.
  std::function<uint64_t()> now;
};

// The file could not be written (disk full, reader of stdout gone, ...):
// the bytes before the failed write stay readable.
class WriteError : public Error {
 public:
  using Error::Error;
};

class TraceWriter {
 public:
  // path "-" writes to stdout. Throws WriteError naming the path,
  // as do the write calls.
  explicit TraceWriter(const std::string& path, WriterOptions opts = {});
  // Writes to `fd`, which it takes over (closed by finish() or the
  // destructor); `name` is for messages.
  TraceWriter(int fd, const std::string& name, WriterOptions opts = {});
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  void write_header(const TraceHeader& h);
  void write_probes(const std::vector<ProbeInfo>& probes);
  void write_events(std::span<const Event> events);
  // Processes that became traced (a PROCESSES frame): written at once, so a
  // killed recorder's file has them.
  void write_processes(const std::vector<ProcessInfo>& processes);
  // The host's identity and clock snapshots taken since the last call (a
  // CLOCKS frame): at the start, every second, at the stop.
  // `host`: the recording it belongs to in a merged trace (atrace merge).
  void write_clocks(const HostClocks& clocks, uint16_t host = 0);
  // A merged trace's clock corrections and sync report (a CORRECTIONS
  // frame), written once, before finish.
  void write_corrections(const Corrections& corrections);
  // End clocks, thread table, loss counts and the block index; closes the file.
  void finish(const TraceHeader& h, const std::vector<ThreadInfo>& threads, const LostCounts& lost);

  // Rotation (`record --rotate`, formats/series.h): the file's SERIES
  // frame; the threads of the events written to this file so far (open
  // blocks included; names from `known`), for its footer; and, once
  // finished, the next file of the series on `fd` (taken over, as the
  // constructor's), the writer then as new.
  void write_series(const SeriesInfo& series);
  std::vector<ThreadInfo> file_threads(const std::vector<ThreadInfo>& known) const;
  void reopen(int fd, const std::string& name);

  uint64_t events_written() const { return events_written_; }
  uint64_t bytes_written() const { return bytes_written_; }
  uint64_t blocks_written() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  uint64_t events_written_ = 0;
  uint64_t bytes_written_ = 0;
};

}  // namespace atrace::formats
