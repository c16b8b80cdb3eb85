// `atrace info`: what a trace file holds, without analysing it: who recorded
// what, where and when, the probe table (with the path each probe takes in
// the kernel, the main factor of its cost), the relevance filters' decisions,
// threads, processes, lost events, and the host's clocks (what `merge`
// corrects by); `--format=json` for programs.
#include <array>
#include <cinttypes>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/diagnostics.h"
#include "base/plural.h"
#include "formats/trace_reader.h"
#include "output/output.h"
#include "record/record.h"
#include "sync/sync.h"
#include "tools/commands.h"

namespace atrace::tools {
namespace {

using json = nlohmann::ordered_json;

// "2024-05-01T12:00:00.123+02:00" in the local time zone.
std::string iso8601_local(uint64_t real_ns) {
  if (real_ns == 0) return "unknown";
  time_t secs = static_cast<time_t>(real_ns / 1000000000);
  struct tm tm;
  if (!localtime_r(&secs, &tm)) return "unknown";
  char date[32], zone[8];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
  std::strftime(zone, sizeof zone, "%z", &tm);  // +0200
  std::string z = zone;
  if (z.size() == 5) z.insert(3, ":");
  char ms[8];
  std::snprintf(ms, sizeof ms, ".%03u", static_cast<unsigned>(real_ns / 1000000 % 1000));
  return std::string(date) + ms + z;
}

void print_header(const formats::TraceReader& r, const std::string& input) {
  const auto& h = r.header();
  std::printf("Trace file:      %s (format %u.%u)\n", input.c_str(), r.version_major(),
              r.version_minor());
  std::printf("atrace version:  %s\n", h.atrace_version.c_str());
  std::printf("Recorded with:   %s\n", h.command_line.c_str());
  std::printf("Target:          %s (pid %u)\n",
              h.target_command.empty() ? "?" : h.target_command.c_str(), h.target_pid);
  std::printf("Host:            %s, kernel %s\n", h.host.c_str(), h.kernel.c_str());
  std::printf("Clock:           %s\n", h.clock_id == 1
                                           ? "CLOCK_MONOTONIC"
                                           : ("clock id " + std::to_string(h.clock_id)).c_str());
  std::printf("Started:         %s\n", iso8601_local(h.start_real_ns).c_str());
  // Calibrated by the recorder at start (record/calibrate.h); 0: not measured.
  if (h.probe_cost_nop5_ns || h.probe_cost_emulated_ns || h.probe_cost_singlestep_ns)
    std::printf("Probe cost:      %" PRIu64 " ns nop5, %" PRIu64 " ns emulated, %" PRIu64
                " ns single-step (per call: entry + return)\n",
                h.probe_cost_nop5_ns, h.probe_cost_emulated_ns, h.probe_cost_singlestep_ns);
  else std::printf("Probe cost:      not measured\n");
  // What the recording kernel lacked (record/features.h).
  for (const auto& l : h.kernel_limits) std::printf("Kernel limit:    %s\n", l.c_str());
}

// A series of rotated files (`record --rotate`, docs/recording-long.md):
// which files were read as one recording, and of the file given, which
// number it is and whether the files before it (not read) are there.
struct SeriesFacts {
  uint64_t id = 0;
  uint32_t first_seq = 0, last_seq = 0;  // of the files read
  std::vector<std::string> files;        // read, in order
  uint64_t bytes = 0;                    // their sizes, summed
  bool ends = false;                     // the last read is the recording's last
  uint32_t earlier_present = 0;          // of files 0 .. first_seq-1 (not read)
  std::string first_name;                // file 0's name ("" unknown)
  uint64_t recording_start_real_ns = 0;
};

std::optional<SeriesFacts> series_facts(const formats::TraceReader& r, const std::string& input) {
  const formats::SeriesInfo* s = r.series();
  if (!s) return std::nullopt;
  SeriesFacts f;
  f.id = s->id;
  f.first_seq = s->seq;
  f.files = r.files();
  f.last_seq = s->seq + static_cast<uint32_t>(f.files.size()) - 1;
  f.ends = s->last;
  f.earlier_present = r.series_earlier_present();
  f.first_name = formats::series_first_name(input, s->seq).value_or("");
  f.recording_start_real_ns = s->start_real_ns;
  for (const auto& file : f.files) {
    std::error_code ec;
    const auto n = std::filesystem::file_size(file, ec);
    if (!ec) f.bytes += n;
  }
  return f;
}

std::string hex_id(uint64_t id) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, id);
  return buf;
}

