// The JSON report: the stable, documented interface of `atrace report`
// (docs/report-json.md). Fields are only ever added, never renamed or
// removed; every time is an integer in nanoseconds.
#include <nlohmann/json.hpp>

#include "userspace/report.h"

namespace atrace::analysis {
namespace {

// Keys in the order written: the documented order, easier to read.
using json = nlohmann::ordered_json;

json stats_fields(const FunctionStats& f) {
  return json{{"calls", f.calls},     {"unfinished", f.unfinished}, {"total_ns", f.total_ns},
              {"self_ns", f.self_ns}, {"min_ns", f.min_ns},         {"max_ns", f.max_ns},
              {"avg_ns", f.avg_ns()}};
}

json function_row(const FunctionStats& f, const Profile& p, bool threads) {
  json row = {{"name", f.name}, {"module", f.module}};
  row.update(stats_fields(f));
  if (threads) {
    json per = json::array();
    for (const auto& t : p.per_thread) {
      if (t.id != f.id) continue;
      json r = {{"tid", t.tid}};
      r.update(stats_fields(t));
      per.push_back(std::move(r));
    }
    row["per_thread"] = std::move(per);
  }
  return row;
}

}  // namespace

std::string render_json(const ReportInput& in, const ReportOptions& opt) {
  const auto& h = in.header;
  const auto& p = in.profile;
  json doc;
  doc["report_version"] = 1;
  doc["atrace_version"] = h.atrace_version;
  doc["command"] = h.target_command;
  doc["pid"] = h.target_pid;
  doc["start_realtime_ns"] = h.start_real_ns;
  doc["duration_ns"] = recording_duration_ns(h, p);
  doc["events"] = p.events;
  doc["lost_events"] = p.lost_events;
  doc["orphan_exits"] = p.orphan_exits;

  std::vector<FunctionStats> rows = p.functions;
  sort_functions(rows, opt.sort);
  json functions = json::array();
  for (const auto& f : rows) functions.push_back(function_row(f, p, opt.threads));
  doc["functions"] = std::move(functions);

  json threads = json::array();
  for (const auto& t : p.threads)
    threads.push_back({{"tid", t.tid}, {"pid", t.pid}, {"name", t.name}, {"events", t.events}});
  doc["threads"] = std::move(threads);
  doc["detached"] = json::array();  // relevance filters: not recorded yet
  doc["warnings"] = in.warnings;
  // Names and command lines are bytes from the target: never fail on them.
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace atrace::analysis
