// A big trace read in bounded memory (docs/BENCHMARKS.md, "Big traces"):
// format_synth writes a synthetic trace of many threads and many blocks,
// and report, convert --to=tables and --to=clickhouse read it under
// `prlimit --as=512M` (address space: a reader that mapped or loaded the
// file, or held a row per call, could not). The totals are exact: the
// synthetic threads' calls all nest and close, so the calls are
// (events - threads) / 2, one ThreadExit per thread.
//
// Size: ATRACE_BIG_TRACE_MB (default 256; the 2 GB is
// ATRACE_BIG_TRACE_MB=2048, about 20 minutes on a 2-core machine, too long
// for every run: the default takes 155 s; the 2 GB measurements are in
// docs/BENCHMARKS.md).
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "tests/integration/clickhouse_server.h"
#include "tests/integration/convert_util.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

constexpr unsigned kThreads = 1000;
constexpr unsigned kFunctions = 100;
constexpr const char* kLimit = "--as=536870912";  // 512 MiB of address space
// The synthetic stream of 1000 threads takes about 3.64 bytes per event.
constexpr double kBytesPerEvent = 3.64;

uint64_t trace_megabytes() {
  const char* v = std::getenv("ATRACE_BIG_TRACE_MB");
  return v && *v ? std::strtoull(v, nullptr, 10) : 256;
}

// A command under the address-space limit; minutes, not the default minute.
Result limited(std::vector<std::string> argv) {
  argv.insert(argv.begin(), {"prlimit", kLimit});
  return run(std::move(argv), milliseconds(3600 * 1000));
}

// Lines of a file, read in pieces (a table file of millions of rows).
uint64_t count_lines(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> buf(1 << 20);
  uint64_t n = 0;
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    for (std::streamsize i = 0; i < in.gcount(); i++) n += buf[static_cast<size_t>(i)] == '\n';
  }
  return n;
}

class BigTrace : public IntegrationTest {
 protected:
  // Writes the trace; `events` is what format_synth wrote.
  void make_trace(const std::string& path) {
    const uint64_t n =
        static_cast<uint64_t>(static_cast<double>(trace_megabytes() << 20) / kBytesPerEvent);
    Result r = run({FORMAT_SYNTH_BIN, "-n", std::to_string(n), "-t", std::to_string(kThreads), "-f",
                    std::to_string(kFunctions), "-o", path},
                   milliseconds(3600 * 1000));
    ASSERT_TRUE(r.exited(0)) << r.describe();
    ASSERT_EQ(std::sscanf(r.out.c_str(), "events=%llu", &events), 1) << r.out;
    std::fprintf(stderr, "big trace: %s", r.out.c_str());
  }
  uint64_t calls() const { return (events - kThreads) / 2; }

  unsigned long long events = 0;
};

TEST_F(BigTrace, ReportedConvertedAndLoadedUnder512MiB) {
  const std::string trace = file("big.atrace");
  ASSERT_NO_FATAL_FAILURE(make_trace(trace));

  Result rep = limited({Paths::atrace, "report", "-i", trace, "--format=json"});
  ASSERT_TRUE(rep.exited(0)) << rep.describe();
  auto doc = nlohmann::json::parse(rep.out);
  EXPECT_EQ(doc["events"].get<uint64_t>(), events);
  EXPECT_EQ(doc["threads"].size(), kThreads);
  uint64_t reported = 0, unfinished = 0;
  for (const auto& f : doc["functions"]) {
    reported += f["calls"].get<uint64_t>();
    unfinished += f["unfinished"].get<uint64_t>();
  }
  EXPECT_EQ(reported, calls());
  EXPECT_EQ(unfinished, 0u);

  // One row per (thread, function): the largest report, written as it is
  // made (about 200 MB of JSON for the 256 MB trace), not held.
  Result threads = limited({"sh", "-c", "\"$@\" > /dev/null", "sh", Paths::atrace, "report", "-i",
                            trace, "--threads", "--format=json"});
  EXPECT_TRUE(threads.exited(0)) << threads.describe();

  const std::string dir = file("tables");
  Result tables = limited({Paths::atrace, "convert", "-i", trace, "--to=tables", "-o", dir});
  ASSERT_TRUE(tables.exited(0)) << tables.describe();
  EXPECT_EQ(count_lines(dir + "/calls.tsv"), calls());
  std::istringstream traces(read_whole(dir + "/traces.tsv"));
  std::string field;
  for (int i = 0; i <= 16 && std::getline(traces, field, '\t'); i++) {
  }
  EXPECT_EQ(field, std::to_string(calls())) << "traces.calls";
  std::filesystem::remove_all(dir);  // the table files are as big as the trace

  REQUIRE_TOOL("clickhouse-server");
  REQUIRE_TOOL("clickhouse-client");
  std::filesystem::create_directories(file("ch"));
  ClickHouseServer server(file("ch"));
  ASSERT_TRUE(server.ok()) << server.log();
  Result load = limited(
      {Paths::atrace, "convert", "-i", trace, "--to=clickhouse", "-o", server.url("atrace")});
  ASSERT_TRUE(load.exited(0)) << load.describe();
  Result count = server.client("SELECT count() FROM atrace.calls");
  ASSERT_TRUE(count.exited(0)) << count.describe();
  EXPECT_EQ(count.out, std::to_string(calls()) + "\n");
}

}  // namespace
}  // namespace atrace::it
