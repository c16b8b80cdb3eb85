// TraceReader for format v1 (formats/FORMAT.md).
//
// The whole file is read into memory (v1 has no index to seek with, and
// stdin cannot seek anyway), its sections parsed in order, and the events
// sorted by time once. Robustness rules:
//   - not our magic, or a newer major version: TraceError, nothing read;
//   - unknown section types: skipped (a newer minor version added them);
//   - a file that stops before END (recorder killed): every complete section
//     is used, the rest reported as one warning; the thread table is rebuilt
//     from the events, without names;
//   - a malformed header or probe table: TraceError (nothing useful can be
//     said without them); other malformed sections: warning, section skipped.
#include "formats/format_v1.h"
#include "formats/trace_reader.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <span>

namespace atrace::fmt {
namespace {

using namespace v1;  // NOLINT: the format's constants

const char* section_name(uint32_t type) {
  switch (type) {
    case kHeader: return "HEADER";
    case kProbes: return "PROBES";
    case kEvents: return "EVENTS";
    case kThreads: return "THREADS";
    case kLost: return "LOST";
    case kFinalHeader: return "FINAL_HEADER";
    case kEnd: return "END";
  }
  return "unknown";
}

// Thrown by Decoder when a field runs past its section or entry.
struct Malformed {};

// Reads little-endian fields from a bounded byte range.
class Decoder {
 public:
  explicit Decoder(std::span<const uint8_t> b) : b_(b) {}
  uint8_t u8() { return static_cast<uint8_t>(le(1)); }
  uint16_t u16() { return static_cast<uint16_t>(le(2)); }
  uint32_t u32() { return static_cast<uint32_t>(le(4)); }
  uint64_t u64() { return le(8); }
  std::string str() {
    uint32_t n = u32();
    need(n);
    std::string s(reinterpret_cast<const char*>(b_.data() + pos_), n);
    pos_ += n;
    return s;
  }
  // A sub-decoder over the next n bytes, which this one skips.
  Decoder sub(size_t n) {
    need(n);
    Decoder d(b_.subspan(pos_, n));
    pos_ += n;
    return d;
  }
  size_t left() const { return b_.size() - pos_; }

 private:
  void need(size_t n) const {
    if (n > left()) throw Malformed{};
  }
  uint64_t le(int n) {
    need(static_cast<size_t>(n));
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v |= static_cast<uint64_t>(b_[pos_ + i]) << (8 * i);
    pos_ += static_cast<size_t>(n);
    return v;
  }
  std::span<const uint8_t> b_;
  size_t pos_ = 0;
};

TraceHeader decode_header(Decoder d) {
  TraceHeader h;
  h.atrace_version = d.str();
  h.command_line = d.str();
  h.target_command = d.str();
  h.target_pid = d.u32();
  h.host = d.str();
  h.kernel = d.str();
  h.clock_id = d.u32();
  h.start_mono_ns = d.u64();
  h.start_real_ns = d.u64();
  h.end_mono_ns = d.u64();
  h.end_real_ns = d.u64();
  return h;  // later minor versions may append fields: ignored
}

// Each entry starts with its own size (which includes the size field).
Decoder entry(Decoder& d) {
  uint32_t size = d.u32();
  if (size < 4) throw Malformed{};
  return d.sub(size - 4);
}

std::vector<ProbeInfo> decode_probes(Decoder d) {
  std::vector<ProbeInfo> out(d.u32());
  for (auto& p : out) {
    Decoder e = entry(d);
    p.id = e.u32();
    p.kind = static_cast<ProbeKind>(e.u8());
    p.path_kind = static_cast<ProbePath>(e.u8());
    e.u16();
    p.address = e.u64();
    p.offset = e.u64();
    p.name = e.str();
    p.module = e.str();
    p.path = e.str();
  }
  return out;
}

std::vector<ThreadInfo> decode_threads(Decoder d) {
  std::vector<ThreadInfo> out(d.u32());
  for (auto& t : out) {
    Decoder e = entry(d);
    t.tid = e.u32();
    t.pid = e.u32();
    t.first_ts = e.u64();
    t.last_ts = e.u64();
    t.events = e.u64();
    t.name = e.str();
  }
  return out;
}

LostCounts decode_lost(Decoder d) {
  LostCounts l;
  l.per_cpu.resize(d.u32());
  for (auto& n : l.per_cpu) n = d.u64();
  return l;
}

void decode_events(Decoder d, std::vector<Event>& out) {
  while (d.left() >= kEventRecordSize) {
    Event ev;
    ev.ts = d.u64();
    ev.pid = d.u32();
    ev.tid = d.u32();
    ev.id = d.u32();
    ev.cpu = d.u16();
    ev.kind = static_cast<EventKind>(d.u8());
    d.u8();
    out.push_back(ev);
  }
}

// Threads as seen in the events, for files whose thread table is missing.
std::vector<ThreadInfo> threads_from_events(const std::vector<Event>& events) {
  std::map<uint32_t, ThreadInfo> by_tid;
  for (const auto& ev : events) {
    auto [it, fresh] = by_tid.try_emplace(ev.tid);
    ThreadInfo& t = it->second;
    if (fresh) {
      t.tid = ev.tid;
      t.pid = ev.pid;
      t.first_ts = ev.ts;
    }
    t.last_ts = ev.ts;
    t.events++;
  }
  std::vector<ThreadInfo> out;
  for (auto& [tid, t] : by_tid) out.push_back(std::move(t));
  return out;
}

struct FileCloser {
  void operator()(FILE* f) const {
    if (f != stdin) std::fclose(f);
  }
};

std::vector<uint8_t> read_all(const std::string& path, const std::string& name) {
  FILE* raw = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
  if (!raw) {
    int err = errno;
    std::string msg = name + ": cannot open: " + std::strerror(err);
    if (err == ENOENT) msg += " (record a trace with 'atrace record')";
    throw TraceError(msg);
  }
  std::unique_ptr<FILE, FileCloser> f(raw);
  std::vector<uint8_t> data;
  uint8_t chunk[1 << 16];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof chunk, f.get())) > 0)
    data.insert(data.end(), chunk, chunk + n);
  if (std::ferror(f.get())) throw TraceError(name + ": cannot read: " + std::strerror(errno));
  return data;
}

}  // namespace

