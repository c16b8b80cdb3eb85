// TraceReader for format 2 (formats/FORMAT.md).
//
// Robustness rules:
//   - not our magic, an older or a newer major version: TraceError, nothing read;
//   - the HEADER frame unreadable: TraceError (nothing can be said without it);
//   - a damaged frame: warning naming it, damaged() set, the rest is read;
//   - no footer (recorder killed, or still writing): blocks found by scanning,
//     thread table rebuilt from the blocks (without names), warning;
//   - unknown frame types and event kinds (newer minor version): skipped,
//     unknown event kinds with one warning per kind.
//
// Events come out of a k-way merge over threads: each thread is a cursor
// over its blocks in file order (events of one thread are in time order
// across its blocks), the cursors sit in a min-heap keyed on their next
// event's timestamp, ties broken by thread so the order is deterministic.
#include "formats/trace_reader.h"

#include <unistd.h>
#include <algorithm>
#include <cstring>
#include <iterator>
#include <map>
#include <optional>

#include "formats/block_codec.h"
#include "formats/block_index.h"
#include "formats/file_source.h"
#include "formats/format_v2.h"
#include "formats/frame.h"
#include "formats/metadata_codec.h"
#include "formats/series.h"

namespace atrace::formats {

using namespace v2;  // NOLINT: the format's constants

namespace {

// Counts the decoded blocks alive, so tests can check the memory bound.
struct BlockGauge {
  uint64_t live = 0, peak = 0;
};

// A decoded block's bytes, counted while they exist.
class DecodedBlock {
 public:
  explicit DecodedBlock(BlockGauge& g) : gauge_(g) {
    if (++gauge_.live > gauge_.peak) gauge_.peak = gauge_.live;
  }
  ~DecodedBlock() { --gauge_.live; }
  DecodedBlock(const DecodedBlock&) = delete;
  DecodedBlock& operator=(const DecodedBlock&) = delete;
  std::vector<uint8_t> raw;

 private:
  BlockGauge& gauge_;
};

// One thread's events, block after block.
struct ThreadStream {
  std::vector<size_t> blocks;  // indices into FileMap::blocks, file order
  size_t next_block = 0;
  std::unique_ptr<DecodedBlock> block;
  BlockCursor cursor;
  size_t current = 0;  // index of the block being decoded
  uint16_t host = 0;
  // A merged trace: its next event's corrected time, never before the one
  // handed out last (the maps round to whole ns at their knots).
  uint64_t next_ts = 0, last_ts = 0;
  // While the stream is in the merge, its cursor has peeked its next event.
};

std::vector<ThreadInfo> threads_from_blocks(const std::vector<IndexEntry>& blocks) {
  std::map<uint64_t, ThreadInfo> by_tid;
  for (const auto& b : blocks) {
    auto [it, fresh] = by_tid.try_emplace(thread_key(b.host, b.tid));
    ThreadInfo& t = it->second;
    if (fresh) {
      t.tid = b.tid;
      t.pid = b.pid;
      t.host = b.host;
      t.first_ts = b.first_ts;
    }
    t.first_ts = std::min(t.first_ts, b.first_ts);
    t.last_ts = std::max(t.last_ts, b.last_ts);
    t.events += b.count;
  }
  std::vector<ThreadInfo> out;
  out.reserve(by_tid.size());
  for (auto& [tid, t] : by_tid) out.push_back(std::move(t));
  return out;
}

}  // namespace

namespace {

// CLOCKS frames add snapshots to one host's list; the identity is the
// first frame's (one recorder writes them all).
void add_clocks(HostClocks& into, HostClocks&& more) {
  if (into.boot_id.empty() && into.host_name.empty()) {
    into.boot_id = std::move(more.boot_id);
    into.machine_id = std::move(more.machine_id);
    into.host_name = std::move(more.host_name);
  }
  for (auto& s : more.snapshots) into.snapshots.push_back(s);
  std::stable_sort(into.snapshots.begin(), into.snapshots.end(),
                   [](const ClockSnapshot& a, const ClockSnapshot& b) {
                     return a.mono_before_ns < b.mono_before_ns;
                   });
}

}  // namespace

struct TraceReader::Impl {
  FileSource src;
  uint16_t major = 0, minor = 0;
  TraceHeader header;
  std::vector<ProbeInfo> probes;
  std::vector<ThreadInfo> threads;
  // By process_key (host and pid): the last entry of each.
  std::map<uint64_t, ProcessInfo> processes;
  std::vector<ProcessInfo> process_list;
  HostClocks clocks;
  std::vector<HostClocks> hosts;           // one per host (Event::host)
  std::optional<Corrections> corrections;  // a merged trace's
  LostCounts lost;
  std::vector<std::string> warnings;
  bool damaged = false;
  std::vector<IndexEntry> blocks;
  uint64_t events = 0;
  // A series of rotated files (formats/series.h): this file's SERIES
  // frame; read from its first file, the files after it (each an Impl of
  // its own, for its source) and which file each block is in.
  std::optional<SeriesInfo> series;
  std::vector<std::unique_ptr<Impl>> parts;
  std::vector<uint16_t> block_file;
  std::vector<std::string> files;
  const FileSource& source_of(size_t block) const {
    const uint16_t f = block < block_file.size() ? block_file[block] : 0;
    return f == 0 ? src : parts[f - 1u]->src;
  }
  // Given a later file: how many of the files before it are there (they
  // are not read: the series is read from the file given on).
  uint32_t earlier_present = 0;
  void read_series(const std::string& first, bool finished);
  void note_earlier_files(const std::string& first);
  void add_part(Impl& part, uint16_t file);

