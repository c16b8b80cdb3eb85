// `atrace report --diff=OTHER`: the per-function profiles of two traces side
// by side, functions matched by name and module (addresses change between
// runs; names do not), with the absolute and relative change of calls,
// total and self time, the largest change first.
#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "output/render_views.h"
#include "output/report_table.h"
#include "output/report_text.h"

namespace atrace::analysis {

namespace {

using json = nlohmann::ordered_json;

// One function in both traces (a side where it was not called is all 0).
struct DiffRow {
  std::string name, module;
  FunctionStats base, other;
};

int64_t change(uint64_t base, uint64_t other) {
  return static_cast<int64_t>(other) - static_cast<int64_t>(base);
}

uint64_t magnitude(int64_t v) {
  return v < 0 ? static_cast<uint64_t>(-v) : static_cast<uint64_t>(v);
}

std::vector<DiffRow> join(const DiffInput& in, SortKey key) {
  std::map<std::pair<std::string, std::string>, DiffRow> rows;
  for (const auto& f : in.base.profile.functions) {
    DiffRow& r = rows[{f.name, f.module}];
    r.base = f;
  }
  for (const auto& f : in.other.profile.functions) {
    DiffRow& r = rows[{f.name, f.module}];
    r.other = f;
  }
  std::vector<DiffRow> out;
  for (auto& [k, r] : rows) {
    r.name = k.first;
    r.module = k.second;
    out.push_back(std::move(r));
  }
  auto value = [key](const DiffRow& r) -> uint64_t {
    switch (key) {
      case SortKey::Calls: return magnitude(change(r.base.calls, r.other.calls));
      case SortKey::Self: return magnitude(change(r.base.self_ns, r.other.self_ns));
      case SortKey::Name: return 0;
      default: return magnitude(change(r.base.total_ns, r.other.total_ns));
    }
  };
  std::stable_sort(out.begin(), out.end(), [&](const DiffRow& a, const DiffRow& b) {
    if (value(a) != value(b)) return value(a) > value(b);
    return a.name != b.name ? a.name < b.name : a.module < b.module;
  });
  return out;
}

// "+12.5%", "new" (nothing before), "" (nothing either side).
std::string relative(uint64_t base, uint64_t other) {
  if (base == 0) return other ? "new" : "";
  char buf[32];
  std::snprintf(
      buf, sizeof buf, "%+.1f%%",
      100.0 * (static_cast<double>(other) - static_cast<double>(base)) / static_cast<double>(base));
  return buf;
}

std::string count_change(uint64_t base, uint64_t other) {
  int64_t d = change(base, other);
  if (d == 0) return "0";
  std::string s = (d > 0 ? "+" : "") + std::to_string(d);
  std::string rel = relative(base, other);
  return rel.empty() ? s : s + " (" + rel + ")";
}

std::string time_change(uint64_t base, uint64_t other) {
  int64_t d = change(base, other);
  if (d == 0) return "0";
  std::string s = std::string(d > 0 ? "+" : "-") + format_duration(magnitude(d));
  std::string rel = relative(base, other);
  return rel.empty() ? s : s + " (" + rel + ")";
}

json side(const ReportInput& in, const std::string& file) {
  return json{{"file", file},
              {"command", in.header.target_command},
              {"pid", in.header.target_pid},
              {"duration_ns", recording_duration_ns(in.header, in.profile)},
              {"events", in.profile.events},
              {"lost_events", in.profile.lost_events}};
}

json compared(uint64_t base, uint64_t other) {
  json c = {
      {"base", base}, {"other", other}, {"change", change(base, other)}, {"change_pct", nullptr}};
  if (base)
    c["change_pct"] = 100.0 * (static_cast<double>(other) - static_cast<double>(base)) /
                      static_cast<double>(base);
  return c;
}

std::string describe(const ReportInput& in, const std::string& file) {
  std::string s = file;
  if (!in.header.target_command.empty()) s += " (" + in.header.target_command + ")";
  return s;
}

// A function's name as the first trace shows it, or the second when only
// the second has it (short_only: its short name whatever --long-names).
std::string shown_in(const DiffInput& in, const std::string& name, const std::string& module,
                     bool short_only = false) {
  for (const Profile* p : {&in.base.profile, &in.other.profile}) {
    const std::string& s = short_only ? p->names.short_of(name, module) : p->names.of(name, module);
    if (s != name || (!short_only && p->names.long_names())) return s;
  }
  return name;
}

}  // namespace

std::string render_diff_text(const DiffInput& in, const ReportOptions& opt) {
  std::ostringstream out;
  uint64_t d0 = recording_duration_ns(in.base.header, in.base.profile);
  uint64_t d1 = recording_duration_ns(in.other.header, in.other.profile);
  out << "Diff of " << describe(in.base, in.base_file) << "\n"
      << "     to " << describe(in.other, in.other_file) << "\n"
      << "Duration " << format_duration(d0) << " -> " << format_duration(d1) << ": "
      << time_change(d0, d1) << "\n";
  auto rows = join(in, opt.sort);
  if (rows.empty()) {
    out << "\nNo function calls in either trace.\n";
    return out.str();
  }
  std::vector<std::string> modules;
  for (const auto& r : rows) modules.push_back(r.module);
  std::string main = main_module(in.base.header, modules);
  Table t;
  t.add({"Calls", "Change", "Total", "Change", "Self", "Change", "Function"});
  uint64_t changed = 0;
  for (const auto& r : rows) {
    const auto &a = r.base, &b = r.other;
    if (a.calls != b.calls || a.total_ns != b.total_ns || a.self_ns != b.self_ns) changed++;
    t.add({std::to_string(a.calls) + " -> " + std::to_string(b.calls),
           count_change(a.calls, b.calls),
           format_duration(a.total_ns) + " -> " + format_duration(b.total_ns),
           time_change(a.total_ns, b.total_ns),
           format_duration(a.self_ns) + " -> " + format_duration(b.self_ns),
           time_change(a.self_ns, b.self_ns),
           display_name(shown_in(in, r.name, r.module), r.module, main)});
  }
  out << "\n";
  t.print(out);
  out << "\n"
      << changed << " of " << rows.size() << " functions changed; "
      << "X -> Y: the first trace, then the second; new: not called in the first\n";
  if (in.base.profile.lost_events || in.other.profile.lost_events)
    out << "events were lost while recording (" << in.base.profile.lost_events << ", "
        << in.other.profile.lost_events << "): figures may be incomplete\n";
  return out.str();
}

std::string render_diff_json(const DiffInput& in, const ReportOptions& opt) {
  json doc;
  doc["report_version"] = 1;
  doc["diff"] = true;
  doc["base"] = side(in.base, in.base_file);
  doc["other"] = side(in.other, in.other_file);
  json functions = json::array();
  for (const auto& r : join(in, opt.sort))
    functions.push_back(json{{"name", r.name},
                             {"short_name", shown_in(in, r.name, r.module, true)},
                             {"module", r.module},
                             {"calls", compared(r.base.calls, r.other.calls)},
                             {"total_ns", compared(r.base.total_ns, r.other.total_ns)},
                             {"self_ns", compared(r.base.self_ns, r.other.self_ns)},
                             {"avg_ns", compared(r.base.avg_ns(), r.other.avg_ns())}});
  doc["functions"] = std::move(functions);
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace atrace::analysis
