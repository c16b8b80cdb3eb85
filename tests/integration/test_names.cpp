// Function names as the user sees them (issue 19): short names by default
// in every view, the full demangled ones with --long-names, both in the
// JSON report, and selectors and --callers/--callees taking short names and
// globs. On target_cpp, whose functions and call counts are known:
// ns::Widget::poke(int) K times, ns::add<int>(int, int) A times,
// ns::add<double>(double, double) B times, ns::early_init() once.
#include <map>

#include "tests/integration/fixture.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

class Names : public IntegrationTest {
 public:
  using IntegrationTest::file;
  using IntegrationTest::record;
  Result run_report(const std::string& trace) { return report(trace); }

 protected:
  // Records target_cpp 7 11 13 with `select`; the trace's path.
  std::string record_cpp(const std::string& select) {
    std::string out = file("cpp.data");
    Result r = record(out, select, {Paths::target_cpp, "7", "11", "13", tag_arg()});
    EXPECT_TRUE(r.exited(0)) << r.describe();
    return out;
  }
  Result report(const std::string& trace, std::vector<std::string> extra = {}) {
    std::vector<std::string> argv = {Paths::atrace, "report", "-i", trace};
    argv.insert(argv.end(), extra.begin(), extra.end());
    Result r = run(argv);
    EXPECT_TRUE(r.exited(0)) << r.describe();
    return r;
  }
};

// The table's row for `name`: the line ending with it.
bool has_row(const std::string& text, const std::string& name, const std::string& calls) {
  size_t pos = text.find("  " + name + "\n");
  if (pos == std::string::npos) return false;
  std::string line = text.substr(text.rfind('\n', pos) + 1, pos - text.rfind('\n', pos) - 1);
  return line.find(calls + "  ") != std::string::npos;
}

TEST_F(Names, ReportShowsShortNamesTemplatesOnlyWhereNeeded) {
  std::string trace = record_cpp("ns::*");
  Result r = report(trace);
  // Two instances of ns::add: told apart by their template arguments.
  EXPECT_TRUE(has_row(r.out, "ns::add<int>", "11")) << r.out;
  EXPECT_TRUE(has_row(r.out, "ns::add<double>", "13")) << r.out;
  EXPECT_TRUE(has_row(r.out, "ns::Widget::poke", "7")) << r.out;
  EXPECT_TRUE(has_row(r.out, "ns::early_init", "1")) << r.out;
  EXPECT_EQ(r.out.find("(int"), std::string::npos) << "no parameter list:\n" << r.out;

  Result full = report(trace, {"--long-names"});
  EXPECT_TRUE(has_row(full.out, "int ns::add<int>(int, int)", "11")) << full.out;
  EXPECT_TRUE(has_row(full.out, "double ns::add<double>(double, double)", "13")) << full.out;
  EXPECT_TRUE(has_row(full.out, "ns::Widget::poke(int)", "7")) << full.out;
  EXPECT_TRUE(has_row(full.out, "ns::early_init()", "1")) << full.out;
}

TEST_F(Names, JsonKeepsTheFullNameAndAddsTheShortOne) {
  std::string trace = record_cpp("ns::*");
  auto rep = report_json(trace);
  ASSERT_TRUE(rep);
  std::map<std::string, std::pair<std::string, long long>> rows;
  for (const auto& f : (*rep)["functions"])
    rows[f["name"].get<std::string>()] = {f["short_name"].get<std::string>(),
                                          f["calls"].get<long long>()};
  using Row = std::pair<std::string, long long>;
  EXPECT_EQ(rows["int ns::add<int>(int, int)"], Row("ns::add<int>", 11));
  EXPECT_EQ(rows["double ns::add<double>(double, double)"], Row("ns::add<double>", 13));
  EXPECT_EQ(rows["ns::Widget::poke(int)"], Row("ns::Widget::poke", 7));
  EXPECT_EQ(rows["ns::early_init()"], Row("ns::early_init", 1));
  EXPECT_EQ(rows.size(), 4u) << function_names(*rep);
}