std::string seq_range(uint32_t a, uint32_t b) {
  return a == b ? std::to_string(a) : std::to_string(a) + " to " + std::to_string(b);
}

void print_series(const std::optional<SeriesFacts>& f) {
  if (!f) return;
  const std::string more = f->files.size() > 1 ? " ... " + f->files.back() : "";
  std::printf("Series:          %s, %s read as one recording (file %s: %s%s), %" PRIu64 " bytes\n",
              hex_id(f->id).c_str(), base::plural(f->files.size(), "file").c_str(),
              seq_range(f->first_seq, f->last_seq).c_str(), f->files.front().c_str(), more.c_str(),
              f->bytes);
  if (!f->ends)
    std::printf("                 the recording goes on after file %u: its next file is missing\n",
                f->last_seq);
  if (f->first_seq == 0) return;
  const std::string earlier = seq_range(0, f->first_seq - 1);
  if (f->earlier_present == 0)
    std::printf(
        "Earlier files:   %s missing (deleted by --rotate-keep?): calls begun there are "
        "not in this reading\n",
        earlier.c_str());
  else
    std::printf("Earlier files:   %s not read, %u of %u present (-i %s reads from the first)\n",
                earlier.c_str(), f->earlier_present, f->first_seq, f->first_name.c_str());
  std::printf("Recording began: %s\n", iso8601_local(f->recording_start_real_ns).c_str());
}

json series_json(const SeriesFacts& f) {
  return {{"id", hex_id(f.id)},
          {"file_number", f.first_seq},
          {"last_file_number", f.last_seq},
          {"files", f.files},
          {"bytes", f.bytes},
          {"ends", f.ends},
          {"earlier_files", f.first_seq},
          {"earlier_files_present", f.earlier_present},
          {"first_file", f.first_name},
          {"recording_start_real_ns", f.recording_start_real_ns}};
}

// Duration from the header's clocks, or at least up to the last event when
// the end was never written.
void print_duration(formats::TraceReader& r) {
  const auto& h = r.header();
  if (h.end_mono_ns > h.start_mono_ns) {
    std::printf("Duration:        %s\n",
                analysis::format_duration(h.end_mono_ns - h.start_mono_ns).c_str());
    return;
  }
  uint64_t last = 0;
  formats::Event ev;
  r.rewind();
  while (r.next(ev)) last = ev.ts;
  r.rewind();
  if (last > h.start_mono_ns && h.start_mono_ns)
    std::printf("Duration:        at least %s (end not recorded)\n",
                analysis::format_duration(last - h.start_mono_ns).c_str());
  else std::printf("Duration:        unknown (end not recorded)\n");
}

// Events per kind need a pass over the events (streamed: bounded memory);
// the relevance filters' decisions (DETACH, a handful) are kept from it.
void print_events(formats::TraceReader& r, std::vector<formats::Event>& detached) {
  std::printf("Events:          %" PRIu64 "\n", r.event_count());
  std::printf("Kernel events:   %s\n",
              r.header().kernel_events.empty() ? "none" : r.header().kernel_events.c_str());
  std::array<uint64_t, 64> per_kind{};
  formats::Event ev;
  r.rewind();
  while (r.next(ev)) {
    per_kind[static_cast<uint8_t>(ev.kind) & 63]++;
    if (ev.kind == formats::EventKind::Detach) detached.push_back(ev);
  }
  r.rewind();
  std::string kinds;
  for (size_t k = 0; k < per_kind.size(); k++)
    if (per_kind[k])
      kinds += (kinds.empty() ? "" : ", ") +
               std::string(formats::to_string(static_cast<formats::EventKind>(k))) + " " +
               std::to_string(per_kind[k]);
  if (!kinds.empty()) std::printf("By kind:         %s\n", kinds.c_str());
  const auto& lost = r.lost();
  if (lost.per_cpu.empty()) {
    std::printf("Lost events:     not recorded\n");
    return;
  }
  std::printf("Lost events:     %" PRIu64, lost.total());
  if (lost.total()) {
    std::printf(" (");
    const char* sep = "";
    for (size_t cpu = 0; cpu < lost.per_cpu.size(); cpu++) {
      if (!lost.per_cpu[cpu]) continue;
      std::printf("%scpu%zu: %" PRIu64, sep, cpu, lost.per_cpu[cpu]);
      sep = ", ";
    }
    std::printf(")");
  }
  std::printf("\n");
}