struct TraceReader::Impl {
  std::string name;  // for messages
  uint16_t major = 0, minor = 0;
  TraceHeader header;
  std::vector<ProbeInfo> probes;
  std::vector<ThreadInfo> threads;
  LostCounts lost;
  std::vector<std::string> warnings;
  std::vector<Event> events;
  size_t next = 0;

  void parse(std::span<const uint8_t> data);
  void warn(const std::string& what) { warnings.push_back(name + ": " + what); }
  [[noreturn]] void fail(const std::string& what) const { throw TraceError(name + ": " + what); }
};

void TraceReader::Impl::parse(std::span<const uint8_t> data) {
  if (data.size() < kPreambleSize || std::memcmp(data.data(), kMagic, sizeof kMagic) != 0)
    fail(data.empty() ? "empty file, not an atrace trace file" : "not an atrace trace file");
  Decoder pre(data.subspan(sizeof kMagic, 4));
  major = pre.u16();
  minor = pre.u16();
  std::string version = std::to_string(major) + "." + std::to_string(minor);
  if (major > kMajor)
    fail("trace format version " + version + " is newer than this atrace (" +
         std::to_string(kMajor) + "." + std::to_string(kMinor) + "); update atrace to read it");
  if (major < kMajor) fail("trace format version " + version + " is not supported");

  bool have_header = false, have_threads = false, have_lost = false;
  bool ended = false;
  size_t pos = kPreambleSize;
  while (pos < data.size()) {
    if (data.size() - pos < kSectionHeadSize) break;
    Decoder head(data.subspan(pos, kSectionHeadSize));
    uint32_t type = head.u32();
    head.u32();  // flags: none defined in 1.x
    uint64_t len = head.u64();
    if (len > data.size() - pos - kSectionHeadSize) break;  // cut short
    Decoder body(data.subspan(pos + kSectionHeadSize, static_cast<size_t>(len)));
    std::string where = std::string(section_name(type)) + " section at offset " + std::to_string(pos);
    try {
      switch (type) {
        case kHeader:
          header = decode_header(body);
          have_header = true;
          break;
        case kFinalHeader:
          header = decode_header(body);  // the same, with end clocks
          have_header = true;
          break;
        case kProbes: {
          auto more = decode_probes(body);
          probes.insert(probes.end(), more.begin(), more.end());
          break;
        }
        case kEvents:
          if (len % kEventRecordSize)
            warn("damaged " + where + ": length " + std::to_string(len) +
                 " is not a multiple of 24, incomplete record ignored");
          decode_events(body, events);
          break;
        case kThreads:
          threads = decode_threads(body);
          have_threads = true;
          break;
        case kLost:
          lost = decode_lost(body);
          have_lost = true;
          break;
        case kEnd:
          ended = true;
          break;
        default:
          break;  // unknown: written by a newer atrace, skipped
      }
    } catch (const Malformed&) {
      if (type == kHeader || type == kProbes) fail("damaged trace: malformed " + where);
      warn("damaged trace: malformed " + where + " ignored");
    }
    pos += kSectionHeadSize + static_cast<size_t>(len);
    if (ended) break;
  }

  if (!have_header) fail("truncated trace (recorder stopped before writing the header)");
  if (ended && pos < data.size())
    warn(std::to_string(data.size() - pos) + " bytes after the end of the trace ignored");
  if (!ended) {
    std::string msg = "truncated trace (recorder stopped before finishing): " +
                      std::to_string(events.size()) + " events read";
    if (!have_threads && !have_lost)
      msg += ", thread table and loss counts missing";
    else if (!have_threads)
      msg += ", thread table missing";
    else if (!have_lost)
      msg += ", loss counts missing";
    warn(msg);
  }
  if (!have_threads) threads = threads_from_events(events);
  std::stable_sort(events.begin(), events.end(),
                   [](const Event& a, const Event& b) { return a.ts < b.ts; });
}

TraceReader::TraceReader(const std::string& path) : impl_(std::make_unique<Impl>()) {
  impl_->name = path == "-" ? "stdin" : path;
  std::vector<uint8_t> data = read_all(path, impl_->name);
  impl_->parse(data);
}

TraceReader::~TraceReader() = default;

const TraceHeader& TraceReader::header() const { return impl_->header; }
const std::vector<ProbeInfo>& TraceReader::probes() const { return impl_->probes; }
const std::vector<ThreadInfo>& TraceReader::threads() const { return impl_->threads; }
const LostCounts& TraceReader::lost() const { return impl_->lost; }
const std::vector<std::string>& TraceReader::warnings() const { return impl_->warnings; }
uint64_t TraceReader::event_count() const { return impl_->events.size(); }
uint16_t TraceReader::version_major() const { return impl_->major; }
uint16_t TraceReader::version_minor() const { return impl_->minor; }

bool TraceReader::next(Event& ev) {
  if (impl_->next >= impl_->events.size()) return false;
  ev = impl_->events[impl_->next++];
  return true;
}

void TraceReader::rewind() { impl_->next = 0; }

}  // namespace atrace::fmt
