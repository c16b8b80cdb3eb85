// The data of the HTML report (report_html.h): one JSON document with the
// recording's facts, the profile's rows, the call tree's nodes and the
// downsampled timeline. The large parts (tree nodes, spans, busy cells) are
// flat arrays of numbers with a fixed stride, written by hand: a page of a
// hundred thousand spans parses in a fraction of a second that way, and
// takes a few bytes per number. docs/report-html.md describes the members.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "analysis/analysis.h"
#include "formats/trace_reader.h"
#include "output/arg_text.h"
#include "output/report_html.h"
#include "output/text_escape.h"

namespace atrace::analysis {

namespace {

using json = nlohmann::ordered_json;

// Names and command lines are bytes from the target: never fail on them.
std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

json meta(const ReportInput& in, const ReportOptions& opt) {
  const formats::TraceHeader& h = in.header;
  const Profile& p = in.profile;
  return json{{"command", h.target_command},
              {"pid", h.target_pid},
              {"atrace_version", h.atrace_version},
              {"host", h.host},
              {"kernel", h.kernel},
              {"kernel_events", h.kernel_events},
              {"start_realtime_ns", h.start_real_ns},
              {"duration_ns", recording_duration_ns(h, p)},
              {"events", p.events},
              {"lost_events", p.lost_events},
              {"orphan_exits", p.orphan_exits},
              {"compensated", opt.compensated},
              {"warnings", in.warnings}};
}

const char* sort_name(SortKey k) {
  switch (k) {
    case SortKey::Calls: return "calls";
    case SortKey::Total: return "total_ns";
    case SortKey::Self: return "self_ns";
    case SortKey::Avg: return "avg_ns";
    case SortKey::Min: return "min_ns";
    case SortKey::Max: return "max_ns";
    case SortKey::Name: return "shown";
    case SortKey::Offcpu:
    case SortKey::SelfOffcpu: return "offcpu_ns";
    case SortKey::SysTime:
    case SortKey::SelfSysTime: return "syscall_ns";
    case SortKey::Syscalls: return "syscalls";
    case SortKey::Faults: return "faults";
  }
  return "total_ns";
}

// The report's rows, with the JSON report's keys (docs/report-json.md).
json functions(const ReportInput& in, const ReportOptions& opt) {
  std::vector<FunctionStats> rows = in.profile.functions;
  sort_functions(rows, opt.sort, opt.then_sort);
  json out = json::array();
  for (const auto& f : rows)
    out.push_back(json{{"name", f.name},
                       {"shown", in.profile.names.of(f.name, f.module)},
                       {"module", f.module},
                       {"calls", f.calls},
                       {"unfinished", f.unfinished},
                       {"abandoned", f.abandoned},
                       {"untimed", f.untimed},
                       {"total_ns", f.total_ns},
                       {"self_ns", f.self_ns},
                       {"avg_ns", f.avg_ns()},
                       {"min_ns", f.min_ns},
                       {"max_ns", f.max_ns},
                       {"offcpu_ns", f.kernel.offcpu_ns()},
                       {"syscall_ns", f.kernel.syscall_ns},
                       {"syscalls", f.kernel.syscalls},
                       {"faults", f.kernel.faults},
                       {"detached", f.detached},
                       {"partial", f.partial}});
  return out;
}

void append_numbers(std::string& b, std::initializer_list<uint64_t> values, bool& first) {
  for (uint64_t v : values) {
    if (!first) b += ',';
    first = false;
    append_uint(b, v);
  }
}

void append_names(std::string& b, const std::vector<std::string>& names) {
  b += '[';
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) b += ',';
    append_json_string(b, names[i]);
  }
  b += ']';
}

