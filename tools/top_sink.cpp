#include "tools/top_sink.h"

#include <cstdio>
#include <ctime>
#include <string>

#include "base/plural.h"

namespace atrace::tools {

namespace {

// "3.0 s (12:00:03)": since the recording began, and the wall clock.
std::string when(const formats::TraceHeader& h, uint64_t now) {
  const uint64_t since = now > h.start_mono_ns ? now - h.start_mono_ns : 0;
  const time_t wall = static_cast<time_t>((h.start_real_ns + since) / 1'000'000'000);
  struct tm tm {};
  localtime_r(&wall, &tm);
  char clock[16];
  std::strftime(clock, sizeof clock, "%H:%M:%S", &tm);
  char text[64];
  std::snprintf(text, sizeof text, "%.1f s (%s)", static_cast<double>(since) / 1e9, clock);
  return text;
}

}  // namespace

void TopSink::begin(const formats::TraceHeader& header,
                    const std::vector<formats::ProbeInfo>& probes) {
  header_ = header;
  replay_ = std::make_unique<analysis::CallReplay>(probes);
  profile_ = std::make_unique<analysis::ProfileBuilder>(*replay_, probes);
  profile_->long_names(opt_.long_names);
  next_ = header.start_mono_ns + interval_ns_;
  view_.start();
}

void TopSink::events(std::span<const formats::Event> events) {
  for (const auto& ev : events) replay_->add(ev);
}

bool TopSink::tick(uint64_t now) {
  if (view_.quit()) return true;
  if (now < next_) return false;
  show(profile_->snapshot(), now, false);
  while (next_ <= now) next_ += interval_ns_;
  return false;
}

void TopSink::end(const formats::TraceHeader& header,
                  const std::vector<formats::ThreadInfo>& threads,
                  const formats::LostCounts& lost) {
  header_ = header;
  replay_->finish(header.end_mono_ns);
  show(profile_->result(threads, lost), header.end_mono_ns, true);
}

void TopSink::show(const analysis::Profile& profile, uint64_t now, bool last) {
  TopFrame frame;
  frame.last = last;
  uint64_t calls = 0;
  for (const auto& f : profile.functions) calls += f.calls;
  frame.title = std::string(last ? "end, " : "") + when(header_, now) + ": pid " +
                std::to_string(header_.target_pid) + ", " + base::plural(calls, "call") + " of " +
                base::plural(profile.functions.size(), "function");
  if (!profile.functions.empty()) {
    const std::vector<std::string> no_warnings;
    const analysis::ReportInput in{header_, profile, no_warnings};
    // The last table is printed whole, where it stays.
    frame.table = analysis::render_function_table(in, opt_, last ? 0 : view_.max_rows());
  }
  view_.show(frame);
}

}  // namespace atrace::tools
