#include "formats/metadata_codec.h"

namespace atrace::formats {
namespace {

const std::string& string_at(const std::vector<std::string>& strings, uint64_t id) {
  if (id >= strings.size()) throw Malformed{};
  return strings[static_cast<size_t>(id)];
}

}  // namespace

void encode_header(const TraceHeader& h, ByteWriter& out) {
  out.varint(h.clock_id);
  out.u64(h.start_mono_ns);
  out.u64(h.start_real_ns);
  out.u32(h.target_pid);
  out.str(h.host);
  out.str(h.kernel);
  out.str(h.atrace_version);
  out.str(h.command_line);
  out.str(h.target_command);
  out.str(h.kernel_events);          // 2.0: appended field (older readers skip it)
  out.varint(h.probe_cost_nop5_ns);  // appended after kernel_events, likewise
  out.varint(h.probe_cost_emulated_ns);
  out.varint(h.probe_cost_singlestep_ns);
  out.varint(h.kernel_limits.size());  // appended after the probe costs, likewise
  for (const auto& l : h.kernel_limits) out.str(l);
  out.varint(h.probe_inside_nop5_ns);  // appended after kernel_limits, likewise
  out.varint(h.probe_inside_emulated_ns);
  out.varint(h.probe_inside_singlestep_ns);
}

TraceHeader decode_header(ByteReader in) {
  TraceHeader h;
  h.clock_id = in.varint32();
  h.start_mono_ns = in.u64();
  h.start_real_ns = in.u64();
  h.target_pid = in.u32();
  h.host = in.str();
  h.kernel = in.str();
  h.atrace_version = in.str();
  h.command_line = in.str();
  h.target_command = in.str();
  if (!in.empty()) h.kernel_events = in.str();  // absent in files of early 2.0 writers
  if (!in.empty()) {  // absent before probe-cost calibration: left 0 (not measured)
    h.probe_cost_nop5_ns = in.varint();
    h.probe_cost_emulated_ns = in.varint();
    h.probe_cost_singlestep_ns = in.varint();
  }
  if (!in.empty()) {  // absent before kernel feature detection: none known
    const uint64_t n = in.varint();
    for (uint64_t i = 0; i < n && !in.empty(); ++i) h.kernel_limits.push_back(in.str());
  }
  if (!in.empty()) {  // absent before the inside costs were calibrated: not measured
    h.probe_inside_nop5_ns = in.varint();
    h.probe_inside_emulated_ns = in.varint();
    h.probe_inside_singlestep_ns = in.varint();
  }
  return h;
}

uint32_t StringInterner::id(const std::string& s) {
  auto [it, fresh] = ids_.try_emplace(s, next_);
  if (fresh) {
    next_++;
    pending_.push_back(s);
  }
  return it->second;
}

bool StringInterner::flush(ByteWriter& out) {
  if (pending_.empty()) return false;
  out.varint(flushed_);
  out.varint(pending_.size());
  for (const auto& s : pending_) out.str(s);
  flushed_ = next_;
  pending_.clear();
  return true;
}

void decode_strings(ByteReader in, std::vector<std::string>& table) {
  if (in.varint() != table.size()) throw Malformed{};
  uint64_t n = in.varint();
  if (n > in.left()) throw Malformed{};  // each string takes at least a byte
  for (uint64_t i = 0; i < n; i++) table.push_back(in.str());
}

void encode_probes(const std::vector<ProbeInfo>& probes, StringInterner& strings, ByteWriter& out) {
  out.varint(probes.size());
  for (const auto& p : probes) {
    entry(out, [&](ByteWriter& e) {
      e.varint(p.id);
      e.u8(static_cast<uint8_t>(p.kind));
      e.u8(static_cast<uint8_t>(p.path_kind));
      e.u64(p.address);
      e.u64(p.offset);
      e.varint(strings.id(p.name));
      e.varint(strings.id(p.module));
      e.varint(strings.id(p.path));
      e.varint(strings.id(p.build_id));
      e.varint(p.entry_delta);       // appended after the first 2.0 writers
      e.varint(p.arg_names.size());  // appended with --args=FUNC@auto
      for (const auto& n : p.arg_names) e.varint(strings.id(n));
    });
  }
}

std::vector<ProbeInfo> decode_probes(ByteReader in, const std::vector<std::string>& strings) {
  uint64_t n = in.varint();
  if (n > in.left()) throw Malformed{};
  std::vector<ProbeInfo> out(static_cast<size_t>(n));
  for (auto& p : out) {
    ByteReader e(in.take(in.varint()));
    p.id = e.varint32();
    p.kind = static_cast<ProbeKind>(e.u8());
    p.path_kind = static_cast<ProbePath>(e.u8());
    p.address = e.u64();
    p.offset = e.u64();
    p.name = string_at(strings, e.varint());
    p.module = string_at(strings, e.varint());
    p.path = string_at(strings, e.varint());
    p.build_id = string_at(strings, e.varint());
    if (e.left()) p.entry_delta = e.varint();  // older writers end before it
    if (e.left()) {
      uint64_t names = e.varint();
      if (names > kMaxFuncArgs) throw Malformed{};
      for (uint64_t i = 0; i < names; i++) p.arg_names.push_back(string_at(strings, e.varint()));
    }
  }
  return out;
}

void encode_processes(const std::vector<ProcessInfo>& processes, ByteWriter& out) {
  out.varint(processes.size());
  for (const auto& p : processes) {
    entry(out, [&](ByteWriter& e) {
      e.varint(p.pid);
      e.varint(p.ns_pid);
      e.varint(p.pid_ns);
      e.varint(p.mnt_ns);
      e.str(p.cgroup);
      e.str(p.name);
      e.str(p.root);
      if (p.host) e.varint(p.host);  // merged traces only (atrace merge)
    });
  }
}

std::vector<ProcessInfo> decode_processes(ByteReader in) {
  uint64_t n = in.varint();
  if (n > in.left()) throw Malformed{};  // each entry takes at least a byte
  std::vector<ProcessInfo> out(static_cast<size_t>(n));
  for (auto& p : out) {
    ByteReader e(in.take(in.varint()));
    p.pid = e.varint32();
    p.ns_pid = e.varint32();
    p.pid_ns = e.varint();
    p.mnt_ns = e.varint();
    p.cgroup = e.str();
    p.name = e.str();
    p.root = e.str();
    if (!e.empty()) p.host = static_cast<uint16_t>(e.varint32());
  }
  return out;
}

void encode_clocks(const HostClocks& c, ByteWriter& out, uint16_t host) {
  out.str(c.boot_id);
  out.str(c.machine_id);
  out.str(c.host_name);
  out.varint(c.snapshots.size());
  for (const auto& s : c.snapshots) {
    entry(out, [&](ByteWriter& e) {
      e.varint(static_cast<uint8_t>(s.when));
      e.varint(s.mono_before_ns);
      e.varint(s.mono_after_ns - s.mono_before_ns);
      e.varint(s.real_ns);
      e.varint(s.boot_ns);
      e.varint(s.maxerror_us);
      e.varint(s.esterror_us);
      e.varint(s.status);
      e.svarint(s.freq);
      e.varint(s.synchronised ? 1 : 0);
    });
  }
  if (host) out.varint(host);  // merged traces only (atrace merge)
}

HostClocks decode_clocks(ByteReader in, uint16_t* host) {
  HostClocks c;
  c.boot_id = in.str();
  c.machine_id = in.str();
  c.host_name = in.str();
  uint64_t n = in.varint();
  if (n > in.left()) throw Malformed{};  // each entry takes at least a byte
  c.snapshots.resize(static_cast<size_t>(n));
  for (auto& s : c.snapshots) {
    ByteReader e(in.take(in.varint()));
    const uint64_t when = e.varint();
    if (when > static_cast<uint8_t>(ClockSnapshot::When::Stop)) throw Malformed{};
    s.when = static_cast<ClockSnapshot::When>(when);
    s.mono_before_ns = e.varint();
    s.mono_after_ns = s.mono_before_ns + e.varint();
    s.real_ns = e.varint();
    s.boot_ns = e.varint();
    s.maxerror_us = e.varint();
    s.esterror_us = e.varint();
    s.status = e.varint32();
    s.freq = e.svarint();
    s.synchronised = e.varint() != 0;
  }
  if (host) *host = in.empty() ? 0 : static_cast<uint16_t>(in.varint32());
  return c;
}

void encode_footer(const Footer& f, ByteWriter& out) {
  out.u64(f.header.end_mono_ns);
  out.u64(f.header.end_real_ns);
  entry(out, [&](ByteWriter& e) { encode_header(f.header, e); });
  out.varint(f.lost.per_cpu.size());
  for (auto n : f.lost.per_cpu) out.varint(n);
  out.varint(f.threads.size());
  for (const auto& t : f.threads) {
    entry(out, [&](ByteWriter& e) {
      e.varint(t.tid);
      e.varint(t.pid);
      e.varint(t.first_ts);
      e.varint(t.last_ts);
      e.varint(t.events);
      e.str(t.name);
      if (t.host) e.varint(t.host);  // merged traces only (atrace merge)
    });
  }
  out.varint(f.index.size());
  for (const auto& x : f.index) {
    out.u64(x.offset);
    out.u8(x.type);
    out.u32(x.tid);
    out.u32(x.pid);
    out.u32(x.count);
    out.u64(x.first_ts);
    out.u64(x.last_ts);
  }
}

Footer decode_footer(ByteReader in, uint64_t max_frames) {
  Footer f;
  uint64_t end_mono = in.u64(), end_real = in.u64();
  f.header = decode_header(ByteReader(in.take(in.varint())));
  f.header.end_mono_ns = end_mono;
  f.header.end_real_ns = end_real;
  uint64_t ncpu = in.varint();
  if (ncpu > in.left()) throw Malformed{};
  f.lost.per_cpu.resize(static_cast<size_t>(ncpu));
  for (auto& n : f.lost.per_cpu) n = in.varint();
  uint64_t nthreads = in.varint();
  if (nthreads > in.left()) throw Malformed{};
  f.threads.resize(static_cast<size_t>(nthreads));
  for (auto& t : f.threads) {
    ByteReader e(in.take(in.varint()));
    t.tid = e.varint32();
    t.pid = e.varint32();
    t.first_ts = e.varint();
    t.last_ts = e.varint();
    t.events = e.varint();
    t.name = e.str();
    if (!e.empty()) t.host = static_cast<uint16_t>(e.varint32());
  }
  uint64_t nindex = in.varint();
  if (nindex > in.left() / 37 || nindex > max_frames) throw Malformed{};
  f.index.resize(static_cast<size_t>(nindex));
  for (auto& x : f.index) {
    x.offset = in.u64();
    x.type = in.u8();
    x.tid = in.u32();
    x.pid = in.u32();
    x.count = in.u32();
    x.first_ts = in.u64();
    x.last_ts = in.u64();
  }
  return f;
}

}  // namespace atrace::formats