  FrameDecoder decoder;
  Frame frame;  // scratch for block reads
  BlockGauge gauge;
  std::vector<ThreadStream> streams;
  UnknownKindCounts unknown{};
  UnknownKindCounts unknown_warned{};
  std::optional<EventSelection> selection;  // select(): what next() hands out
  // process_key -> base -> module, from the ModuleLoad/ModuleUnload events read.
  std::map<uint64_t, std::map<uint64_t, MappedModule>> modules;
  void track_module(const Event& ev) {
    if (ev.kind == EventKind::ModuleLoad) {
      auto proc = processes.find(process_key(ev));
      modules[process_key(ev)][ev.arg0] = {
          ev.arg0, ev.text, module_build_id(ev),
          proc == processes.end() ? std::string() : proc->second.root};
    } else if (ev.kind == EventKind::ModuleUnload) modules[process_key(ev)].erase(ev.arg0);
  }

  // A raw time stamp of `host` on the trace's time line: itself, or in a
  // merged trace its host's map (docs/merge.md).
  uint64_t corrected(uint16_t host, uint64_t raw) const {
    if (!corrections || host >= corrections->hosts.size()) return raw;
    int64_t t = sync::map_time(corrections->hosts[host].map, static_cast<int64_t>(raw));
    return t < 0 ? 0 : static_cast<uint64_t>(t);
  }
  void apply_corrections();
  // The stream's peeked event's time on the trace's time line.
  uint64_t stream_ts(ThreadStream& s) {
    if (!corrections) return s.cursor.ts();
    s.next_ts = std::max(s.last_ts, corrected(s.host, s.cursor.ts()));
    return s.next_ts;
  }

  explicit Impl(const std::string& path) : src(path) {}

  const std::string& name() const { return src.name(); }
  void warn(const std::string& what) { warnings.push_back(name() + ": " + what); }
  void damage(const std::string& what) {
    damaged = true;
    warn(what);
  }
  [[noreturn]] void fail(const std::string& what) const { throw TraceError(name() + ": " + what); }

  void check_preamble();
  void load_tables(FileMap& map);
  void build_streams();

  // The merge's min-heap of the streams' next timestamps: keys are copied
  // into the heap (no indirection to the streams when comparing) and the top
  // is replaced in place, one sift-down per event.
  struct Key {
    uint64_t ts;
    uint32_t stream;
    bool operator<(const Key& o) const { return ts != o.ts ? ts < o.ts : stream < o.stream; }
  };
  std::vector<Key> heap;

  void sift_down(size_t i) {
    const size_t n = heap.size();
    Key k = heap[i];
    for (;;) {
      size_t c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && heap[c + 1] < heap[c]) c++;
      if (!(heap[c] < k)) break;
      heap[i] = heap[c];
      i = c;
    }
    heap[i] = k;
  }
  // After the top's key changed. With few threads a branch-free scan for
  // the minimum beats the heap: which thread comes next is random, and the
  // heap's branches mispredict.
  void restore_min() {
    const size_t n = heap.size();
    if (n > 8) {
      sift_down(0);
      return;
    }
    size_t best = 0;
    for (size_t i = 1; i < n; i++) best = heap[i] < heap[best] ? i : best;
    std::swap(heap[0], heap[best]);
  }
  void heap_build() {  // with 8 or fewer keys, also a valid start for restore_min()
    for (size_t i = heap.size() / 2; i-- > 0;) sift_down(i);
  }
  bool advance(ThreadStream& s);
  void malformed(ThreadStream& s);
  bool load_next_block(ThreadStream& s);
  void warn_unknown_kinds();
  void start();
};