TEST_F(Names, SelectorByShortNameTakesEveryInstance) {
  // "ns::add" is the short name of both template instances.
  std::string trace = record_cpp("ns::add");
  auto rep = report_json(trace);
  ASSERT_TRUE(rep);
  EXPECT_EQ(calls_of(*rep, "ns::add<int>"), 11);
  EXPECT_EQ(calls_of(*rep, "ns::add<double>"), 13);
  EXPECT_EQ((*rep)["functions"].size(), 2u) << function_names(*rep);
}

TEST_F(Names, CallersAndCalleesTakeShortNamesAndGlobs) {
  std::string trace = record_cpp("ns::*");
  Result callers = report(trace, {"--callers=ns::Widget::*"});
  EXPECT_NE(callers.out.find("Callers of ns::Widget::poke (7 calls"), std::string::npos)
      << callers.out;
  // A short name naming two functions shows both.
  Result both = report(trace, {"--callers=ns::add"});
  EXPECT_NE(both.out.find("Callers of ns::add<int> (11 calls"), std::string::npos) << both.out;
  EXPECT_NE(both.out.find("Callers of ns::add<double> (13 calls"), std::string::npos) << both.out;
  Result none = run({Paths::atrace, "report", "-i", trace, "--callers=ns::nothing*"});
  std::string line = expect_one_error_line(none);
  EXPECT_NE(line.find("ns::nothing*"), std::string::npos) << line;
}

