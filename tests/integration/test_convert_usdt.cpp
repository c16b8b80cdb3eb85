// USDT probes through atrace convert, on target_usdt: each hit is an instant
// event with its arguments (Chrome JSON args, Perfetto debug annotations,
// Paje events, CSV rows), and a NAME__begin/__end pair is a slice like a
// function call.
#include <map>

#include "tests/integration/convert_util.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

class ConvertUsdt : public IntegrationTest {
 protected:
  std::string record_usdt() {
    std::string trace = file("u.data");
    Result r = record(trace, "", {Paths::target_usdt, "100", tag_arg()},
                      {"--usdt=app:tick,app:request(str,int),app:phase__*", "--no-kernel"});
    EXPECT_TRUE(r.exited(0)) << r.describe();
    EXPECT_NE(r.out.find("tick=100 request=100 index=60 api=40"), std::string::npos) << r.out;
    return trace;
  }
};

TEST_F(ConvertUsdt, ChromeInstantsCarryTheArguments) {
  std::string trace = record_usdt(), json = file("u.json");
  ASSERT_TRUE(convert(trace, "chrome", json));
  nlohmann::json doc = nlohmann::json::parse(read_whole(json));
  std::vector<long long> ticks;
  std::map<std::string, int> paths;
  int phases = 0;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "i" && e["name"] == "app:tick") {
      EXPECT_EQ(e["cat"], "usdt");
      ticks.push_back(e["args"]["arg1"].get<long long>());
    } else if (e["ph"] == "i" && e["name"] == "app:request") {
      std::string path = e["args"]["arg1"];
      long long code = e["args"]["arg2"];
      paths[path]++;
      EXPECT_EQ(code, path == "/index" ? 200 : -1) << e.dump();
    } else if (e["ph"] == "X" && e["name"] == "app:phase") {
      ++phases;
      EXPECT_GE(e["dur"].get<double>(), 20000.0) << "usleep(20 ms) inside";
    }
  }
  ASSERT_EQ(ticks.size(), 100u);
  for (size_t i = 0; i < ticks.size(); ++i) EXPECT_EQ(ticks[i], static_cast<long long>(i));
  EXPECT_EQ(paths["/index"], 60);
  EXPECT_EQ(paths["/api/v1"], 40);
  EXPECT_EQ(phases, 3);
}

TEST_F(ConvertUsdt, PajeEventsAndCsvRows) {
  REQUIRE_TOOL("pj_dump");
  std::string trace = record_usdt(), paje = file("u.paje"), csv = file("u.csv");
  ASSERT_TRUE(convert(trace, "paje", paje));
  Result d = run({"pj_dump", paje});
  ASSERT_TRUE(d.exited(0)) << d.describe();
  std::map<std::string, int> events, states;
  std::istringstream in(d.out);
  for (std::string line; std::getline(in, line);) {
    std::string value = line.substr(line.rfind(", ") + 2);
    if (line.rfind("Event, ", 0) == 0) events[value]++;
    if (line.rfind("State, ", 0) == 0) states[value]++;
  }
  EXPECT_EQ(events["app:tick"], 100);
  EXPECT_EQ(events["app:request"], 100);
  EXPECT_EQ(states["app:phase"], 3);

  ASSERT_TRUE(convert(trace, "csv", csv));
  std::vector<std::vector<std::string>> rows;
  std::string error;
  ASSERT_TRUE(parse_csv(read_whole(csv), rows, error)) << error;
  int index = 0, api = 0;
  for (const auto& row : rows) {
    if (row.size() < 11 || row[4] != "usdt" || row[5] != "app:request") continue;
    if (row[10] == "arg1=\"/index\" arg2=200") ++index;
    if (row[10] == "arg1=\"/api/v1\" arg2=-1") ++api;
  }
  EXPECT_EQ(index, 60);
  EXPECT_EQ(api, 40);
}

}  // namespace
}  // namespace atrace::it