void print_probes(const formats::TraceReader& r) {
  // The entry path is the main factor of a probe's cost: say how many take
  // the fast one (docs/fast-path.md).
  size_t fast = 0;
  for (const auto& p : r.probes()) fast += p.path_kind == formats::ProbePath::Nop5;
  std::printf("\nProbes: %zu (%zu on the fast nop5 path)\n", r.probes().size(), fast);
  if (r.probes().empty()) return;
  // Path: where a function's probe sat (bytes past its first instruction)
  // and how the kernel ran it there.
  std::printf("  %6s  %-8s  %-15s  %18s  %-20s  %s\n", "ID", "Kind", "Path", "Address", "Module",
              "Name");
  for (const auto& p : r.probes()) {
    std::string path = p.kind == formats::ProbeKind::Function
                           ? formats::probe_place(p.path_kind, p.entry_delta)
                           : formats::to_string(p.path_kind);
    std::printf("  %6u  %-8s  %-15s  %#18" PRIx64 "  %-20s  %s\n", p.id, formats::to_string(p.kind),
                path.c_str(), p.address, p.module.c_str(), p.name.c_str());
  }
}

// The relevance filters' decisions, in time order: when (since the start
// of the recording), which rule, and the function's calls and mean so far.
void print_detached(const formats::TraceReader& r, const std::vector<formats::Event>& detached) {
  std::printf("\nDetached: %zu\n", detached.size());
  if (detached.empty()) return;
  std::map<uint32_t, const formats::ProbeInfo*> probes;
  for (const auto& p : r.probes()) probes[p.id] = &p;
  uint64_t start = r.header().start_mono_ns;
  std::printf("  %10s  %-9s  %10s  %10s  %6s  %s\n", "After", "Rule", "Calls", "Mean", "ID",
              "Function");
  for (const auto& d : detached) {
    auto p = probes.find(d.id);
    std::string name = p == probes.end() ? "<probe " + std::to_string(d.id) + ">"
                                         : p->second->name + " [" + p->second->module + "]";
    std::printf("  %10s  %-9s  %10" PRIu64 "  %10s  %6u  %s\n",
                analysis::format_duration(start && d.ts > start ? d.ts - start : 0).c_str(),
                formats::to_string(formats::detach_reason(d.flags)), d.arg0,
                analysis::format_duration(d.arg0 ? d.arg1 / d.arg0 : 0).c_str(), d.id,
                name.c_str());
  }
}

void print_threads(const formats::TraceReader& r) {
  std::printf("\nThreads: %zu\n", r.threads().size());
  if (r.threads().empty()) return;
  // A merged trace's tids repeat across hosts: the host is part of the name.
  const bool hosts = r.hosts().size() > 1;
  if (hosts) std::printf("  %4s", "HOST");
  std::printf("  %8s  %8s  %10s  %s\n", "TID", "PID", "Events", "Name");
  for (const auto& t : r.threads()) {
    if (hosts) std::printf("  %4u", t.host);
    std::printf("  %8u  %8u  %10" PRIu64 "  %s\n", t.tid, t.pid, t.events, t.name.c_str());
  }
}

// The process table (formats/FORMAT.md, PROCESSES): pids in their own
// namespace, namespaces, cgroups; absent in files of earlier atraces.
void print_processes(const formats::TraceReader& r) {
  if (r.processes().empty()) return;
  std::printf("\nProcesses: %zu\n", r.processes().size());
  const bool hosts = r.hosts().size() > 1;
  if (hosts) std::printf("  %4s", "HOST");
  std::printf("  %8s  %8s  %10s  %10s  %s\n", "PID", "NS PID", "PID NS", "MNT NS", "Cgroup");
  for (const auto& p : r.processes()) {
    if (hosts) std::printf("  %4u", p.host);
    std::printf("  %8u  %8u  %10" PRIu64 "  %10" PRIu64 "  %s", p.pid, p.ns_pid, p.pid_ns, p.mnt_ns,
                p.cgroup.c_str());
    if (!p.name.empty()) std::printf(" (%s)", analysis::container_label(p).c_str());
    if (!p.root.empty()) std::printf(", root %s", p.root.c_str());
    std::printf("\n");
  }
}

