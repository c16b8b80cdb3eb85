// `atrace top`'s event sink (record/event_sink.h): the recorder's events go
// through the one call replay (analysis/call_replay.h) into the profile,
// and every interval the function table of the calls that ended so far,
// rendered as `report` renders it (output/report.h), goes to a view: the
// live screen (top_screen.h) or plain text, one table per interval.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "analysis/analysis.h"
#include "output/output.h"
#include "record/record.h"

namespace atrace::tools {

struct TopFrame {
  std::string title;  // when, how long after the start, how much was seen
  std::string table;  // column names and rows; empty while no call ended
  bool last = false;  // the recording ended: the whole recording's table
};

// Where the frames go.
class TopView {
 public:
  virtual ~TopView() = default;
  // The probes are in: the view may take the terminal.
  virtual void start() {}
  // Rows of the table it can show while refreshing (0: all); the last
  // frame's table has them all.
  virtual size_t max_rows() = 0;
  virtual void show(const TopFrame& frame) = 0;
  // Asked at every wake-up of the recorder: the person wants to stop.
  virtual bool quit() { return false; }
};

class TopSink : public EventSink {
 public:
  TopSink(TopView& view, uint64_t interval_ns, const analysis::ReportOptions& opt)
      : view_(view), interval_ns_(interval_ns), opt_(opt) {}

  void begin(const formats::TraceHeader& header,
             const std::vector<formats::ProbeInfo>& probes) override;
  void events(std::span<const formats::Event> events) override;
  bool tick(uint64_t now) override;
  void end(const formats::TraceHeader& header, const std::vector<formats::ThreadInfo>& threads,
           const formats::LostCounts& lost) override;

 private:
  void show(const analysis::Profile& profile, uint64_t now, bool last);

  TopView& view_;
  const uint64_t interval_ns_;
  const analysis::ReportOptions opt_;
  formats::TraceHeader header_;
  std::unique_ptr<analysis::CallReplay> replay_;
  std::unique_ptr<analysis::ProfileBuilder> profile_;
  uint64_t next_ = 0;  // when the next frame is due (CLOCK_MONOTONIC)
};

}  // namespace atrace::tools
