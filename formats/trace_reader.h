// Reads a trace file written by TraceWriter (format 2, formats/FORMAT.md).
//
// Opening reads the tables and verifies every block's checksum (damage is
// known, and warned about, before any event is handed out); next() then
// merges the threads' blocks in global time order, holding at most one
// decoded block per thread: memory does not grow with the file.
// Errors (not a trace, newer major version, unreadable) throw TraceError with
// a one-line message meant for the user.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "formats/corrections.h"
#include "formats/error.h"
#include "formats/event_filter.h"
#include "formats/series.h"
#include "formats/trace_types.h"

namespace atrace::formats {

// The file cannot be read (not a trace, newer major version, unreadable).
class TraceError : public Error {
 public:
  using Error::Error;
};

// A module a traced process had mapped (ModuleLoad events): where its file
// offset 0 is, and which file.
struct MappedModule {
  uint64_t base = 0;
  std::string path;
  std::string build_id;
  // Its process's root as atrace saw it (ProcessInfo::root): where a
  // container's file may still be once the container is gone; "" none.
  std::string root;
};

class TraceReader {
 public:
  // A file of a series of rotated files: read with the files after it
  // (Follow), or alone (Alone: the recorder's loader, which reads each
  // file as it is finished, while the next one is being written).
  enum class Series { Follow, Alone };
  // path "-" reads stdin.
  explicit TraceReader(const std::string& path, Series series = Series::Follow);
  ~TraceReader();
  TraceReader(const TraceReader&) = delete;
  TraceReader& operator=(const TraceReader&) = delete;

  const TraceHeader& header() const;
  const std::vector<ProbeInfo>& probes() const;
  const std::vector<ThreadInfo>& threads() const;
  const LostCounts& lost() const;
  // The traced processes as they saw themselves (PROCESSES frames), by host
  // pid; empty in files of writers before them. process(): nullptr when the
  // table does not have it.
  const std::vector<ProcessInfo>& processes() const;
  const ProcessInfo* process(uint32_t pid, uint16_t host = 0) const;
  // The recording host's identity and clock snapshots (CLOCKS frames), in
  // time order; empty in files of writers before them.
  const HostClocks& clocks() const;
  // The recordings a merged trace (`atrace merge`) holds, indexed by
  // Event::host (their identity and clock snapshots; host_name names them
  // in views); a single recording has one, clocks(). hosts().size() > 1
  // is how a view knows to group by host.
  const std::vector<HostClocks>& hosts() const;
  // A merged trace's clock corrections and sync report; nullptr for a
  // single recording. Every time stamp the reader hands out (events,
  // threads, the index) is already corrected by them.
  const Corrections* corrections() const;
  // Warnings about the file (truncated, damaged parts, unknown event kinds),
  // one line each. Reading events can add some (a block that does not decode,
  // kinds from a newer minor version).
  const std::vector<std::string>& warnings() const;
  // A block or table failed its checksum or did not decode: some events are
  // missing for a reason other than the recorder being stopped. Commands exit
  // non-zero for such a file.
  bool damaged() const;
  // Events stored in the readable blocks (from the index).
  uint64_t event_count() const;
  // Format version found in the file (a newer minor version reads fine).
  uint16_t version_major() const;
  uint16_t version_minor() const;
  // A series of rotated files (`record --rotate`, formats/series.h): given
  // its first file, the reader reads every file of the series after it, as
  // one recording (a call that began in one file and ended in the next is
  // one call). files() lists the files read (one, unless a series);
  // series() is the SERIES frame of the file given (nullptr: not rotated),
  // `last` set when the series read ends where the recording did.
  // Given a later file (its SERIES frame's seq K > 0: the earlier ones
  // deleted by --rotate-keep, or left out), the reader reads the series
  // from it on, with a warning; series_earlier_present() says how many of
  // files 0 to K-1 exist (none read).
  const std::vector<std::string>& files() const;
  const SeriesInfo* series() const;
  uint32_t series_earlier_present() const;

  // From now on, only the events `filter` keeps (formats/event_filter.h),
  // from the first: threads() lists the threads it keeps, and with a time
  // range header().end_mono_ns is the range's end. Throws FilterError when
  // it matches nothing in this trace.
  void select(const EventFilter& filter);

  // Next event in global time order (of those select() keeps); false at the end.
  bool next(Event& ev);
  // Start again from the first event.
  void rewind();

  // The module of process `pid` that holds `address`, as far as the events
  // read so far tell (ModuleLoad/ModuleUnload, also those select() leaves
  // out): the one mapped at the highest base not above it; nullptr if none.
  // Its end is not recorded: the caller checks the address against the file.
  const MappedModule* module_at(uint32_t pid, uint64_t address, uint16_t host = 0) const;

  // Instrumentation (tests): readable blocks in the file, decoded blocks held
  // in memory now, and the most held at once.
  uint64_t block_count() const;
  uint64_t live_blocks() const;
  uint64_t peak_live_blocks() const;

 private:
  bool next_stored(Event& ev);

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace atrace::formats
