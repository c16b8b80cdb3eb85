// TraceWriter for format 2 (formats/FORMAT.md): a preamble, then frames.
//
// Each thread has one open block in memory. A block becomes an EVENTS frame
// (zstd-compressed, checksummed) when it is full, when its oldest event is
// older than max_age_ns, or at finish; frames go to the kernel with write(2)
// at once, so a killed recorder loses only the open blocks (at most about
// max_age_ns of events: record/kill_bound.h). The footer (index, threads,
// losses, end clocks) and the trailer pointing at it are written by
// finish() only: a file without them was not finished, and the reader
// rebuilds the index by scanning.
#include "formats/trace_writer.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <unordered_map>

#include "base/diagnostics.h"
#include "formats/block_codec.h"
#include "formats/format_v2.h"
#include "formats/frame.h"
#include "formats/metadata_codec.h"

namespace atrace::formats {

using namespace v2;  // NOLINT: the format's constants

namespace {

uint64_t monotonic_now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace

struct TraceWriter::Impl {
  std::string path;
  int fd = -1;
  WriterOptions opts;
  FrameEncoder frames;
  // Open blocks by thread_key (host and tid). Batches interleave threads
  // event by event (they are in time order), so a small direct-mapped
  // cache in front of the map saves a hash lookup per event.
  std::unordered_map<uint64_t, std::unique_ptr<BlockBuilder>> open;
  struct CacheSlot {
    uint64_t tid = 0;
    BlockBuilder* block = nullptr;
  };
  std::array<CacheSlot, 64> cache{};
  std::vector<uint8_t> out;  // frames not yet written
  std::vector<IndexEntry> index;
  StringInterner strings;
  uint64_t offset = 0;  // bytes handed to the kernel
  bool started = false, finished = false;

  explicit Impl(WriterOptions o) : opts(std::move(o)), frames(opts.zstd_level) {
    if (!opts.now) opts.now = monotonic_now;
  }
  ~Impl() {
    if (fd > STDOUT_FILENO) ::close(fd);
  }

  std::string display() const { return path == "-" ? "stdout" : path; }
  // Trace files hold command lines and strings of the traced program.
  static constexpr mode_t kMode = 0600;
  bool failed = false;  // a write failed: nothing more is written
  [[noreturn]] void fail(int err) {
    failed = true;
    throw WriteError(display() + ": write failed: " + base::errno_text(err));
  }

  void frame(uint8_t type, std::span<const uint8_t> ext, std::span<const uint8_t> payload,
             bool compress, IndexEntry entry = {}) {
    entry.offset = offset + out.size();
    entry.type = type;
    index.push_back(entry);
    frames.append(out, type, ext, payload, compress);
  }

  void emit(BlockBuilder& b) {
    if (b.empty()) return;
    const BlockMeta& m = b.meta();
    ByteWriter ext;
    encode_block_meta(m, ext);
    frame(kFrameEvents, ext.buf(), b.payload(), true,
          {0, 0, m.tid, m.pid, m.count, m.first_ts, m.last_ts, m.host});
    b.clear();
  }

  // Hands pending frames to the kernel; returns the bytes written.
  uint64_t write_out() {
    if (failed) {
      out.clear();
      return 0;
    }
    const uint8_t* p = out.data();
    size_t n = out.size();
    while (n) {
      ssize_t w = ::write(fd, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) {
        out.clear();  // never retry a partial frame: the file would be garbled twice
        fail(errno);
      }
      p += w;
      n -= static_cast<size_t>(w);
    }
    uint64_t written = out.size();
    offset += written;
    out.clear();
    return written;
  }

  BlockBuilder& block_of(uint64_t tid) {
    CacheSlot& slot = cache[tid % cache.size()];
    if (slot.block && slot.tid == tid) return *slot.block;
    auto& b = open[tid];
    if (!b) b = std::make_unique<BlockBuilder>();
    slot = {tid, b.get()};
    return *b;
  }

  void emit_old_blocks() {
    uint64_t now = opts.now();
    bool erased = false;
    for (auto it = open.begin(); it != open.end();) {
      BlockBuilder& b = *it->second;
      bool old =
          !b.empty() && now >= b.meta().first_ts && now - b.meta().first_ts >= opts.max_age_ns;
      if (old) emit(b);
      if (b.empty()) {
        // An idle (or exited) thread gives its buffer back: a program that
        // makes thousands of short threads must not keep a block for each.
        it = open.erase(it);
        erased = true;
      } else {
        ++it;
      }
    }
    if (erased) cache.fill({});
  }

