// The text report: one summary line, a table of functions (or one table per
// thread with --threads), and footnotes for whatever makes the numbers less
// than exact (unfinished calls, exits without entries, lost events), so a
// reader never takes partial figures for complete ones.
#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "userspace/report.h"

namespace atrace::analysis {

std::string format_duration(uint64_t ns) {
  if (ns < 1000) return std::to_string(ns) + " ns";
  static const char* const kUnits[] = {"us", "ms", "s"};
  double v = static_cast<double>(ns);
  int u = 0;
  for (;; u++) {
    v /= 1000.0;
    if (v < 999.5 || u == 2) break;  // 999.5 would print as "1000"
  }
  const char* form = v >= 99.95 ? "%.0f %s" : v >= 9.995 ? "%.1f %s" : "%.2f %s";
  char buf[48];
  std::snprintf(buf, sizeof buf, form, v, kUnits[u]);
  return buf;
}

namespace {

std::string basename_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The traced program's own module, whose functions are shown without a
// module tag: the executable named in the command if some function comes
// from it, otherwise the module with the most functions.
std::string main_module(const fmt::TraceHeader& h, const Profile& p) {
  std::string exe = basename_of(h.target_command.substr(0, h.target_command.find(' ')));
  std::map<std::string, size_t> count;
  for (const auto& f : p.functions) count[f.module]++;
  if (!exe.empty() && count.count(exe)) return exe;
  std::string best;
  size_t most = 0;
  for (const auto& [module, n] : count)
    if (n > most) {
      best = module;
      most = n;
    }
  return best;
}

class Table {
 public:
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  // Every column right-aligned except the last (names).
  void print(std::ostream& out) const {
    std::vector<size_t> width;
    for (const auto& r : rows_)
      for (size_t i = 0; i < r.size(); i++) {
        if (width.size() <= i) width.push_back(0);
        width[i] = std::max(width[i], r[i].size());
      }
    for (const auto& r : rows_) {
      std::string line;
      for (size_t i = 0; i < r.size(); i++) {
        bool last = i + 1 == r.size();
        if (i) line += "  ";
        if (last) {
          line += r[i];
        } else {
          line += std::string(width[i] - r[i].size(), ' ') + r[i];
        }
      }
      out << line << '\n';
    }
  }

 private:
  std::vector<std::vector<std::string>> rows_;
};

void print_functions(std::ostream& out, std::vector<FunctionStats> rows, const std::string& main,
                     SortKey key) {
  sort_functions(rows, key);
  Table t;
  t.add({"Calls", "Total", "Self", "Avg", "Min", "Max", "Function"});
  for (const auto& f : rows) {
    std::string calls = std::to_string(f.calls);
    if (f.unfinished) calls += " (" + std::to_string(f.unfinished) + " unfinished)";
    std::string name = f.name;
    if (!f.module.empty() && f.module != main) name += " [" + f.module + "]";
    t.add({calls, format_duration(f.total_ns), format_duration(f.self_ns),
           format_duration(f.avg_ns()), format_duration(f.min_ns), format_duration(f.max_ns),
           name});
  }
  t.print(out);
}

void print_summary(std::ostream& out, const ReportInput& in) {
  const auto& h = in.header;
  const auto& p = in.profile;
  out << "Trace of ";
  if (!h.target_command.empty()) out << h.target_command << " ";
  out << "(pid " << h.target_pid << "): " << format_duration(recording_duration_ns(h, p))
      << ", " << p.events << " events, " << p.lost_events << " lost\n";
}

void print_footnotes(std::ostream& out, const Profile& p) {
  bool unfinished = std::any_of(p.functions.begin(), p.functions.end(),
                                [](const FunctionStats& f) { return f.unfinished > 0; });
  std::vector<std::string> notes;
  if (unfinished)
    notes.push_back(
        "unfinished: calls still running when the recording stopped or their thread exited;\n"
        "  closed at that time, so their times are lower bounds");
  if (p.orphan_exits)
    notes.push_back(std::to_string(p.orphan_exits) +
                    " exits without a recorded entry ignored\n"
                    "  (calls already running when the recording started)");
  if (p.lost_events)
    notes.push_back(std::to_string(p.lost_events) +
                    " events lost (ring buffer full): figures may be incomplete;\n"
                    "  a larger --buffer-size may help");
  if (notes.empty()) return;
  out << '\n';
  for (const auto& n : notes) out << n << '\n';
}

}  // namespace

std::string render_text(const ReportInput& in, const ReportOptions& opt) {
  std::ostringstream out;
  const Profile& p = in.profile;
  print_summary(out, in);
  std::string main = main_module(in.header, p);
  if (p.functions.empty()) {
    out << "\nNo function calls recorded";
    if (p.events == 0) out << " (no events: did the selected functions run?)";
    out << ".\n";
  } else if (!opt.threads) {
    out << '\n';
    print_functions(out, p.functions, main, opt.sort);
  } else {
    for (const auto& th : p.threads) {
      std::vector<FunctionStats> rows;
      for (const auto& f : p.per_thread)
        if (f.tid == th.tid) rows.push_back(f);
      out << "\nThread " << th.tid;
      if (!th.name.empty()) out << " (" << th.name << ")";
      out << ": " << th.events << " events\n";
      if (rows.empty())
        out << "  no function calls\n";
      else
        print_functions(out, std::move(rows), main, opt.sort);
    }
  }
  print_footnotes(out, p);
  return out.str();
}

}  // namespace atrace::analysis