// The host and its clocks (formats::HostClocks): what `atrace merge`
// corrects by; absent in files of earlier atraces.
void print_clocks(const formats::TraceReader& r) {
  const auto& c = r.clocks();
  const auto s = analysis::summarize_clocks(c);
  if (!s) return;
  std::printf("\nHost identity:   %s, boot %s, machine %s\n", c.host_name.c_str(),
              c.boot_id.empty() ? "unknown" : c.boot_id.c_str(),
              c.machine_id.empty() ? "unknown" : c.machine_id.c_str());
  std::printf("Clock snapshots: %zu (%s%zu every second%s), MONOTONIC brackets %s to %s\n",
              s->snapshots, s->has_start ? "start, " : "", s->periodic, s->has_stop ? ", stop" : "",
              analysis::format_duration(s->min_width_ns).c_str(),
              analysis::format_duration(s->max_width_ns).c_str());
  if (s->real_drift_ppm)
    std::printf("REALTIME:        moved %+.1f us against MONOTONIC over %s (%+.2f ppm)\n",
                static_cast<double>(*s->real_drift_ns) / 1e3,
                analysis::format_duration(s->span_ns).c_str(), *s->real_drift_ppm);
  std::printf("Kernel NTP:      %s, max error %.3f ms, estimated error %.3f ms (adjtimex)\n",
              s->synchronised ? "synchronised" : "unsynchronised",
              static_cast<double>(s->maxerror_us) / 1e3, static_cast<double>(s->esterror_us) / 1e3);
}

// The name a merged trace's host goes by in the sync report: its host
// name, and its file where two recordings share one.
std::string host_label(const formats::TraceReader& r, uint32_t host) {
  const auto& hosts = r.hosts();
  std::string name = host < hosts.size() ? hosts[host].host_name : "";
  if (name.empty()) name = "host " + std::to_string(host);
  return name;
}

std::string bound_text(int64_t ns) {
  if (ns == sync::kUnbounded) return "none";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f us", static_cast<double>(ns) / 1e3);
  return buf;
}

// A merged trace (atrace merge): its recordings and how their clocks were
// put on one time line (docs/merge.md, "Reading the sync report").
void print_sync(const formats::TraceReader& r) {
  const formats::Corrections* c = r.corrections();
  if (!c) return;
  std::printf("\nMerged hosts:    %zu, on the time line of host %u (%s)%s\n", c->hosts.size(),
              c->reference, host_label(r, c->reference).c_str(),
              c->estimated ? "; recordings of one boot estimated (--estimate)" : "");
  std::printf("  %4s  %-16s  %-36s  %s\n", "HOST", "NAME", "BOOT", "FILE: COMMAND");
  for (uint32_t h = 0; h < c->hosts.size(); h++) {
    const auto& m = c->hosts[h];
    const std::string boot = h < r.hosts().size() ? r.hosts()[h].boot_id : "";
    std::printf("  %4u  %-16s  %-36s  %s: %s%s\n", h, host_label(r, h).c_str(),
                boot.empty() ? "unknown" : boot.c_str(), m.source.c_str(), m.command.c_str(),
                m.connected ? "" : " (no evidence links it: uncorrected)");
  }
  std::printf("\nClock sync:      %" PRIu64
              " messages matched between hosts; each receive kept at least %s after its send\n",
              c->messages, bound_text(c->min_delay_ns).c_str());
  std::printf("  %-7s  %-9s  %8s  %14s  %10s  %14s  %-11s  %10s  %5s  %14s\n", "PAIR", "METHOD",
              "MESSAGES", "OFFSET ns", "DRIFT ppm", "BOUND", "QUALITY", "VIOLATIONS", "AFTER",
              "LARGEST SHIFT");
  for (const auto& p : c->pairs) {
    const std::string pair = std::to_string(p.a) + " - " + std::to_string(p.b);
    const char* note = p.in_tree           ? ""
                       : p.loop_consistent ? "  (not in the tree)"
                                           : "  (not in the tree; its loop does not close)";
    std::printf("  %-7s  %-9s  %8zu  %14lld  %10.3f  %14s  %-11s  %10zu  %5zu  %14s%s\n",
                pair.c_str(), sync::method_name(p.method), p.messages,
                static_cast<long long>(p.offset_ns), p.drift_ppm, bound_text(p.bound_ns).c_str(),
                sync::quality_name(p.quality), p.violations_before, p.violations_after,
                bound_text(p.largest_shift_ns).c_str(), note);
  }
  std::printf(
      "  OFFSET and DRIFT map the second host's clock onto the first's; BOUND is how far a\n"
      "  corrected time may be from the truth; VIOLATIONS: receives before their sends\n"
      "  after the clock correction, AFTER: after the causal repair (docs/merge.md).\n");
}