TEST_F(Names, ExportsShowShortNames) {
  std::string trace = record_cpp("ns::*");
  std::string folded = file("cpp.folded");
  Result r =
      run({Paths::atrace, "convert", "-i", trace, "--to=folded", "-o", folded, "--weight=calls"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  Result cat = run({"/bin/cat", folded});
  // Each top-level function one line, weighed by its calls.
  EXPECT_NE(cat.out.find("ns::add<int> 11\n"), std::string::npos) << cat.out;
  EXPECT_NE(cat.out.find("ns::add<double> 13\n"), std::string::npos) << cat.out;
  EXPECT_NE(cat.out.find("ns::Widget::poke 7\n"), std::string::npos) << cat.out;
  r = run({Paths::atrace, "convert", "-i", trace, "--to=folded", "-o", folded, "--weight=calls",
           "--long-names"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  cat = run({"/bin/cat", folded});
  EXPECT_NE(cat.out.find("int ns::add<int>(int, int) 11\n"), std::string::npos) << cat.out;
}

// Rust, both manglings: demangled (no hash, no "_R..."), shown short,
// selected by demangled names, told apart where generic instances need it.
// target_rust is built by tests/targets when Debian's rustc is installed
// (make deps-test installs it).
void rust_names(Names& t, const char* binary) {
  if (!*binary) {
    if (in_ci()) FAIL() << "target_rust not built: rustc (Debian) is missing";
    GTEST_SKIP() << "rustc not installed: target_rust not built";
  }
  std::string out = t.file("rust.data");
  Result r = t.record(out, "r::shop::*", {binary, "9"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  EXPECT_NE(r.out.find("compute=9"), std::string::npos) << r.out;
  auto rep = report_json(out);
  ASSERT_TRUE(rep);
  std::map<std::string, long long> calls;
  for (const auto& f : (*rep)["functions"])
    calls[f["short_name"].get<std::string>()] += f["calls"].get<long long>();
  EXPECT_EQ(calls["r::shop::Widget::compute"], 9) << function_names(*rep);
  // generic::<u8> and generic::<&str> are two functions: v0 names them
  // apart; legacy mangling names both "r::shop::generic" (only the dropped
  // hash differs), and the JSON has them as two rows of one name.
  long long generic = 0;
  for (const auto& [name, n] : calls)
    if (name.rfind("r::shop::generic", 0) == 0) generic += n;
  EXPECT_EQ(generic, 3 + 1) << function_names(*rep);
  for (const auto& f : (*rep)["functions"]) {
    std::string name = f["name"];
    EXPECT_EQ(name.find("_R"), std::string::npos) << name;
    EXPECT_EQ(name.find("::h"), std::string::npos) << "hash kept: " << name;
  }
  Result text = t.run_report(out);
  EXPECT_NE(text.out.find("  r::shop::Widget::compute\n"), std::string::npos) << text.out;
}

TEST_F(Names, RustV0) { rust_names(*this, TARGET_RUST_V0_BIN); }
TEST_F(Names, RustLegacy) { rust_names(*this, TARGET_RUST_LEGACY_BIN); }

TEST_F(Names, InfoShowsTheCommandLineShellQuoted) {
  std::string trace = record_cpp("ns::*");
  Result r = run({Paths::atrace, "info", "-i", trace});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  // The glob would expand in a shell: quoted, ready to paste.
  EXPECT_NE(r.out.find(" '--select=ns::*' "), std::string::npos) << r.out;
}

// The text table's columns and order, on target_c 10 (leaf 30 calls,
// middle 10, sleeper 3, outer 1), recorded without the sched group.
class Table : public IntegrationTest {
 protected:
  void SetUp() override {
    IntegrationTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    trace_ = file("table.data");
    Result r = record(trace_, "leaf,middle,outer,sleeper", {Paths::target_c, "10", tag_arg()},
                      {"--kernel=proc"});
    ASSERT_TRUE(r.exited(0)) << r.describe();
  }
  std::string report(std::vector<std::string> extra) {
    std::vector<std::string> argv = {Paths::atrace, "report", "-i", trace_};
    argv.insert(argv.end(), extra.begin(), extra.end());
    Result r = run(argv);
    EXPECT_TRUE(r.exited(0)) << r.describe();
    // The table: after the summary line and a blank line, up to the
    // footnotes' blank line if any.
    std::string table = r.out.substr(r.out.find("\n\n") + 2);
    size_t end = table.find("\n\n");
    return end == std::string::npos ? table : table.substr(0, end + 1);
  }
  std::string trace_;
};

TEST_F(Table, DefaultColumnsKeepMin) {
  std::string t = report({});
  std::string head = t.substr(0, t.find('\n'));
  for (const char* col : {"Calls", "Total", "Self", "Avg", "Min", "Max", "Function"})
    EXPECT_NE(head.find(col), std::string::npos) << col << " missing: " << head;
  // No kernel group that has columns was recorded: none are shown.
  EXPECT_EQ(head.find("Off-CPU"), std::string::npos) << head;
  EXPECT_EQ(head.find("Faults"), std::string::npos) << head;
}

TEST_F(Table, FieldsAndMultiKeySort) {
  auto rep = report_json(trace_);
  ASSERT_TRUE(rep);
  ASSERT_EQ(calls_of(*rep, "leaf"), 30);
  ASSERT_EQ(calls_of(*rep, "sleeper"), 3);
  // Off-CPU was not measured: "-", and as a sort key every row ties, so
  // the second key decides.
  EXPECT_EQ(report({"--fields=calls,offcpu", "--sort=offcpu,calls"}),
            "Calls  Off-CPU  Function\n"
            "   30        -  leaf\n"
            "   10        -  middle\n"
            "    3        -  sleeper\n"
            "    1        -  outer\n");
  EXPECT_EQ(report({"--fields=calls", "--sort=offcpu,name"}),
            "Calls  Function\n"
            "   30  leaf\n"
            "   10  middle\n"
            "    1  outer\n"
            "    3  sleeper\n");
  Result bad = run({Paths::atrace, "report", "-i", trace_, "--sort=calls,nope"});
  std::string line = expect_one_error_line(bad);
  EXPECT_NE(line.find("--sort: 'nope' is not a column"), std::string::npos) << line;
  bad = run({Paths::atrace, "report", "-i", trace_, "--fields=calls,name"});
  line = expect_one_error_line(bad);
  EXPECT_NE(line.find("--fields: 'name' is not a column"), std::string::npos) << line;
}

}  // namespace
}  // namespace atrace::it