void TraceReader::Impl::check_preamble() {
  uint8_t pre[kPreambleSize];
  size_t got = src.read_at(0, pre, sizeof pre);
  if (got == 0) fail("empty file, not an atrace trace file");
  if (got < sizeof pre || std::memcmp(pre, kMagic, sizeof kMagic) != 0)
    fail("not an atrace trace file");
  ByteReader r(std::span<const uint8_t>(pre + sizeof kMagic, 4));
  major = r.u16();
  minor = r.u16();
  std::string version = std::to_string(major) + "." + std::to_string(minor);
  std::string ours = std::to_string(kMajor) + "." + std::to_string(kMinor);
  if (major > kMajor)
    fail("trace format version " + version + " is newer than this atrace (" + ours +
         "); update atrace to read it");
  if (major < kMajor)
    fail("trace format version " + version + " is no longer supported (this atrace reads " + ours +
         "); record the trace again");
}

void TraceReader::Impl::load_tables(FileMap& map) {
  bool have_header = false;
  std::vector<std::string> strings;
  for (const auto& t : map.tables) {
    std::string where = " at byte offset " + std::to_string(t.offset);
    try {
      ByteReader in(t.raw);
      switch (t.type) {
        case kFrameHeader:
          if (!have_header) header = decode_header(in);
          have_header = true;
          break;
        case kFrameStrings: decode_strings(in, strings); break;
        case kFrameProbes: {
          auto more = decode_probes(in, strings);
          probes.insert(probes.end(), more.begin(), more.end());
          break;
        }
        case kFrameProcesses:
          for (auto& p : decode_processes(in)) processes[thread_key(p.host, p.pid)] = std::move(p);
          break;
        case kFrameClocks: {
          uint16_t host = 0;
          HostClocks more = decode_clocks(in, &host);
          if (hosts.size() <= host) hosts.resize(host + 1u);
          add_clocks(hosts[host], std::move(more));
          break;
        }
        case kFrameCorrections:
          if (!corrections) corrections = decode_corrections(in);
          break;
        case kFrameSeries: {  // the first says which; a last one may end it
          SeriesInfo more = decode_series(in);
          if (!series) series = more;
          else if (more.id == series->id) series->last = series->last || more.last;
          break;
        }
      }
    } catch (const Malformed&) {
      if (t.type == kFrameSeries) {  // the file still reads alone
        damage("damaged series frame" + where + ": read alone");
        continue;
      }
      if (t.type == kFrameProcesses) {  // names only: the trace reads without them
        damage("damaged process table" + where + ": skipped");
        continue;
      }
      if (t.type == kFrameClocks) {  // evidence for merge only
        damage("damaged clock snapshots" + where + ": skipped");
        continue;
      }
      if (t.type == kFrameCorrections)  // the time line of a merged trace: nothing without it
        fail("damaged trace: malformed clock corrections" + where);
      if (t.type == kFrameHeader) fail("damaged trace: malformed header" + where);
      fail(std::string("damaged trace: malformed ") +
           (t.type == kFrameStrings ? "string table" : "probe table") + where);
    }
  }
  if (!have_header) {
    if (map.damaged_tables) fail("damaged trace: the header is unreadable");
    fail("truncated trace (recorder stopped before writing the header)");
  }
  if (map.damaged_tables) fail("damaged trace: the probe table is unreadable");
  for (const auto& [key, p] : processes) process_list.push_back(p);
  if (hosts.empty()) hosts.emplace_back();
  if (corrections && corrections->hosts.size() > hosts.size())
    hosts.resize(corrections->hosts.size());
  clocks = hosts.front();
  if (map.footer) {
    header = map.footer->header;
    threads = map.footer->threads;
    lost = map.footer->lost;
  } else {
    threads = threads_from_blocks(map.blocks);
  }
}