json sync_json(const formats::TraceReader& r) {
  const formats::Corrections* c = r.corrections();
  json j;
  j["reference"] = c->reference;
  j["estimated"] = c->estimated;
  j["messages"] = c->messages;
  j["min_delay_ns"] = c->min_delay_ns;
  json hosts = json::array();
  for (uint32_t h = 0; h < c->hosts.size(); h++) {
    const auto& m = c->hosts[h];
    hosts.push_back({{"host", h},
                     {"name", host_label(r, h)},
                     {"boot_id", h < r.hosts().size() ? r.hosts()[h].boot_id : ""},
                     {"file", m.source},
                     {"command", m.command},
                     {"kernel", m.kernel},
                     {"parent", m.parent},
                     {"connected", m.connected},
                     {"segments", m.map.size()},
                     {"largest_shift_ns", m.largest_shift_ns}});
  }
  j["hosts"] = hosts;
  json pairs = json::array();
  for (const auto& p : c->pairs) {
    json b = p.bound_ns == sync::kUnbounded ? json(nullptr) : json(p.bound_ns);
    pairs.push_back({{"hosts", {host_label(r, p.a), host_label(r, p.b)}},
                     {"host_indices", {p.a, p.b}},
                     {"method", sync::method_name(p.method)},
                     {"messages", p.messages},
                     {"offset_ns", p.offset_ns},
                     {"drift_ppm", p.drift_ppm},
                     {"bound_ns", b},
                     {"quality", sync::quality_name(p.quality)},
                     {"violations_before", p.violations_before},
                     {"violations_after", p.violations_after},
                     {"largest_shift_ns", p.largest_shift_ns},
                     {"in_tree", p.in_tree},
                     {"loop_residual_ns", p.loop_residual_ns},
                     {"loop_consistent", p.loop_consistent}});
  }
  j["pairs"] = pairs;
  return j;
}