// The flame graph: the tree's nodes in depth-first order, each as
//   parent, name, calls, total_ns, self_ns, offcpu_ns, syscall_ns, syscalls, faults
// (node 0 is the root, its own parent). Only the heaviest max_nodes paths:
// a node is lighter than its parent, so keeping the nodes down to a total
// keeps whole paths from the root.
void append_flame(std::string& b, const CallTree& tree, size_t max_nodes) {
  std::vector<uint64_t> totals;
  totals.reserve(tree.size());
  for (uint32_t i = 1; i < tree.size(); ++i) totals.push_back(tree.node(i).total_ns);
  uint64_t threshold = 0;
  if (max_nodes == 0) {
    threshold = UINT64_MAX;
  } else if (totals.size() > max_nodes) {
    auto nth = totals.begin() + static_cast<std::ptrdiff_t>(max_nodes - 1);
    std::nth_element(totals.begin(), nth, totals.end(), std::greater<>());
    threshold = *nth;
  }

  std::vector<std::string> names{tree.per_thread() ? "all threads" : "all"};
  std::unordered_map<std::string, uint32_t> name_index{{names[0], 0}};
  std::string nodes;
  bool first = true;
  auto add = [&](uint32_t i, uint32_t parent, uint32_t name) {
    const CallNode& n = tree.node(i);
    append_numbers(nodes,
                   {parent, name, n.calls, n.total_ns, n.self_ns, n.kernel.offcpu_ns(),
                    n.kernel.syscall_ns, n.kernel.syscalls, n.kernel.faults},
                   first);
  };
  add(CallTree::kRoot, 0, 0);
  // out_index[tree node] = its index in the page (for its children's parent).
  std::unordered_map<uint32_t, uint32_t> out_index{{CallTree::kRoot, 0}};
  uint32_t shown = 1;
  tree.walk([&](uint32_t i, int) {
    const CallNode& n = tree.node(i);
    if (n.total_ns < threshold || shown > max_nodes) return false;
    std::string label = tree.label(i);
    auto [it, fresh] = name_index.try_emplace(label, static_cast<uint32_t>(names.size()));
    if (fresh) names.push_back(label);
    add(i, out_index.at(n.parent), it->second);
    out_index[i] = shown++;
    return true;
  });

  b += "{\"kernel\":";
  b += tree.has_kernel() ? "true" : "false";
  b += ",\"per_thread\":";
  b += tree.per_thread() ? "true" : "false";
  b += ",\"total_nodes\":";
  append_uint(b, tree.size());
  b += ",\"shown_nodes\":";
  append_uint(b, shown);
  b += ",\"stride\":9,\"names\":";
  append_names(b, names);
  b += ",\"nodes\":[";
  b += nodes;
  b += "]}";
}

// The timeline: threads, span names, kept spans as
//   thread, kind (0 call, 1 system call, 2 off-CPU), depth, start - t0, duration, name, end
// and busy cells as
//   thread, kind, depth, bucket, busy_ns, spans.
void append_timeline(std::string& b, const DownsampledTimeline& t, TraceNames& names,
                     size_t max_spans) {
  b += "{\"t0\":";
  append_uint(b, t.t0);
  b += ",\"t1\":";
  append_uint(b, t.t1);
  b += ",\"bucket_ns\":";
  append_uint(b, t.bucket_ns);
  b += ",\"max_spans\":";
  append_uint(b, max_spans);
  b += ",\"total_spans\":";
  append_uint(b, t.total_spans);
  b += ",\"dropped_spans\":";
  append_uint(b, t.dropped_spans);
  b += ",\"dropped_below_ns\":";
  append_uint(b, t.dropped_below_ns);
  b += ",\"threads\":[";
  for (size_t i = 0; i < t.threads.size(); ++i) {
    const TimelineThread& th = t.threads[i];
    if (i) b += ',';
    b += "{\"tid\":";
    append_uint(b, th.tid);
    b += ",\"pid\":";
    append_uint(b, th.pid);
    b += ",\"name\":";
    append_json_string(b, names.thread(th.tid));
    b += ",\"process\":";
    append_json_string(b, names.process(th.pid));
    b += ",\"depth\":";
    append_uint(b, th.depth);
    b += ",\"syscalls\":";
    b += th.syscalls ? "true" : "false";
    b += ",\"offcpu\":";
    b += th.offcpu ? "true" : "false";
    b += '}';
  }
  b += "],\"names\":";
  append_names(b, t.names);
  // A call's recorded values (record --args/--retval): the 8th number is
  // its line in `values` (0: none), each distinct line written once.
  std::vector<std::string> values{""};
  std::unordered_map<std::string, uint64_t> value_index;
  b += ",\"span_stride\":8,\"spans\":[";
  bool first = true;
  for (const KeptSpan& s : t.spans) {
    uint64_t v = 0;
    if (!s.values.empty()) {
      auto [it, fresh] = value_index.try_emplace(values_text(s.values), values.size());
      if (fresh) values.push_back(it->first);
      v = it->second;
    }
    append_numbers(
        b,
        {s.row.thread, static_cast<uint64_t>(s.row.kind), s.row.depth,
         s.start >= t.t0 ? s.start - t.t0 : 0, s.dur, s.name, static_cast<uint64_t>(s.how), v},
        first);
  }
  b += "],\"values\":";
  append_names(b, values);
  b += ",\"cell_stride\":6,\"cells\":[";
  first = true;
  for (const BusyCell& c : t.cells)
    append_numbers(b,
                   {c.row.thread, static_cast<uint64_t>(c.row.kind), c.row.depth, c.bucket,
                    c.busy_ns, c.spans},
                   first);
  b += "]}";
}

// The time range the timeline spans: the recording, or its events where
// they reach beyond (no end in a truncated trace). `p` null: the header's
// alone, the guess made before the events are read.
std::pair<uint64_t, uint64_t> timeline_range(const formats::TraceHeader& h, const Profile* p) {
  uint64_t first = p ? p->first_ts : 0, last = p ? p->last_ts : 0;
  uint64_t t0 = h.start_mono_ns && (!first || h.start_mono_ns < first) ? h.start_mono_ns : first;
  return {t0, std::max(h.end_mono_ns, last)};
}

}  // namespace

