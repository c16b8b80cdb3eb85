// Reads a trace file written by TraceWriter.
//
// open() reads the tables; next() hands out events in global timestamp order.
// Errors (not a trace, newer major version, unreadable) throw TraceError with
// a one-line message meant for the user.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "formats/trace_types.h"

namespace atrace::fmt {

class TraceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class TraceReader {
 public:
  // path "-" reads stdin.
  explicit TraceReader(const std::string& path);
  ~TraceReader();
  TraceReader(const TraceReader&) = delete;
  TraceReader& operator=(const TraceReader&) = delete;

  const TraceHeader& header() const;
  const std::vector<ProbeInfo>& probes() const;
  const std::vector<ThreadInfo>& threads() const;
  const LostCounts& lost() const;
  // Warnings about the file (truncated, damaged parts), one line each.
  const std::vector<std::string>& warnings() const;
  uint64_t event_count() const;
  // Format version found in the file (a newer minor version reads fine).
  uint16_t version_major() const;
  uint16_t version_minor() const;

  // Next event in global time order; false at the end.
  bool next(Event& ev);
  // Start again from the first event.
  void rewind();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace atrace::fmt