// `info --format=json`: the same facts for programs (docs/info-json.md).
json info_json(formats::TraceReader& r, const std::string& input) {
  const auto& h = r.header();
  json j;
  j["info_version"] = 1;
  j["file"] = input;
  j["format"] = std::to_string(r.version_major()) + "." + std::to_string(r.version_minor());
  j["atrace_version"] = h.atrace_version;
  j["command_line"] = h.command_line;
  j["target"] = {{"command", h.target_command}, {"pid", h.target_pid}};
  j["host"] = h.host;
  j["kernel"] = h.kernel;
  j["clock"] = h.clock_id == 1 ? "CLOCK_MONOTONIC" : "clock id " + std::to_string(h.clock_id);
  j["start_mono_ns"] = h.start_mono_ns;
  j["start_real_ns"] = h.start_real_ns;
  j["end_mono_ns"] = h.end_mono_ns;
  j["events"] = r.event_count();
  j["kernel_events"] = h.kernel_events;
  j["lost_events"] = r.lost().total();
  j["probes"] = r.probes().size();
  json threads = json::array();
  for (const auto& t : r.threads())
    threads.push_back(
        {{"tid", t.tid}, {"pid", t.pid}, {"host", t.host}, {"events", t.events}, {"name", t.name}});
  j["threads"] = threads;
  json processes = json::array();
  for (const auto& p : r.processes())
    processes.push_back({{"pid", p.pid},
                         {"ns_pid", p.ns_pid},
                         {"pid_ns", p.pid_ns},
                         {"mnt_ns", p.mnt_ns},
                         {"cgroup", p.cgroup},
                         {"name", p.name},
                         {"root", p.root},
                         {"host", p.host}});
  j["processes"] = processes;
  const auto& c = r.clocks();
  json clocks = {{"boot_id", c.boot_id}, {"machine_id", c.machine_id}, {"host_name", c.host_name}};
  json snapshots = json::array();
  for (const auto& k : c.snapshots) {
    static const char* const kWhen[] = {"start", "periodic", "stop"};
    snapshots.push_back({{"when", kWhen[static_cast<int>(k.when)]},
                         {"mono_before_ns", k.mono_before_ns},
                         {"mono_after_ns", k.mono_after_ns},
                         {"real_ns", k.real_ns},
                         {"boot_ns", k.boot_ns},
                         {"maxerror_us", k.maxerror_us},
                         {"esterror_us", k.esterror_us},
                         {"status", k.status},
                         {"freq", k.freq},
                         {"synchronised", k.synchronised}});
  }
  clocks["snapshots"] = snapshots;
  if (const auto s = analysis::summarize_clocks(c); s && s->real_drift_ppm) {
    clocks["real_drift_ns"] = *s->real_drift_ns;
    clocks["real_drift_ppm"] = *s->real_drift_ppm;
  }
  j["clocks"] = clocks;
  if (r.corrections()) j["sync"] = sync_json(r);
  if (const auto f = series_facts(r, input)) j["series"] = series_json(*f);
  return j;
}

int run_info(const std::string& input, const std::string& format) {
  try {
    formats::TraceReader reader(input);
    for (const auto& w : reader.warnings()) base::warning("%s", w.c_str());
    if (format == "json") {
      std::printf("%s\n", info_json(reader, input).dump(2).c_str());
      if (std::fflush(stdout) != 0) {
        base::error("stdout: write failed: %s", base::errno_text(errno).c_str());
        return 1;
      }
      return reader.damaged() ? 3 : 0;
    }
    print_header(reader, input == "-" ? "stdin" : input);
    print_series(series_facts(reader, input));
    print_duration(reader);
    std::vector<formats::Event> detached;
    print_events(reader, detached);
    print_probes(reader);
    print_detached(reader, detached);
    print_threads(reader);
    print_processes(reader);
    print_clocks(reader);
    print_sync(reader);
    if (std::fflush(stdout) != 0) {
      base::error("stdout: write failed: %s", base::errno_text(errno).c_str());
      return 1;
    }
    return reader.damaged() ? 3 : 0;  // a damaged file (checksum errors) is said by the status too
  } catch (const formats::TraceError& e) {
    base::error("%s", e.what());
    return 1;
  }
}

}  // namespace

void add_info(cli::Command app, int& exit_status) {
  auto input = std::make_shared<std::string>("atrace.data");
  cli::Command cmd = app.subcommand(
      "info",
      "What a trace file holds: header, probes and their kernel paths, filter decisions, "
      "threads, losses");
  cmd.option("-i,--input", *input, "Trace file to read ('-' reads stdin)")
      .capture_default()
      .type_name("FILE");
  auto format = std::make_shared<std::string>("text");
  cmd.option("--format", *format, "Output format: text or json")
      .type_name("FORMAT")
      .one_of({"text", "json"})
      .capture_default();
  auto kernel = std::make_shared<bool>(false);
  cmd.flag("--kernel", *kernel,
           "Instead of a trace: what the running kernel offers atrace, and what atrace does "
           "without each missing feature (run as root or with CAP_BPF and CAP_PERFMON for the "
           "complete answer)");
  cmd.callback([input, format, kernel, &exit_status] {
    if (*kernel) {
      const KernelFeatures f = detect_kernel_features();
      print_kernel_features(stdout, f);
      if (auto missing = f.missing_requirement(); !missing.empty()) {
        base::error("%s", missing.c_str());
        exit_status = 1;
      } else {
        exit_status = 0;
      }
      return;
    }
    exit_status = run_info(*input, *format);
  });
}

}  // namespace atrace::tools