// A merged trace's blocks and threads are stored with their host's raw
// times (the file is never rewritten); everything the reader hands out is
// on the merged time line. Its header is merge's own, already there.
void TraceReader::Impl::apply_corrections() {
  if (!corrections) return;
  for (auto& b : blocks) {
    b.first_ts = corrected(b.host, b.first_ts);
    b.last_ts = corrected(b.host, b.last_ts);
  }
  for (auto& t : threads) {
    t.first_ts = corrected(t.host, t.first_ts);
    t.last_ts = corrected(t.host, t.last_ts);
  }
}

void TraceReader::Impl::build_streams() {
  std::map<uint64_t, size_t> by_tid;
  for (size_t i = 0; i < blocks.size(); i++) {
    auto [it, fresh] =
        by_tid.try_emplace(thread_key(blocks[i].host, blocks[i].tid), streams.size());
    if (fresh) {
      streams.emplace_back();
      streams.back().host = blocks[i].host;
    }
    streams[it->second].blocks.push_back(i);
    events += blocks[i].count;
  }
}

// Loads the stream's next good block; false when it has no more.
bool TraceReader::Impl::load_next_block(ThreadStream& s) {
  s.block.reset();  // the previous block goes before the next one comes
  while (s.next_block < s.blocks.size()) {
    s.current = s.blocks[s.next_block++];
    const IndexEntry& x = blocks[s.current];
    FrameStatus st = read_frame(source_of(s.current), x.offset, frame);
    s.block = std::make_unique<DecodedBlock>(gauge);
    try {
      if (st != FrameStatus::Ok) throw Malformed{};  // changed since it was verified
      decoder.payload(frame, s.block->raw);
      s.cursor.reset(decode_block_meta(frame.ext()), s.block->raw);
      return true;
    } catch (const Malformed&) {
      damage("damaged block at byte offset " + std::to_string(x.offset) + ": unreadable, skipped");
      s.block.reset();
    }
  }
  return false;
}

// Peeks the stream's next event (its cursor's ts()); false when it has none left.
bool TraceReader::Impl::advance(ThreadStream& s) {
  for (;;) {
    if (s.block) {
      try {
        if (s.cursor.peek(unknown)) return true;
      } catch (const Malformed&) {
        malformed(s);
      }
      warn_unknown_kinds();
    }
    if (!load_next_block(s)) return false;
  }
}

void TraceReader::Impl::malformed(ThreadStream& s) {
  damage("damaged block at byte offset " + std::to_string(blocks[s.current].offset) +
         ": malformed event data after " + std::to_string(s.cursor.decoded()) +
         " events, rest of the block skipped");
  s.block.reset();
}

void TraceReader::Impl::warn_unknown_kinds() {
  for (size_t k = 0; k < unknown.size(); k++) {
    if (!unknown[k] || unknown_warned[k]) continue;
    unknown_warned[k] = 1;
    warn("events of unknown kind " + std::to_string(k) + " skipped (format " +
         std::to_string(major) + "." + std::to_string(minor) + " is newer than this atrace's " +
         std::to_string(kMajor) + "." + std::to_string(kMinor) + ")");
  }
}

void TraceReader::Impl::start() {
  heap.clear();
  modules.clear();
  for (auto& s : streams) {
    s.block.reset();
    s.next_block = 0;
    s.last_ts = 0;
  }
  if (selection) selection->restart();
  for (uint32_t i = 0; i < streams.size(); i++) {
    if (!advance(streams[i])) continue;
    heap.push_back({stream_ts(streams[i]), i});
  }
  heap_build();
}

TraceReader::TraceReader(const std::string& path, Series follow)
    : impl_(std::make_unique<Impl>(path)) {
  Impl& m = *impl_;
  m.check_preamble();
  FileMap map = map_file(m.src);
  m.load_tables(map);
  for (const auto& w : map.warnings) m.warn(w);
  m.damaged = map.damaged;
  m.blocks = std::move(map.blocks);
  m.block_file.assign(m.blocks.size(), 0);
  m.files.push_back(m.name());
  if (m.series && follow == Series::Follow && path != "-" && !m.corrections) {
    // From the first file, or a later one (the earlier ones deleted by
    // --rotate-keep, or left out): the files after it by their names.
    if (auto first = series_first_name(path, m.series->seq)) {
      m.note_earlier_files(*first);
      m.read_series(*first, map.footer.has_value());
    }
  }
  m.apply_corrections();
  m.build_streams();
  m.start();
}

