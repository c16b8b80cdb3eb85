// atrace-demo: the program `make demo` records and reports.
//
//   build/atrace record -o build/demo.data --select='demo::*' -- build/atrace-demo
//   build/atrace report -i build/demo.data
//
// Three worker threads each process 16 batches of 50 records. Expected calls
// (exact; the program prints its own counts at the end to compare):
//
//   function (as demangled)                               calls  what it shows
//   demo::run(int)                                            1  the whole run, main thread
//   demo::run_worker(int, demo::Totals&)                      3  one per worker thread
//   demo::process_batch(int, int, demo::Totals&)             48  3 workers x 16 batches
//   demo::parse_record(int, int)                           2400  48 batches x 50 records
//   demo::checksum(std::basic_string_view<char, ...>)      2400  CPU-bound, from parse_record
//   demo::accumulate<long>(long, long)                     2400  template, one per record
//   demo::accumulate<double>(double, double)                 48  same template, one per batch
//   demo::wait_for_io()                                      48  sleeps 10 ms: off-CPU time
//   demo::write_log(int, int)                                48  8 write(2) to /dev/null each
//
// Run time about 0.5 s on two cores: the checksums' CPU work (three workers)
// plus 16 x 10 ms of wait_for_io per worker.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

// Keep each demo function a real call of its own (no inlining, cloning or
// folding), so the counts above hold at any optimisation level.
#if defined(__clang__)
#define DEMO_TRACED __attribute__((noinline, used))
#else
#define DEMO_TRACED __attribute__((noipa, used))
#endif

namespace demo {

constexpr int kWorkers = 3;
constexpr int kBatches = 16;
constexpr int kRecordsPerBatch = 50;
constexpr int kLogWritesPerCall = 8;
// CPU work per record, so checksum dominates the profile (~0.5 s in all).
constexpr int kChecksumRounds = 7000;

struct Totals {
  long records = 0;
  long checksum = 0;
  double batch_sum = 0;
};

int null_fd = -1;

DEMO_TRACED long checksum(std::string_view text) {
  unsigned long h = 1469598103934665603ul;
  for (int round = 0; round < kChecksumRounds; ++round)
    for (unsigned char c : text) h = (h ^ c) * 1099511628211ul;
  return static_cast<long>(h & 0x7fffffff);
}

template <typename T>
DEMO_TRACED T accumulate(T total, T value) {
  return total + value;
}
template long accumulate<long>(long, long);
template double accumulate<double>(double, double);

DEMO_TRACED long parse_record(int worker, int index) {
  char line[64];
  int n = std::snprintf(line, sizeof line, "record %d/%d;value=%d", worker, index, index * 7);
  return checksum(std::string_view(line, static_cast<size_t>(n)));
}

// Stands for a blocking read: the thread is off-CPU for 10 ms.
DEMO_TRACED void wait_for_io() {
  timespec ts{0, 10 * 1000 * 1000};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

// System calls: kLogWritesPerCall write(2) calls on /dev/null.
DEMO_TRACED void write_log(int worker, int batch) {
  char line[64];
  int n = std::snprintf(line, sizeof line, "worker %d finished batch %d\n", worker, batch);
  for (int i = 0; i < kLogWritesPerCall; ++i)
    if (write(null_fd, line, static_cast<size_t>(n)) < 0) std::perror("write");
}

DEMO_TRACED void process_batch(int worker, int batch, Totals& totals) {
  long sum = 0;
  for (int i = 0; i < kRecordsPerBatch; ++i) {
    sum = accumulate<long>(sum, parse_record(worker, batch * kRecordsPerBatch + i));
    ++totals.records;
  }
  totals.checksum += sum;
  totals.batch_sum = accumulate<double>(totals.batch_sum, static_cast<double>(sum) / 1e6);
  wait_for_io();
  write_log(worker, batch);
}

DEMO_TRACED void run_worker(int worker, Totals& totals) {
  for (int batch = 0; batch < kBatches; ++batch) process_batch(worker, batch, totals);
}

DEMO_TRACED long run(int workers) {
  std::vector<Totals> totals(static_cast<size_t>(workers));
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w)
    threads.emplace_back([w, &totals] { run_worker(w, totals[static_cast<size_t>(w)]); });
  for (auto& t : threads) t.join();
  long records = 0;
  for (const auto& t : totals) records += t.records;
  return records;
}

}  // namespace demo

int main() {
  demo::null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (demo::null_fd < 0) {
    std::perror("atrace-demo: /dev/null");
    return 1;
  }
  long records = demo::run(demo::kWorkers);
  const long batches = long{demo::kWorkers} * demo::kBatches;
  std::printf("atrace-demo: %d workers, %ld batches, %ld records\n", demo::kWorkers, batches,
              records);
  std::printf(
      "expected calls: run=1 run_worker=%d process_batch=%ld parse_record=%ld "
      "checksum=%ld accumulate<long>=%ld accumulate<double>=%ld wait_for_io=%ld "
      "write_log=%ld (write(2) calls: %ld)\n",
      demo::kWorkers, batches, records, records, records, batches, batches, batches,
      batches * demo::kLogWritesPerCall);
  close(demo::null_fd);
  return 0;
}
