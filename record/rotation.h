// `atrace record --rotate=SIZE|DURATION` (docs/recording-long.md): the
// recording goes to a series of self-contained files (formats/series.h),
// the next begun once the current one holds SIZE bytes or spans DURATION.
//
// Every file is a trace of its own, readable alone: its HEADER (starting
// at the cut), a SERIES frame (series id, number), the probe table and the
// processes known so far, a clock snapshot, its events and a FOOTER with
// its own threads and losses. The cut falls between two batches of the
// drain loop, on the writing thread, in order with the batches: every
// event is in exactly one file, each thread's in time order across files,
// and the drain loop never waits for a cut (it queues it, as a batch).
//
// Threads: due() and cut() run on the drain loop's thread; the jobs they
// queue (note_size, rotate) on the writing thread (record/async_writer.h),
// which alone touches the writer and the files.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "formats/series.h"
#include "formats/trace_types.h"
#include "formats/trace_writer.h"
#include "record/output_file.h"
#include "record/rotate_options.h"

namespace atrace {

class Rotation {
 public:
  // `first`: the -o name, whose file holds the recording's start `header`.
  Rotation(RotateOptions opts, std::string first, const formats::TraceHeader& header);

  // The first file's SERIES frame.
  formats::SeriesInfo first_series() const;

  // Drain loop: the current file has reached its size or its span at `now`.
  bool due(uint64_t now) const;

  // What the next file begins with, and the last one ends with: taken on
  // the drain loop's thread (it owns the tables).
  struct Cut {
    uint64_t mono_ns = 0, real_ns = 0;       // the cut
    std::vector<formats::ThreadInfo> names;  // every thread known (names)
    formats::LostCounts lost;                // since the recording began
    formats::HostClocks old_clocks;          // snapshots not yet written
    formats::HostClocks new_clocks;          // the next file's first
    std::vector<formats::ProbeInfo> probes;  // the probe table so far
    std::vector<formats::ProcessInfo> processes;
  };
  // Drain loop: the cut is queued now (the next one is due from `c.mono_ns`).
  void cut_queued(const Cut& c);

  // Writing thread, after each batch: the current file's size.
  void note_size(const formats::TraceWriter& w);
  // Writing thread: ends the current file and begins the next. Throws
  // formats::WriteError (a file that cannot be made is a write error).
  void rotate(formats::TraceWriter& w, const Cut& c);
  // At the end, after the writing thread stopped: the last file's SERIES
  // frame (last), footer (its own threads and losses), then file_done.
  void finish(formats::TraceWriter& w, const formats::TraceHeader& header,
              const std::vector<formats::ThreadInfo>& threads, const formats::LostCounts& lost);

  uint32_t files() const { return seq_ + 1; }

 private:
  formats::LostCounts since_last_cut(const formats::LostCounts& total);
  formats::SeriesInfo series(uint32_t seq, bool last) const;

  RotateOptions opts_;
  std::string first_;
  formats::TraceHeader header_;       // the current file's (writing thread)
  formats::LostCounts lost_before_;   // at the last cut (writing thread)
  uint32_t seq_ = 0;                  // the current file (writing thread)
  std::unique_ptr<OutputFile> file_;  // the current file after the first
  const uint64_t series_id_;
  const uint64_t start_mono_ns_, start_real_ns_;  // the recording's
  // Drain loop's view: when its file began, which file it is.
  uint64_t file_start_ns_ = 0;
  uint32_t queued_seq_ = 0;
  // The writing thread's last note: (file, bytes), packed to be read whole.
  std::atomic<uint64_t> size_note_{0};
};

}  // namespace atrace