HtmlViews::HtmlViews(CallReplay& replay, const formats::TraceReader& reader,
                     const ReportOptions& opt, const HtmlOptions& html)
    : html_(html),
      tree_(replay, reader.header(), reader.probes(),
            CallTreeOptions{opt.threads, {}, opt.long_names}),
      names_(reader.header(), reader.probes(), reader.threads(), opt.long_names),
      replay_(replay),
      flows_(replay, reader.hosts(), reader.header().kernel_events) {
  // A merged trace's processes are named with their host (TraceNames).
  names_.set_hosts(reader.hosts());
  range_ = timeline_range(reader.header(), nullptr);
  sampler_ = std::make_unique<TimelineDownsampler>(names_, downsample_options(range_));
  timeline_ = std::make_unique<Timeline>(replay, *sampler_);
}

DownsampleOptions HtmlViews::downsample_options(std::pair<uint64_t, uint64_t> range) const {
  DownsampleOptions d;
  d.max_spans = html_.max_spans;
  d.buckets = html_.buckets;
  d.max_cells = html_.max_cells;
  d.t0 = range.first;
  d.t1 = range.second;
  return d;
}

namespace {

// The Flows section: the function-level graph (flow_view.h) with each
// node's side of the cheapest split (0, 1; 2: neither or no split).
json flows_json(const FlowView& v) {
  json nodes = json::array();
  for (size_t i = 0; i < v.nodes.size(); ++i) {
    const FlowNode& n = v.nodes[i];
    nodes.push_back({{"name", n.host.empty() ? n.label : n.host + ": " + n.label},
                     {"process", n.process},
                     {"work_ns", n.work_ns},
                     {"side", v.split ? v.split->side[i] : 2}});
  }
  json edges = json::array();
  for (const auto& e : v.edges)
    edges.push_back({{"from", e.from},
                     {"to", e.to},
                     {"kind", to_string(e.kind)},
                     {"count", e.stats.count},
                     {"bytes", e.stats.bytes},
                     {"wait_ns", e.stats.wait_ns}});
  json split = nullptr;
  if (v.split)
    split = {{"cut", v.split->cut}, {"cut_bytes", v.split_bytes}, {"exact", v.split->exact}};
  return {{"nodes", nodes},
          {"edges", edges},
          {"split", split},
          {"recorded",
           {{"values", v.values_recorded},
            {"bytes", v.bytes_recorded},
            {"wakeups", v.wakeups_recorded}}}};
}

}  // namespace

std::string HtmlViews::data(formats::TraceReader& reader, const ReportInput& in,
                            const ReportOptions& opt) {
  const formats::TraceHeader& h = reader.header();
  CallTree tree = tree_.result(reader.threads());
  // The buckets are cut while the events are read: when the events went
  // beyond the header's range (a truncated trace), the timeline is read
  // again over the right one.
  auto range = timeline_range(h, &in.profile);
  DownsampledTimeline sampled;
  if (range == range_) {
    sampled = sampler_->finish();
  } else {
    CallReplay again(reader.probes());
    TimelineDownsampler sampler(names_, downsample_options(range));
    Timeline timeline(again, sampler);
    reader.rewind();
    formats::Event ev;
    while (reader.next(ev)) again.add(ev);
    again.finish(h.end_mono_ns);
    sampled = sampler.finish();
  }

  std::string b;
  b += "{\"version\":1,\"meta\":";
  b += dump(meta(in, opt));
  b += ",\"sort\":\"";
  b += sort_name(opt.sort);
  b += "\",\"kernel\":";
  b += has_kernel_events(h) ? "true" : "false";
  b += ",\"functions\":";
  b += dump(functions(in, opt));
  b += ",\n\"flame\":";
  append_flame(b, tree, html_.max_tree_nodes);
  b += ",\n\"timeline\":";
  append_timeline(b, sampled, names_, html_.max_spans);
  b += ",\n\"flows\":";
  b += dump(flows_json(
      flow_view(flows_.result(), FlowLevel::Function,
                flow_naming(h, reader.probes(), replay_, reader.hosts(), opt.long_names))));
  b += "}";
  return b;
}

std::string html_report_data(formats::TraceReader& reader, const ReportInput& in,
                             const ReportOptions& opt, const HtmlOptions& html) {
  CallReplay replay(reader.probes());
  if (opt.compensated) replay.compensate(probe_costs(reader.header()));
  HtmlViews views(replay, reader, opt, html);
  reader.rewind();
  formats::Event ev;
  while (reader.next(ev)) replay.add(ev);
  replay.finish(reader.header().end_mono_ns);
  return views.data(reader, in, opt);
}

}  // namespace atrace::analysis
