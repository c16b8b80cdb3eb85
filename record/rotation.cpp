// --rotate's cuts (rotation.h): when one is due, what ends a file and
// what begins the next, on the writer's thread.
#include "record/rotation.h"

#include <algorithm>
#include <utility>

namespace atrace {

namespace {

// (file, bytes) in one word: 20 bits of file number, 44 of bytes (16 TiB).
constexpr int kSeqShift = 44;
constexpr uint64_t kBytesMask = (uint64_t{1} << kSeqShift) - 1;

}  // namespace

Rotation::Rotation(RotateOptions opts, std::string first, const formats::TraceHeader& header)
    : opts_(std::move(opts)),
      first_(std::move(first)),
      header_(header),
      series_id_(formats::new_series_id()),
      start_mono_ns_(header.start_mono_ns),
      start_real_ns_(header.start_real_ns),
      file_start_ns_(header.start_mono_ns) {}

formats::SeriesInfo Rotation::series(uint32_t seq, bool last) const {
  formats::SeriesInfo s;
  s.id = series_id_;
  s.seq = seq;
  s.last = last;
  s.start_mono_ns = start_mono_ns_;
  s.start_real_ns = start_real_ns_;
  return s;
}

formats::SeriesInfo Rotation::first_series() const { return series(0, false); }

bool Rotation::due(uint64_t now) const {
  if (opts_.ns && now >= file_start_ns_ && now - file_start_ns_ >= opts_.ns) return true;
  if (!opts_.bytes) return false;
  const uint64_t note = size_note_.load(std::memory_order_relaxed);
  return (note >> kSeqShift) == (queued_seq_ & 0xfffff) && (note & kBytesMask) >= opts_.bytes;
}

void Rotation::cut_queued(const Cut& c) {
  file_start_ns_ = c.mono_ns;
  ++queued_seq_;
}

void Rotation::note_size(const formats::TraceWriter& w) {
  size_note_.store((uint64_t{seq_ & 0xfffff} << kSeqShift) | (w.bytes_written() & kBytesMask),
                   std::memory_order_relaxed);
}

formats::LostCounts Rotation::since_last_cut(const formats::LostCounts& total) {
  formats::LostCounts d;
  d.per_cpu.resize(total.per_cpu.size());
  for (size_t c = 0; c < total.per_cpu.size(); c++) {
    const uint64_t before = c < lost_before_.per_cpu.size() ? lost_before_.per_cpu[c] : 0;
    d.per_cpu[c] = total.per_cpu[c] >= before ? total.per_cpu[c] - before : 0;
  }
  lost_before_ = total;
  return d;
}

void Rotation::rotate(formats::TraceWriter& w, const Cut& c) {
  // The file so far ends at the cut, with its own threads and losses.
  w.write_clocks(c.old_clocks);
  formats::TraceHeader ended = header_;
  ended.end_mono_ns = c.mono_ns;
  ended.end_real_ns = c.real_ns;
  w.finish(ended, w.file_threads(c.names), since_last_cut(c.lost));
  const std::string done = seq_ == 0 ? first_ : file_->path();
  // The next one begins at the cut, with what a reader of it alone needs.
  const std::string next = formats::series_file_name(first_, seq_ + 1);
  std::unique_ptr<OutputFile> file;
  try {
    file = std::make_unique<OutputFile>(next);
  } catch (const OutputError& e) {
    throw formats::WriteError(std::string(e.what()) + " (the next file of the series)");
  }
  ++seq_;
  w.reopen(file->dup_fd(), file->display());
  header_.start_mono_ns = c.mono_ns;
  header_.start_real_ns = c.real_ns;
  header_.end_mono_ns = header_.end_real_ns = 0;
  w.write_header(header_);
  w.write_series(series(seq_, false));
  w.write_probes(c.probes);
  w.write_processes(c.processes);
  w.write_clocks(c.new_clocks);
  try {
    file->commit();
  } catch (const OutputError& e) {
    throw formats::WriteError(e.what());
  }
  file_ = std::move(file);
  note_size(w);
  if (opts_.file_done) opts_.file_done(done);
}

void Rotation::finish(formats::TraceWriter& w, const formats::TraceHeader& header,
                      const std::vector<formats::ThreadInfo>& threads,
                      const formats::LostCounts& lost) {
  w.write_series(series(seq_, true));
  formats::TraceHeader ended = header_;
  ended.end_mono_ns = header.end_mono_ns;
  ended.end_real_ns = header.end_real_ns;
  w.finish(ended, w.file_threads(threads), since_last_cut(lost));
  if (opts_.file_done) opts_.file_done(seq_ == 0 ? first_ : file_->path());
}

}  // namespace atrace