TraceReader::~TraceReader() = default;

// The files after the first, by name (formats/series.h), as long as each
// is the next of this series; what they hold is added to the first's.
void TraceReader::Impl::read_series(const std::string& first, bool finished) {
  for (uint32_t seq = series->seq + 1; !series->last && seq < 65535; ++seq) {
    const std::string next = series_file_name(first, seq);
    if (::access(next.c_str(), F_OK) != 0) {
      // A recorder killed mid-file ends the series there, and says so
      // already (no index); a finished file not marked last lost its next.
      if (finished)
        warn("the series goes on after " + files.back() + " but " + next +
             " is missing: read up to there");
      return;
    }
    auto part = std::make_unique<Impl>(next);
    part->check_preamble();
    FileMap map = map_file(part->src);
    part->load_tables(map);
    for (const auto& w : map.warnings) part->warn(w);
    part->damaged = part->damaged || map.damaged;
    part->blocks = std::move(map.blocks);
    if (!part->series || part->series->id != series->id || part->series->seq != seq) {
      warn(next + " is not file " + std::to_string(seq) + " of this series: read up to " +
           files.back());
      return;
    }
    finished = map.footer.has_value();
    series->last = part->series->last;
    add_part(*part, static_cast<uint16_t>(parts.size() + 1));
    files.push_back(next);
    parts.push_back(std::move(part));
  }
}

// A series read from a later file lacks the calls begun before it: one
// line says so (their exits are orphans, never calls of their own).
void TraceReader::Impl::note_earlier_files(const std::string& first) {
  const uint32_t k = series->seq;
  if (k == 0) return;
  for (uint32_t seq = 0; seq < k; ++seq)
    earlier_present += ::access(series_file_name(first, seq).c_str(), F_OK) == 0;
  const std::string range = k == 1 ? "file 0" : "files 0 to " + std::to_string(k - 1);
  const std::string from = "file " + std::to_string(k) + " of a series";
  if (earlier_present == 0)
    warn(from + ", whose " + range + " are missing (--rotate-keep?): read from here on, " +
         "without the calls begun before it");
  else
    warn(from + ": read from here on, without its " + range + " (" +
         std::to_string(earlier_present) + " of " + std::to_string(k) + " present; -i " + first +
         " reads them all)");
}

// One recording: the probe ids mean the same in every file (a file's table
// holds the probes attached so far), a process or thread is the same one.
void TraceReader::Impl::add_part(Impl& part, uint16_t file) {
  warnings.insert(warnings.end(), part.warnings.begin(), part.warnings.end());
  damaged = damaged || part.damaged;
  std::map<uint32_t, size_t> ids;
  for (size_t i = 0; i < probes.size(); i++) ids[probes[i].id] = i;
  for (const auto& p : part.probes) {
    auto it = ids.find(p.id);
    if (it == ids.end()) {
      ids[p.id] = probes.size();
      probes.push_back(p);
    } else if (probes[it->second].name != p.name || probes[it->second].path != p.path) {
      fail("not one recording: probe " + std::to_string(p.id) + " is " + p.name + " in " +
           part.name() + " but " + probes[it->second].name + " before");
    }
  }
  for (auto& [key, p] : part.processes) processes[key] = p;
  process_list.clear();
  for (const auto& [key, p] : processes) process_list.push_back(p);
  for (size_t h = 0; h < part.hosts.size(); h++) {
    if (hosts.size() <= h) hosts.resize(h + 1);
    add_clocks(hosts[h], HostClocks(part.hosts[h]));
  }
  clocks = hosts.front();
  std::map<uint64_t, size_t> by_key;
  for (size_t i = 0; i < threads.size(); i++)
    by_key[thread_key(threads[i].host, threads[i].tid)] = i;
  for (const auto& t : part.threads) {
    auto it = by_key.find(thread_key(t.host, t.tid));
    if (it == by_key.end()) {
      by_key[thread_key(t.host, t.tid)] = threads.size();
      threads.push_back(t);
      continue;
    }
    ThreadInfo& into = threads[it->second];
    into.first_ts = std::min(into.first_ts, t.first_ts);
    into.last_ts = std::max(into.last_ts, t.last_ts);
    into.events += t.events;
    into.pid = t.pid;
    if (!t.name.empty()) into.name = t.name;
  }
  if (lost.per_cpu.size() < part.lost.per_cpu.size()) lost.per_cpu.resize(part.lost.per_cpu.size());
  for (size_t c = 0; c < part.lost.per_cpu.size(); c++) lost.per_cpu[c] += part.lost.per_cpu[c];
  // The recording ends where its last file does.
  header.end_mono_ns = part.header.end_mono_ns;
  header.end_real_ns = part.header.end_real_ns;
  for (const auto& b : part.blocks) {
    blocks.push_back(b);
    block_file.push_back(file);
  }
}

