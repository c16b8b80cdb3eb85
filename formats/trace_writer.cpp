// TraceWriter for format v1 (formats/FORMAT.md): a magic, then
// self-delimiting sections `u32 type, u32 flags, u64 length, payload`.
//
// Sections are written as soon as their content is known, so a file cut
// short by a killed recorder still holds every complete section: header and
// probes at the start, events in sections of about 1 MiB (the recorder hands
// over small batches every ~100 ms; one section per batch would waste 16
// bytes each and make many tiny writes), tables and END at finish.
// Everything is encoded explicitly little-endian, independent of the host.
#include "formats/format_v1.h"
#include "formats/trace_writer.h"

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace atrace::fmt {
namespace {

using namespace v1;  // NOLINT: the format's constants
constexpr size_t kFlushThreshold = 1 << 20;

// Appends little-endian fields to a byte buffer.
class Encoder {
 public:
  void u8(uint8_t v) { buf_.push_back(v); }
  void u16(uint16_t v) { le(v, 2); }
  void u32(uint32_t v) { le(v, 4); }
  void u64(uint64_t v) { le(v, 8); }
  void str(const std::string& s) {
    u32(static_cast<uint32_t>(s.size()));
    buf_.insert(buf_.end(), s.begin(), s.end());
  }
  // Patches a u32 written earlier at `pos` (entry sizes known only after).
  void patch_u32(size_t pos, uint32_t v) {
    for (int i = 0; i < 4; i++) buf_[pos + i] = static_cast<uint8_t>(v >> (8 * i));
  }
  size_t size() const { return buf_.size(); }
  const std::vector<uint8_t>& bytes() const { return buf_; }
  void clear() { buf_.clear(); }

 private:
  void le(uint64_t v, int n) {
    for (int i = 0; i < n; i++) buf_.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  std::vector<uint8_t> buf_;
};

void encode_header(Encoder& e, const TraceHeader& h) {
  e.str(h.atrace_version);
  e.str(h.command_line);
  e.str(h.target_command);
  e.u32(h.target_pid);
  e.str(h.host);
  e.str(h.kernel);
  e.u32(h.clock_id);
  e.u64(h.start_mono_ns);
  e.u64(h.start_real_ns);
  e.u64(h.end_mono_ns);
  e.u64(h.end_real_ns);
}

// Table entries carry their own size so a later minor version can append
// fields that older readers skip.
void encode_probe(Encoder& e, const ProbeInfo& p) {
  size_t at = e.size();
  e.u32(0);
  e.u32(p.id);
  e.u8(static_cast<uint8_t>(p.kind));
  e.u8(static_cast<uint8_t>(p.path_kind));
  e.u16(0);
  e.u64(p.address);
  e.u64(p.offset);
  e.str(p.name);
  e.str(p.module);
  e.str(p.path);
  e.patch_u32(at, static_cast<uint32_t>(e.size() - at));
}

void encode_thread(Encoder& e, const ThreadInfo& t) {
  size_t at = e.size();
  e.u32(0);
  e.u32(t.tid);
  e.u32(t.pid);
  e.u64(t.first_ts);
  e.u64(t.last_ts);
  e.u64(t.events);
  e.str(t.name);
  e.patch_u32(at, static_cast<uint32_t>(e.size() - at));
}

// 24 bytes, the fixed record of an EVENTS section.
void encode_event(Encoder& e, const Event& ev) {
  e.u64(ev.ts);
  e.u32(ev.pid);
  e.u32(ev.tid);
  e.u32(ev.id);
  e.u16(ev.cpu);
  e.u8(static_cast<uint8_t>(ev.kind));
  e.u8(0);
}

struct FileCloser {
  void operator()(FILE* f) const {
    if (f != stdout) std::fclose(f);
  }
};

}  // namespace

struct TraceWriter::Impl {
  std::string path;
  std::unique_ptr<FILE, FileCloser> file;
  Encoder events;  // encoded records not yet written
  bool started = false;
  bool finished = false;

  std::string display() const { return path == "-" ? "stdout" : path; }

  [[noreturn]] void fail(int err) const {
    throw std::runtime_error(display() + ": write failed: " + std::strerror(err));
  }

  // Returns the number of bytes written.
  uint64_t write_raw(const void* data, size_t n) {
    if (n && std::fwrite(data, 1, n, file.get()) != n) fail(errno);
    return n;
  }

  uint64_t write_section(uint32_t type, const std::vector<uint8_t>& payload) {
    Encoder head;
    head.u32(type);
    head.u32(0);  // flags
    head.u64(payload.size());
    return write_raw(head.bytes().data(), head.size()) +
           write_raw(payload.data(), payload.size());
  }

  uint64_t flush_events() {
    if (events.size() == 0) return 0;
    uint64_t n = write_section(kEvents, events.bytes());
    events.clear();
    // Push complete sections to the kernel so a killed recorder loses only
    // what is still buffered here.
    if (std::fflush(file.get()) != 0) fail(errno);
    return n;
  }

  void close() {
    FILE* f = file.release();
    if (f == stdout) {
      if (std::fflush(f) != 0) fail(errno);
    } else if (std::fclose(f) != 0) {
      fail(errno);
    }
  }
};

TraceWriter::TraceWriter(const std::string& path) : impl_(std::make_unique<Impl>()) {
  impl_->path = path;
  FILE* f = path == "-" ? stdout : std::fopen(path.c_str(), "wb");
  if (!f) throw std::runtime_error(path + ": cannot create: " + std::strerror(errno));
  impl_->file.reset(f);
}

// Without finish() (the recorder failed or was interrupted), buffered events
// are still written: the file then reads as truncated, not as empty.
TraceWriter::~TraceWriter() {
  if (!impl_->file || impl_->finished) return;
  try {
    if (impl_->started) impl_->flush_events();
  } catch (const std::exception&) {
    // Nothing to report to from a destructor; the reader will see truncation.
  }
}

void TraceWriter::write_header(const TraceHeader& h) {
  if (impl_->started) throw std::logic_error("TraceWriter: header written twice");
  impl_->started = true;
  Encoder version;
  version.u16(kMajor);
  version.u16(kMinor);
  bytes_written_ += impl_->write_raw(kMagic, sizeof kMagic);
  bytes_written_ += impl_->write_raw(version.bytes().data(), version.size());
  Encoder payload;
  encode_header(payload, h);
  bytes_written_ += impl_->write_section(kHeader, payload.bytes());
}

void TraceWriter::write_probes(const std::vector<ProbeInfo>& probes) {
  if (!impl_->started) throw std::logic_error("TraceWriter: probes before header");
  Encoder e;
  e.u32(static_cast<uint32_t>(probes.size()));
  for (const auto& p : probes) encode_probe(e, p);
  bytes_written_ += impl_->write_section(kProbes, e.bytes());
  if (std::fflush(impl_->file.get()) != 0) impl_->fail(errno);
}

void TraceWriter::write_events(std::span<const Event> events) {
  if (!impl_->started) throw std::logic_error("TraceWriter: events before header");
  if (impl_->finished) throw std::logic_error("TraceWriter: events after finish");
  for (const auto& ev : events) encode_event(impl_->events, ev);
  events_written_ += events.size();
  if (impl_->events.size() >= kFlushThreshold) bytes_written_ += impl_->flush_events();
}

void TraceWriter::finish(const TraceHeader& h, const std::vector<ThreadInfo>& threads,
                         const LostCounts& lost) {
  if (!impl_->started) throw std::logic_error("TraceWriter: finish before header");
  if (impl_->finished) throw std::logic_error("TraceWriter: finished twice");
  impl_->finished = true;  // even on failure: the destructor must not retry
  bytes_written_ += impl_->flush_events();

  Encoder t;
  t.u32(static_cast<uint32_t>(threads.size()));
  for (const auto& th : threads) encode_thread(t, th);
  bytes_written_ += impl_->write_section(kThreads, t.bytes());

  Encoder l;
  l.u32(static_cast<uint32_t>(lost.per_cpu.size()));
  for (auto n : lost.per_cpu) l.u64(n);
  bytes_written_ += impl_->write_section(kLost, l.bytes());

  Encoder fh;
  encode_header(fh, h);
  bytes_written_ += impl_->write_section(kFinalHeader, fh.bytes());
  bytes_written_ += impl_->write_section(kEnd, {});
  impl_->close();
}

}  // namespace atrace::fmt
