// atrace convert --to=csv on a real recording: one row per event (as many
// as `atrace info` counts), RFC 4180 records that Python's csv module reads
// back the same, and per function as many entry rows as the report's calls.
#include <map>

#include "tests/integration/convert_util.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

class ConvertCsv : public IntegrationTest {};

TEST_F(ConvertCsv, OneRowPerEventAndItParses) {
  std::string trace = file("c.data"), csv = file("c.csv");
  // --filter-min-calls: leaf's 150 calls of nanoseconds are all kept.
  Result r = record(trace, "leaf,middle,outer,sleeper", {Paths::target_c, "50", tag_arg()},
                    {"--filter-min-calls=1000"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  ASSERT_TRUE(convert(trace, "csv", csv));
  std::vector<std::vector<std::string>> rows;
  std::string error;
  ASSERT_TRUE(parse_csv(read_whole(csv), rows, error)) << error;
  ASSERT_FALSE(rows.empty());
  const std::vector<std::string> header = {"ts_ns",  "pid",   "tid",  "cpu",  "kind", "name",
                                           "module", "flags", "arg0", "arg1", "text"};
  EXPECT_EQ(rows[0], header);
  EXPECT_EQ(static_cast<long long>(rows.size()) - 1, info_event_count(trace));

  std::map<std::string, long long> entries;
  long long last_ts = 0;
  for (size_t i = 1; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].size(), header.size()) << "row " << i;
    long long ts = std::stoll(rows[i][0]);
    EXPECT_GE(ts, last_ts) << "rows in time order";
    last_ts = ts;
    if (rows[i][4] == "entry") {
      entries[rows[i][5]]++;
      EXPECT_EQ(rows[i][6], "target_c");
    }
  }
  auto rep = report_json(trace);
  ASSERT_TRUE(rep);
  for (const auto& f : (*rep)["functions"])
    EXPECT_EQ(entries[f["name"]], f["calls"].get<long long>()) << f["name"];
  EXPECT_EQ(entries["leaf"], 150);

  // A real consumer: Python's csv module (the reader pandas' python engine
  // follows) sees the same number of records of the same width.
  REQUIRE_TOOL("python3");
  Result py = run({"python3", "-c",
                   "import csv,sys\n"
                   "rows=list(csv.reader(open(sys.argv[1],newline='',encoding='utf-8')))\n"
                   "assert all(len(r)==len(rows[0]) for r in rows), 'ragged'\n"
                   "print(len(rows)-1)\n",
                   csv});
  ASSERT_TRUE(py.exited(0)) << py.describe();
  EXPECT_EQ(std::stoll(py.out), static_cast<long long>(rows.size()) - 1);
}

}  // namespace
}  // namespace atrace::it
