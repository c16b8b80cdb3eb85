// `record --rotate=... --load=URL --rotate-keep=N` (docs/recording-long.md):
// what happens to each file of a series once the recorder has finished it.
//
// The recorder hands each finished file over on its writing thread
// (record/rotate_options.h); this queues it and returns at once, and a
// thread of its own loads it into ClickHouse (output/clickhouse_load.h,
// each file as a trace of its own) and then, when N is given, deletes the
// oldest finished files beyond N, each only once it is loaded (with
// --load): a file that failed to load is kept, and said. Local disk then
// holds at most N finished files and the one being written.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace atrace::tools {

class SeriesFiles {
 public:
  // `url`: empty, no load; `keep`: nullopt, every file kept.
  SeriesFiles(std::string url, std::optional<uint64_t> keep, bool verbose);
  // Waits for the files handed over (finish() not called: on an error).
  ~SeriesFiles();
  SeriesFiles(const SeriesFiles&) = delete;
  SeriesFiles& operator=(const SeriesFiles&) = delete;

  // A file of the series is complete: queued, never waits.
  void done(const std::string& path);
  // After the recording: loads what is queued, says what was loaded;
  // false when a load failed (said when it did).
  bool finish();

 private:
  void serve();
  void handle(const std::string& path);

  const std::string url_;
  const std::optional<uint64_t> keep_;
  const bool verbose_;
  std::mutex mu_;
  std::condition_variable work_;
  std::deque<std::string> queue_;
  bool stop_ = false;
  // The loading thread's own: finished files kept, oldest first.
  std::deque<std::string> kept_;
  uint64_t loaded_ = 0, failed_ = 0, calls_ = 0, deleted_ = 0;
  std::thread thread_;  // last: started once the rest is set
};

}  // namespace atrace::tools
