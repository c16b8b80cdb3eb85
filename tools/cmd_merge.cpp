// `atrace merge A.data B.data ... -o M.data`: the recordings of several
// processes or hosts in one trace on one corrected time line
// (docs/merge.md). Two passes over the inputs: the first collects their
// clock evidence and messages for analysis/clock_merge.h, which gives each
// host's map and the sync report; the second copies every event, raw time
// stamp and all, under its host's index (probe ids renumbered so that they
// are unique in the merged file), and stores the maps beside them
// (CORRECTIONS). Nothing is dropped and nothing rewritten: the reader
// applies the maps.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "analysis/analysis.h"
#include "base/diagnostics.h"
#include "base/duration.h"
#include "base/new_file.h"
#include "formats/trace_reader.h"
#include "formats/trace_writer.h"
#include "tools/commands.h"

namespace atrace::tools {
namespace {

struct MergeRequest {
  std::vector<std::string> inputs;
  std::string output = "merged.data";
  bool estimate = false;
  std::string min_delay = "0";
};

struct Input {
  std::string path;
  std::unique_ptr<formats::TraceReader> reader;
};

// A refusal, one line.
struct MergeError {
  std::string what;
};

std::vector<Input> open_inputs(const std::vector<std::string>& paths) {
  if (paths.size() < 2) throw MergeError{"merge needs at least two trace files"};
  if (paths.size() > UINT16_MAX) throw MergeError{"merge takes at most 65535 trace files"};
  std::vector<Input> in;
  for (const auto& p : paths) {
    auto r = std::make_unique<formats::TraceReader>(p);
    if (r->corrections() || r->hosts().size() > 1)
      throw MergeError{p + ": already a merged trace: merge the recordings it was made from"};
    in.push_back({p, std::move(r)});
  }
  return in;
}

std::vector<analysis::MessageEnd> message_ends(std::vector<Input>& in,
                                               const std::vector<formats::HostClocks>& hosts) {
  const std::vector<uint32_t> machines = analysis::host_machines(hosts);
  std::vector<analysis::MessageEnd> ends;
  formats::Event ev;
  for (size_t h = 0; h < in.size(); h++) {
    auto& r = *in[h].reader;
    r.rewind();
    while (r.next(ev)) {
      if (ev.kind != formats::EventKind::Message) continue;
      ev.host = static_cast<uint16_t>(h);  // each input is host 0 of its own file
      ends.push_back(analysis::message_end(ev, machines));
    }
  }
  return ends;
}

bool has_probe_id(formats::EventKind k) {
  using K = formats::EventKind;
  return k == K::FuncEntry || k == K::FuncExit || k == K::Detach || k == K::Usdt || k == K::Unwind;
}

// The merged header: what the recordings were, on the merged time line.
formats::TraceHeader merged_header(const std::vector<Input>& in, const formats::Corrections& c) {
  formats::TraceHeader h = in[c.reference].reader->header();
  h.command_line = invocation();
  std::string hosts, commands, kernels;
  std::set<std::string> kernel_set, groups, limits;
  uint64_t start = UINT64_MAX, end = 0;
  bool same_costs = true;
  for (size_t i = 0; i < in.size(); i++) {
    const auto& s = in[i].reader->header();
    const std::string name = s.host.empty() ? in[i].path : s.host;
    hosts += (i ? ", " : "") + name;
    commands += (i ? "; " : "") + name + ": " + s.target_command;
    if (kernel_set.insert(s.kernel).second) kernels += (kernels.empty() ? "" : ", ") + s.kernel;
    for (size_t a = 0, b; a < s.kernel_events.size(); a = b + 1) {
      b = s.kernel_events.find(',', a);
      if (b == std::string::npos) b = s.kernel_events.size();
      if (b > a) groups.insert(s.kernel_events.substr(a, b - a));
    }
    for (const auto& l : s.kernel_limits) {
      std::string limit = name;
      limit += ": ";
      limit += l;
      limits.insert(std::move(limit));
    }
    const auto& map = c.hosts[i].map;
    start = std::min<uint64_t>(start,
                               static_cast<uint64_t>(std::max<int64_t>(
                                   0, sync::map_time(map, static_cast<int64_t>(s.start_mono_ns)))));
    end =
        std::max<uint64_t>(end, static_cast<uint64_t>(std::max<int64_t>(
                                    0, sync::map_time(map, static_cast<int64_t>(s.end_mono_ns)))));
    if (formats::probe_costs(s).nop5 != formats::probe_costs(h).nop5 ||
        formats::probe_costs(s).single_step != formats::probe_costs(h).single_step ||
        formats::probe_costs(s).emulated != formats::probe_costs(h).emulated)
      same_costs = false;
  }
  h.host = hosts;
  h.target_command = commands;
  h.kernel = kernels;
  h.kernel_events.clear();
  for (const auto& g : groups) h.kernel_events += (h.kernel_events.empty() ? "" : ",") + g;
  h.kernel_limits.assign(limits.begin(), limits.end());
  // Probe costs measured on different machines do not compensate each
  // other's calls: not measured, rather than wrong.
  if (!same_costs) formats::set_probe_costs(h, {});
  // The reference's wall clock, moved to the merged start and end.
  const auto& ref = in[c.reference].reader->header();
  h.start_real_ns = ref.start_real_ns + (start - ref.start_mono_ns);
  h.end_real_ns = ref.start_real_ns + (end - ref.start_mono_ns);
  h.start_mono_ns = start;
  h.end_mono_ns = end;
  return h;
}

void write_merged(std::vector<Input>& in, const formats::Corrections& c, NewFile& file) {
  formats::WriterOptions opts;
  // The recordings are copied one after the other, each in its own raw
  // time: blocks are cut by size, never by an age on some clock.
  opts.now = [] { return uint64_t{0}; };
  formats::TraceWriter w(file.dup_fd(), file.display(), opts);
  const formats::TraceHeader header = merged_header(in, c);
  w.write_header(header);
  // Probe ids: each recording's renumbered after the previous ones'.
  std::vector<std::map<uint32_t, uint32_t>> ids(in.size());
  std::vector<formats::ProbeInfo> probes;
  uint32_t next_id = 1;
  for (size_t h = 0; h < in.size(); h++)
    for (auto p : in[h].reader->probes()) {
      ids[h][p.id] = next_id;
      p.id = next_id++;
      probes.push_back(std::move(p));
    }
  w.write_probes(probes);
  w.write_corrections(c);
  std::vector<formats::ThreadInfo> threads;
  formats::LostCounts lost;
  for (size_t h = 0; h < in.size(); h++) {
    auto& r = *in[h].reader;
    const auto host = static_cast<uint16_t>(h);
    formats::HostClocks clocks = r.clocks();
    if (clocks.host_name.empty()) clocks.host_name = r.header().host;
    // A CLOCKS frame without snapshots is not written: keep one so the
    // host keeps its name.
    if (clocks.snapshots.empty()) clocks.snapshots.push_back({});
    w.write_clocks(clocks, host);
    std::vector<formats::ProcessInfo> processes = r.processes();
    for (auto& p : processes) p.host = host;
    w.write_processes(processes);
    for (auto t : r.threads()) {
      t.host = host;
      threads.push_back(std::move(t));
    }
    const auto& l = r.lost().per_cpu;
    if (lost.per_cpu.size() < l.size()) lost.per_cpu.resize(l.size());
    for (size_t cpu = 0; cpu < l.size(); cpu++) lost.per_cpu[cpu] += l[cpu];
    r.rewind();
    std::vector<formats::Event> batch(1);
    formats::Event& ev = batch[0];
    std::vector<formats::Event> events;
    while (r.next(ev)) {
      ev.host = host;
      if (has_probe_id(ev.kind)) {
        auto it = ids[h].find(ev.id);
        if (it != ids[h].end()) ev.id = it->second;
      }
      events.push_back(ev);
      if (events.size() == 4096) {
        w.write_events(events);
        events.clear();
      }
    }
    w.write_events(events);
  }
  w.finish(header, threads, lost);
}

// One line per pair: what `atrace info` prints in full.
void print_summary(const std::vector<Input>& in, const formats::Corrections& c,
                   const std::string& output) {
  base::progress("merged %zu traces into %s: %llu messages between hosts", in.size(),
                 output.c_str(), static_cast<unsigned long long>(c.messages));
  for (const auto& p : c.pairs) {
    if (!p.in_tree && p.method != sync::Method::kMessages) continue;
    base::progress(
        "  %s - %s: %s, %s, offset %lld ns, bound %s, violations %zu -> %zu", in[p.a].path.c_str(),
        in[p.b].path.c_str(), sync::method_name(p.method), sync::quality_name(p.quality),
        static_cast<long long>(p.offset_ns),
        p.bound_ns == sync::kUnbounded ? "none" : (std::to_string(p.bound_ns) + " ns").c_str(),
        p.violations_before, p.violations_after);
  }
}

int run_merge(const MergeRequest& req) {
  try {
    analysis::ClockMergeOptions options;
    options.estimate_same_boot = req.estimate;
    auto delay = base::parse_duration_ns(req.min_delay);
    if (!delay)
      throw MergeError{"--min-delay: '" + req.min_delay + "' is not a duration (e.g. 20us)"};
    options.min_delay_ns = static_cast<int64_t>(*delay);
    check_new_file_path(req.output);
    std::vector<Input> in = open_inputs(req.inputs);
    bool damaged = false;
    for (const auto& i : in) {
      for (const auto& w : i.reader->warnings()) base::warning("%s", w.c_str());
      damaged |= i.reader->damaged();
    }
    std::vector<formats::HostClocks> hosts;
    for (const auto& i : in) {
      formats::HostClocks h = i.reader->clocks();
      if (h.host_name.empty()) h.host_name = i.reader->header().host;
      hosts.push_back(std::move(h));
    }
    formats::Corrections c = analysis::merge_clocks(hosts, message_ends(in, hosts), options);
    for (size_t h = 0; h < in.size(); h++) {
      c.hosts[h].source = in[h].path;
      c.hosts[h].command = in[h].reader->header().target_command;
      c.hosts[h].kernel = in[h].reader->header().kernel;
    }
    NewFile file(req.output, IfExists::KeepAsOld);
    write_merged(in, c, file);
    file.commit();
    print_summary(in, c, file.display());
    return damaged ? 1 : 0;
  } catch (const MergeError& e) {
    base::error("%s", e.what.c_str());
  } catch (const std::exception& e) {
    base::error("%s", e.what());
  }
  return 1;
}

}  // namespace

void add_merge(cli::Command app, int& exit_status) {
  auto req = std::make_shared<MergeRequest>();
  cli::Command cmd = app.subcommand(
      "merge",
      "Several recordings (processes, hosts) in one trace on one time line, their clocks "
      "corrected from the messages between them (docs/merge.md)");
  cmd.option("inputs", req->inputs, "Trace files to merge (two or more)")
      .required()
      .type_name("FILE...");
  cmd.option("-o,--output", req->output, "The merged trace").capture_default().type_name("FILE");
  cmd.flag("--estimate", req->estimate,
           "Estimate the clocks of recordings of one boot too (they share one clock: offset 0 "
           "is the truth), to check the method");
  cmd.option("--min-delay", req->min_delay,
             "The least time a message takes: every receive is put at least this long after "
             "its send")
      .capture_default()
      .type_name("DURATION");
  cmd.callback([req, &exit_status] { exit_status = run_merge(*req); });
}

}  // namespace atrace::tools
