// Where a recording's fixed cost goes: the time of each stage of the
// recorder (recorder.cpp) on the monotonic clock, printed by `record -v`,
// one line a phase, so that start-up and teardown can be measured
// (bench/startup.sh) and each stage's share is plain.
//
//   PhaseTimes t;
//   t.begin();            // now
//   ...; t.end("plan");   // "plan" took from the last end (or begin) to now
//   t.print(stderr);      // "atrace: phase plan: 1.2 ms"
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace atrace {

// The phases `record -v` names, in the order they happen.
namespace phase {
inline constexpr const char* kFeatures = "features";
inline constexpr const char* kPlan = "plan";
inline constexpr const char* kLoad = "load+verify";
inline constexpr const char* kCalibration = "calibration";
inline constexpr const char* kAttach = "attach";
inline constexpr const char* kFirstEvent = "first event";
inline constexpr const char* kDetach = "detach";
inline constexpr const char* kWrite = "write";
inline constexpr const char* kTeardown = "teardown";
}  // namespace phase

class PhaseTimes {
 public:
  struct Phase {
    std::string name;
    uint64_t ns = 0;
    std::string note;  // "cached", "none": said after the time
  };
  // The start of the first phase.
  void begin();
  // The phase that ran since the last end() (or begin()) is over.
  void end(const std::string& name, std::string note = {});
  // A phase measured elsewhere (it overlaps others: the first event).
  void add(const std::string& name, uint64_t ns, std::string note = {});
  // Restarts the running phase now: the time since the last end() belongs
  // to none of them (the recording itself).
  void skip();
  const std::vector<Phase>& phases() const { return phases_; }
  // "atrace: phase NAME: 1.2 ms[ (NOTE)]", one line each.
  std::string text() const;
  void print(std::FILE* out) const;

 private:
  uint64_t last_ = 0;
  std::vector<Phase> phases_;
};

}  // namespace atrace