  // In tid order, so that the same events always make the same file.
  void emit_all() {
    std::vector<uint64_t> tids;
    for (auto& [tid, b] : open)
      if (!b->empty()) tids.push_back(tid);
    std::sort(tids.begin(), tids.end());
    for (uint64_t tid : tids) emit(*open[tid]);
    open.clear();
    cache.fill({});
  }
};

TraceWriter::TraceWriter(const std::string& path, WriterOptions opts)
    : impl_(std::make_unique<Impl>(std::move(opts))) {
  impl_->path = path;
  impl_->fd = path == "-"
                  ? STDOUT_FILENO
                  : ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, Impl::kMode);
  if (impl_->fd < 0) throw WriteError(path + ": cannot create: " + base::errno_text(errno));
}

TraceWriter::TraceWriter(int fd, const std::string& name, WriterOptions opts)
    : impl_(std::make_unique<Impl>(std::move(opts))) {
  impl_->path = name;
  impl_->fd = fd;
  if (fd < 0) throw WriteError(name + ": cannot create: " + base::errno_text(errno));
}

// Without finish() (the recorder failed or was interrupted), open blocks are
// still written: the file then reads as unfinished, not as empty.
TraceWriter::~TraceWriter() {
  if (impl_->finished || !impl_->started) return;
  try {
    impl_->emit_all();
    impl_->write_out();
  } catch (const std::exception&) {
    // Nothing to report to from a destructor; the reader will see truncation.
  }
}

uint64_t TraceWriter::blocks_written() const {
  uint64_t n = 0;
  for (const auto& x : impl_->index) n += x.type == kFrameEvents;
  return n;
}

void TraceWriter::write_header(const TraceHeader& h) {
  if (impl_->started) throw std::logic_error("TraceWriter: header written twice");
  impl_->started = true;
  ByteWriter pre;
  pre.bytes(kMagic, sizeof kMagic);
  pre.u16(kMajor);
  pre.u16(kMinor);
  impl_->out = pre.buf();
  ByteWriter payload;
  encode_header(h, payload);
  impl_->frame(kFrameHeader, {}, payload.buf(), false);
  bytes_written_ += impl_->write_out();
}

void TraceWriter::write_probes(const std::vector<ProbeInfo>& probes) {
  if (!impl_->started) throw std::logic_error("TraceWriter: probes before header");
  ByteWriter table;
  encode_probes(probes, impl_->strings, table);  // interns the strings first
  ByteWriter strings;
  if (impl_->strings.flush(strings)) impl_->frame(kFrameStrings, {}, strings.buf(), true);
  impl_->frame(kFrameProbes, {}, table.buf(), true);
  bytes_written_ += impl_->write_out();
}

void TraceWriter::write_clocks(const HostClocks& clocks, uint16_t host) {
  if (!impl_->started) throw std::logic_error("TraceWriter: clocks before header");
  if (impl_->finished) throw std::logic_error("TraceWriter: clocks after finish");
  if (clocks.snapshots.empty()) return;
  ByteWriter table;
  encode_clocks(clocks, table, host);
  impl_->frame(kFrameClocks, {}, table.buf(), true);
}

void TraceWriter::write_corrections(const Corrections& corrections) {
  if (!impl_->started) throw std::logic_error("TraceWriter: corrections before header");
  if (impl_->finished) throw std::logic_error("TraceWriter: corrections after finish");
  ByteWriter table;
  encode_corrections(corrections, table);
  impl_->frame(kFrameCorrections, {}, table.buf(), true);
  bytes_written_ += impl_->write_out();
}

void TraceWriter::write_processes(const std::vector<ProcessInfo>& processes) {
  if (!impl_->started) throw std::logic_error("TraceWriter: processes before header");
  if (impl_->finished) throw std::logic_error("TraceWriter: processes after finish");
  if (processes.empty()) return;
  ByteWriter table;
  encode_processes(processes, table);
  impl_->frame(kFrameProcesses, {}, table.buf(), true);
  bytes_written_ += impl_->write_out();
}

void TraceWriter::write_events(std::span<const Event> events) {
  if (!impl_->started) throw std::logic_error("TraceWriter: events before header");
  if (impl_->finished) throw std::logic_error("TraceWriter: events after finish");
  const size_t limit = impl_->opts.block_bytes;
  for (const auto& ev : events) {
    BlockBuilder& b = impl_->block_of(thread_key(ev));
    if (!b.accepts(ev)) impl_->emit(b);  // new process, or time went back
    b.add(ev);
    if (b.bytes() >= limit) impl_->emit(b);
  }
  events_written_ += events.size();
  impl_->emit_old_blocks();
  bytes_written_ += impl_->write_out();
}

void TraceWriter::finish(const TraceHeader& h, const std::vector<ThreadInfo>& threads,
                         const LostCounts& lost) {
  if (!impl_->started) throw std::logic_error("TraceWriter: finish before header");
  if (impl_->finished) throw std::logic_error("TraceWriter: finished twice");
  impl_->finished = true;  // even on failure: the destructor must not retry
  impl_->emit_all();
  Footer f;
  f.header = h;
  f.lost = lost;
  f.threads = threads;
  f.index = impl_->index;
  ByteWriter payload;
  encode_footer(f, payload);
  uint64_t footer_at = impl_->offset + impl_->out.size();
  impl_->frames.append(impl_->out, kFrameFooter, {}, payload.buf(), true);
  ByteWriter trailer;
  trailer.u64(footer_at);
  trailer.bytes(kTrailerMagic, sizeof kTrailerMagic);
  impl_->out.insert(impl_->out.end(), trailer.buf().begin(), trailer.buf().end());
  bytes_written_ += impl_->write_out();
  if (impl_->fd > STDOUT_FILENO) {
    int fd = impl_->fd;
    impl_->fd = -1;
    if (::close(fd) != 0) impl_->fail(errno);
  }
}

// Rotation (record --rotate): kept apart from the rest of the writer so
// that a file of a series is written exactly as a single recording's.
void TraceWriter::write_series(const SeriesInfo& series) {
  if (!impl_->started) throw std::logic_error("TraceWriter: series before header");
  if (impl_->finished) throw std::logic_error("TraceWriter: series after finish");
  ByteWriter payload;
  encode_series(series, payload);
  impl_->frame(kFrameSeries, {}, payload.buf(), false);
  bytes_written_ += impl_->write_out();
}

std::vector<ThreadInfo> TraceWriter::file_threads(const std::vector<ThreadInfo>& known) const {
  std::unordered_map<uint64_t, ThreadInfo> by_key;
  auto add = [&](uint16_t host, uint32_t tid, uint32_t pid, uint64_t count, uint64_t first,
                 uint64_t last) {
    auto [it, fresh] = by_key.try_emplace(thread_key(host, tid));
    ThreadInfo& t = it->second;
    if (fresh) {
      t.tid = tid;
      t.host = host;
      t.first_ts = first;
    }
    t.pid = pid;
    t.first_ts = std::min(t.first_ts, first);
    t.last_ts = std::max(t.last_ts, last);
    t.events += count;
  };
  for (const auto& x : impl_->index)
    if (x.type == kFrameEvents) add(x.host, x.tid, x.pid, x.count, x.first_ts, x.last_ts);
  for (const auto& [key, b] : impl_->open)
    if (!b->empty()) {
      const BlockMeta& m = b->meta();
      add(m.host, m.tid, m.pid, m.count, m.first_ts, m.last_ts);
    }
  std::vector<ThreadInfo> out;
  for (const auto& k : known) {
    auto it = by_key.find(thread_key(k.host, k.tid));
    if (it == by_key.end()) continue;
    it->second.name = k.name;
    out.push_back(std::move(it->second));
    by_key.erase(it);
  }
  std::vector<ThreadInfo> rest;
  rest.reserve(by_key.size());
  for (auto& [key, t] : by_key) rest.push_back(std::move(t));
  std::sort(rest.begin(), rest.end(),
            [](const ThreadInfo& a, const ThreadInfo& b) { return a.tid < b.tid; });
  out.insert(out.end(), rest.begin(), rest.end());
  return out;
}

void TraceWriter::reopen(int fd, const std::string& name) {
  if (!impl_->finished) throw std::logic_error("TraceWriter: reopened before finish");
  WriterOptions opts = impl_->opts;
  impl_ = std::make_unique<Impl>(std::move(opts));
  impl_->path = name;
  impl_->fd = fd;
  events_written_ = 0;
  bytes_written_ = 0;
  if (fd < 0) throw WriteError(name + ": cannot create: " + base::errno_text(errno));
}

}  // namespace atrace::formats