const TraceHeader& TraceReader::header() const { return impl_->header; }
const std::vector<ProbeInfo>& TraceReader::probes() const { return impl_->probes; }
const std::vector<ThreadInfo>& TraceReader::threads() const { return impl_->threads; }
const LostCounts& TraceReader::lost() const { return impl_->lost; }
const std::vector<ProcessInfo>& TraceReader::processes() const { return impl_->process_list; }
const HostClocks& TraceReader::clocks() const { return impl_->clocks; }
const std::vector<HostClocks>& TraceReader::hosts() const { return impl_->hosts; }
const Corrections* TraceReader::corrections() const {
  return impl_->corrections ? &*impl_->corrections : nullptr;
}
const ProcessInfo* TraceReader::process(uint32_t pid, uint16_t host) const {
  auto it = impl_->processes.find(thread_key(host, pid));
  return it == impl_->processes.end() ? nullptr : &it->second;
}
const std::vector<std::string>& TraceReader::warnings() const { return impl_->warnings; }
bool TraceReader::damaged() const { return impl_->damaged; }
uint64_t TraceReader::event_count() const { return impl_->events; }
uint16_t TraceReader::version_major() const { return impl_->major; }
uint16_t TraceReader::version_minor() const { return impl_->minor; }
const std::vector<std::string>& TraceReader::files() const { return impl_->files; }
const SeriesInfo* TraceReader::series() const { return impl_->series ? &*impl_->series : nullptr; }
uint32_t TraceReader::series_earlier_present() const { return impl_->earlier_present; }
uint64_t TraceReader::block_count() const { return impl_->blocks.size(); }
uint64_t TraceReader::live_blocks() const { return impl_->gauge.live; }
uint64_t TraceReader::peak_live_blocks() const { return impl_->gauge.peak; }

void TraceReader::select(const EventFilter& filter) {
  Impl& m = *impl_;
  m.selection.emplace(filter, m.header, m.probes, m.threads, m.process_list, m.hosts);
  // Every thread is still read: the module events of one left out tell
  // where the code of the others is (module_at).
  std::erase_if(m.threads, [&](const ThreadInfo& t) {
    return !m.selection->thread_selected(t.tid, t.pid, t.host);
  });
  m.header.end_mono_ns = m.selection->end_ns(m.header.end_mono_ns);
  m.start();
}

bool TraceReader::next(Event& ev) {
  while (next_stored(ev)) {
    if (ev.kind == EventKind::ModuleLoad || ev.kind == EventKind::ModuleUnload)
      impl_->track_module(ev);
    if (!impl_->selection || impl_->selection->keep(ev)) return true;
  }
  return false;
}

const MappedModule* TraceReader::module_at(uint32_t pid, uint64_t address, uint16_t host) const {
  auto p = impl_->modules.find(thread_key(host, pid));
  if (p == impl_->modules.end()) return nullptr;
  auto m = p->second.upper_bound(address);
  if (m == p->second.begin()) return nullptr;
  return &std::prev(m)->second;
}

bool TraceReader::next_stored(Event& ev) {
  Impl& m = *impl_;
  while (!m.heap.empty()) {
    ThreadStream& s = m.streams[m.heap.front().stream];
    bool good = true;
    try {
      s.cursor.take(ev);  // straight into the caller's event
      if (m.corrections) ev.ts = s.last_ts = s.next_ts;
    } catch (const Malformed&) {
      m.malformed(s);
      good = false;
    }
    if (m.advance(s)) {
      m.heap.front().ts = m.stream_ts(s);
    } else {
      m.heap.front() = m.heap.back();
      m.heap.pop_back();
      if (m.heap.empty()) return good;
    }
    m.restore_min();
    if (good) return true;
  }
  return false;
}

void TraceReader::rewind() { impl_->start(); }

}  // namespace atrace::formats
