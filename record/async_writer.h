// The trace file's events are written by a thread of their own. The drain
// loop must come by the lanes and rings on time whatever the disk does: a
// write(2) held for a second by dirty-page throttling (another process
// writing gigabytes) stopped the drains, and a lane's worth of records
// was lost (docs/BENCHMARKS.md, "Recorder throughput"). Batches wait in a
// queue bounded in events; past the bound the drain loop waits, and the
// programs count what the full buffers then drop, as before. The header
// and probe table go through the same queue, first: the drain loop starts
// while they are written.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "formats/trace_types.h"
#include "formats/trace_writer.h"

namespace atrace {

class AsyncEventWriter {
 public:
  // Writes through `w`, which must outlive this; header and probes are
  // already written.
  explicit AsyncEventWriter(formats::TraceWriter& w, size_t max_queued_events = 2'000'000);
  // Writes what is queued (unless a write failed), then stops the thread.
  ~AsyncEventWriter();
  AsyncEventWriter(const AsyncEventWriter&) = delete;
  AsyncEventWriter& operator=(const AsyncEventWriter&) = delete;

  // Queues a write to run on the thread, in order with the batches (the
  // header, the probe table).
  void run(std::function<void()> job);
  // Queues a batch; an empty one too: the writer flushes its blocks by age.
  // Throws the formats::WriteError the thread met, once it has.
  void write_events(std::vector<formats::Event>&& events);
  // Returns once every queued batch is written; throws as write_events.
  void flush();

 private:
  struct Job {
    std::vector<formats::Event> events;  // or
    std::function<void()> fn;
  };
  void serve();
  void push(Job&& job);  // with mu_ held
  void rethrow_error();  // with mu_ held

  formats::TraceWriter& w_;
  const size_t max_queued_;
  std::mutex mu_;
  std::condition_variable work_, room_;
  std::deque<Job> queue_;
  size_t queued_events_ = 0;
  bool writing_ = false;  // the thread holds a batch
  bool stop_ = false;
  std::exception_ptr error_;
  std::thread thread_;  // last: started once the rest is set
};

}  // namespace atrace
