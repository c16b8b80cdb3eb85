#include "tools/filter_options.h"

#include <climits>
#include <cstdint>

#include "record/record.h"
#include "tools/option_values.h"

namespace atrace::tools {
namespace {

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t comma = text.find(',', start);
    out.push_back(text.substr(start, comma == std::string::npos ? comma : comma - start));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

std::vector<uint32_t> ids(const char* option, const std::string& text) {
  std::vector<uint32_t> out;
  for (const auto& item : split(text))
    out.push_back(static_cast<uint32_t>(parse_count(option, item, UINT32_MAX)));
  return out;
}

// "1.5" (seconds), "250ms", "40us", "100ns", "2s": a time after the start.
uint64_t offset(const std::string& text) {
  return parse_duration("--time", text, base::BareNumber::Seconds, 0, UINT64_MAX);
}

}  // namespace

void add_filter_options(cli::Command cmd, FilterArgs& a, bool kinds) {
  cmd.option("--tid", a.tid, "Only these threads (comma-separated thread ids)")
      .type_name("TID,...");
  cmd.option("--pid", a.pid,
             "Only the threads of these processes: host pids, or pids in their own pid "
             "namespace (a container's, as `report` shows them)")
      .type_name("PID,...");
  cmd.option("--comm", a.comm, "Only the threads whose name matches this glob").type_name("GLOB");
  cmd.option("--host", a.host,
             "Of a merged trace (atrace merge), only these recordings: host numbers or names, "
             "as `atrace info` lists them")
      .type_name("HOST,...");
  cmd.option("--time", a.time,
             "Only the events from START to END after the trace began (seconds, or with a "
             "unit: 1.5s, 200ms, 40us; either may be left out: --time=2s, or --time=,500ms)")
      .type_name("START,END");
  cmd.option("--function", a.function,
             "Only the calls of the functions this glob names (full, short or parameterless "
             "name) and everything inside them: their callees, system calls, faults")
      .type_name("GLOB");
  if (kinds)
    cmd.option("--kind", a.kind,
               "Only these kinds of events: " + formats::event_kind_names() + " (comma-separated)")
        .type_name("KIND,...")
        .completes(formats::event_kind_names(), true);
}

formats::EventFilter parse_filter(const FilterArgs& a) {
  formats::EventFilter f;
  if (!a.tid.empty()) f.tids = ids("--tid", a.tid);
  if (!a.pid.empty()) f.pids = ids("--pid", a.pid);
  f.comm = a.comm;
  if (!a.host.empty()) f.hosts = split(a.host);
  f.function = a.function;
  if (!a.time.empty()) {
    auto parts = split(a.time);
    if (parts.size() == 1) parts.emplace_back();  // --time=START: to the end
    if (parts.size() != 2)
      throw OptionError("--time: '" + a.time + "' is not START,END (e.g. 1s,2.5s or ,500ms)");
    if (!parts[0].empty()) f.from_ns = offset(parts[0]);
    if (!parts[1].empty()) f.to_ns = offset(parts[1]);
  }
  if (!a.kind.empty())
    for (const auto& name : split(a.kind)) {
      auto kinds = formats::event_kinds_named(name);
      if (kinds.empty())
        throw OptionError("--kind: '" + name + "' is not an event kind (" +
                          formats::event_kind_names() + ")");
      f.kinds.insert(f.kinds.end(), kinds.begin(), kinds.end());
    }
  return f;
}

}  // namespace atrace::tools
