// `atrace report --html=FILE` on real recordings, read by its real consumer:
// headless Chromium (Debian's chromium package). The page must be
// self-contained (no reference outside itself), its embedded data must say
// what `atrace report --format=json` says (per-function calls and times;
// the flame graph's and the timeline's sums too, on a trace small enough to
// be kept whole), and Chromium must load it without a console message or
// an error and draw it (the page marks <html data-atrace-ready="1"> once
// everything is drawn; errors go into #atrace-errors), and a screenshot
// must come out. Also: the bad-input contract of the option.
#include <dirent.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "tests/integration/fixture.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

using nlohmann::json;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool chromium_present() { return run({"/bin/sh", "-c", "command -v chromium"}).exited(0); }

// The JSON inside <script type="application/json" id="atrace-data">, up to
// the first "</script" (where an HTML parser ends the element).
std::string data_blob(const std::string& page) {
  const std::string open = "<script type=\"application/json\" id=\"atrace-data\">";
  size_t a = page.find(open);
  if (a == std::string::npos) return "";
  a += open.size();
  size_t b = page.find("</script", a);
  return b == std::string::npos ? "" : page.substr(a, b - a);
}

// Width and height from a PNG's IHDR; {0, 0} when it is not a PNG.
std::pair<uint32_t, uint32_t> png_size(const std::string& png) {
  if (png.size() < 24 || png.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0 ||
      png.compare(12, 4, "IHDR") != 0)
    return {0, 0};
  auto be32 = [&](size_t at) {
    return (uint32_t(uint8_t(png[at])) << 24) | (uint32_t(uint8_t(png[at + 1])) << 16) |
           (uint32_t(uint8_t(png[at + 2])) << 8) | uint32_t(uint8_t(png[at + 3]));
  };
  return {be32(16), be32(20)};
}

class ReportHtml : public IntegrationTest {
 protected:
  void SetUp() override {
    IntegrationTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (!chromium_present()) {
      if (in_ci()) FAIL() << "chromium is not installed (make deps installs it)";
      GTEST_SKIP() << "chromium is not installed (make deps installs it)";
    }
  }

  Result atrace(std::vector<std::string> args) {
    args.insert(args.begin(), Paths::atrace);
    return run(args);
  }

  // Headless Chromium on the page: flags that keep it off the network and
  // away from crash reporting, with a profile of its own. `what` is
  // --dump-dom or --screenshot=FILE.
  Result chromium(const std::string& page, const std::string& what) {
    return run(
        {"chromium", "--headless=new", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
         "--v=0", "--virtual-time-budget=5000", "--no-first-run", "--disable-background-networking",
         "--disable-crash-reporter", "--disable-extensions", "--disable-sync",
         "--user-data-dir=" + file("chromium"), "--window-size=1400,1000", what, "file://" + page},
        milliseconds(120000));
  }

  // Chromium loaded the page, ran its script to the end and printed no
  // console message about it (the page itself logs nothing: any message is
  // an error or a warning).
  void expect_renders(const std::string& page) {
    Result dom = chromium(page, "--dump-dom");
    ASSERT_TRUE(dom.exited(0)) << dom.describe();
    // The attributes of <html> (the page's source, dumped too, names them).
    size_t at = dom.out.find("<html");
    ASSERT_NE(at, std::string::npos) << dom.out.substr(0, 2000);
    std::string html_tag = dom.out.substr(at, dom.out.find('>', at) - at);
    EXPECT_NE(html_tag.find("data-atrace-ready=\"1\""), std::string::npos)
        << "the page's script did not finish: " << html_tag;
    EXPECT_EQ(html_tag.find("data-atrace-error"), std::string::npos) << html_tag;
    EXPECT_NE(dom.out.find("<pre id=\"atrace-errors\" hidden=\"\"></pre>"), std::string::npos)
        << "errors shown in the page";
    std::istringstream lines(dom.err);
    for (std::string line; std::getline(lines, line);)
      EXPECT_EQ(line.find(":CONSOLE"), std::string::npos) << line;
  }

  // A screenshot of the page: a PNG of the window's size, not a blank one.
  void expect_screenshot(const std::string& page, const std::string& png_path) {
    Result shot = chromium(page, "--screenshot=" + png_path);
    ASSERT_TRUE(shot.exited(0)) << shot.describe();
    std::string png = read_file(png_path);
    EXPECT_EQ(png_size(png), std::make_pair(1400u, 1000u)) << png.size() << " bytes";
    // A white 1400x1000 PNG compresses to a few KiB; a drawn page does not.
    EXPECT_GT(png.size(), 20000u);
  }
};

TEST_F(ReportHtml, TargetCPageSaysWhatTheReportSaysAndChromiumDrawsIt) {
  std::string trace = file("c.data");
  Result r = record(trace, "leaf,middle,outer,sleeper", {Paths::target_c, "100", tag_arg()},
                    {"--kernel=+syscalls"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  auto rep = report_json(trace);
  ASSERT_TRUE(rep);
  ASSERT_EQ((*rep)["kernel_events"], "sched,syscalls,faults,proc");

  std::string page_path = file("report.html");
  Result h = atrace({"report", "-i", trace, "--html=" + page_path});
  ASSERT_TRUE(h.exited(0)) << h.describe();
  EXPECT_EQ(h.out, "");
  EXPECT_EQ(h.err, "");
  std::string page = read_file(page_path);

  // Self-contained: nothing to fetch.
  for (const char* ref :
       {"src=\"http", "href=\"http", "@import", "url(http", "src=\"//", "<link", "<iframe"})
    EXPECT_EQ(page.find(ref), std::string::npos) << ref;

  json d = json::parse(data_blob(page));  // throws (fails the test) if it does not parse
  ASSERT_EQ(d["functions"].size(), (*rep)["functions"].size());
  for (const auto& f : (*rep)["functions"]) {
    std::string name = f["name"];
    const json* row = nullptr;
    for (const auto& x : d["functions"])
      if (x["name"] == name) row = &x;
    ASSERT_NE(row, nullptr) << name;
    for (const char* key : {"calls", "unfinished", "total_ns", "self_ns", "avg_ns", "max_ns",
                            "min_ns", "offcpu_ns", "syscall_ns", "syscalls", "faults"})
      EXPECT_EQ((*row)[key], f[key]) << name << " " << key;
  }
  EXPECT_EQ(d["kernel"], true);
  EXPECT_EQ(d["meta"]["events"], (*rep)["events"]);

  // The flame graph: target_c has no recursion, so a function's calls and
  // total time summed over its nodes are the report's.
  const json& fl = d["flame"];
  const size_t S = fl["stride"];
  EXPECT_EQ(fl["shown_nodes"], fl["total_nodes"]);
  std::map<std::string, long long> fcalls, ftotal;
  for (size_t i = 1; i < fl["nodes"].size() / S; i++) {
    std::string name = fl["names"][fl["nodes"][i * S + 1].get<size_t>()];
    fcalls[name] += fl["nodes"][i * S + 2].get<long long>();
    ftotal[name] += fl["nodes"][i * S + 3].get<long long>();
  }
  for (const char* fn : {"leaf", "middle", "outer", "sleeper"}) {
    EXPECT_EQ(fcalls[fn], calls_of(*rep, fn)) << fn;
    EXPECT_EQ(ftotal[fn], function_field(*rep, fn, "total_ns")) << fn;
  }

  // The timeline: small enough to be kept whole; a function's spans are its
  // calls and their durations add up to its total; the sleeps show as
  // system calls and off-CPU periods.
  const json& tl = d["timeline"];
  EXPECT_EQ(tl["dropped_spans"], 0);
  const size_t SS = tl["span_stride"];
  std::map<std::string, long long> tcalls, ttotal;
  long long syscalls = 0, offcpu = 0;
  for (size_t i = 0; i < tl["spans"].size() / SS; i++) {
    int kind = tl["spans"][i * SS + 1];
    std::string name = tl["names"][tl["spans"][i * SS + 5].get<size_t>()];
    if (kind == 0) {
      tcalls[name]++;
      ttotal[name] += tl["spans"][i * SS + 4].get<long long>();
    }
    syscalls += kind == 1;
    offcpu += kind == 2;
  }
  for (const char* fn : {"leaf", "middle", "outer", "sleeper"}) {
    EXPECT_EQ(tcalls[fn], calls_of(*rep, fn)) << fn;
    EXPECT_EQ(ttotal[fn], function_field(*rep, fn, "total_ns")) << fn;
  }
  EXPECT_GE(syscalls, 3);  // at least the three nanosleeps
  EXPECT_GE(offcpu, 3);    // blocked in them

  expect_renders(page_path);
  expect_screenshot(page_path, file("report.png"));
}

// What a user does, done by a script added to a copy of the page: the wheel
// over the timeline, a drag, a double-click; clicks in the flame graph and
// on a column header. Each step's outcome (status lines, the table's first
// row) goes into <html data-interactions="JSON"> for --dump-dom.
const char* kInteractions = R"js(
(async function () {
  const later = () => new Promise((ok) => setTimeout(ok, 100));
  const fire = (target, type, x, y, extra) => {
    const init = Object.assign({ clientX: x, clientY: y, bubbles: true, cancelable: true }, extra || {});
    target.dispatchEvent(type === "wheel" ? new WheelEvent(type, init) : new MouseEvent(type, init));
  };
  const r = {};
  const tl = document.getElementById("tl-canvas");
  const ts = document.getElementById("tl-status");
  let b = tl.getBoundingClientRect();
  const mid = b.left + b.width / 2;
  r.tl_initial = ts.textContent;
  fire(tl, "wheel", mid, b.top + 40, { deltaY: -1000 });
  await later();
  r.tl_zoomed = ts.textContent;
  fire(tl, "mousedown", mid, b.top + 40);
  fire(window, "mousemove", mid - 200, b.top + 40);
  fire(window, "mouseup", mid - 200, b.top + 40);
  await later();
  r.tl_panned = ts.textContent;
  fire(tl, "dblclick", mid, b.top + 40);
  await later();
  r.tl_reset = ts.textContent;
  const fg = document.getElementById("fg-canvas");
  const fs = document.getElementById("fg-status");
  b = fg.getBoundingClientRect();
  const right = b.right - 3, left = b.left + 3, row0 = b.top + 9, row1 = b.top + 27;
  fire(fg, "mousemove", right, row1);
  r.fg_right = fs.textContent;
  fire(fg, "click", left, row1);
  await later();
  fire(fg, "mousemove", right, row1);
  r.fg_right_zoomed = fs.textContent;
  fire(fg, "click", left, row0);
  await later();
  fire(fg, "mousemove", right - 1, row1);
  r.fg_right_unzoomed = fs.textContent;
  const th = document.querySelector('#fn-table th[data-key="calls"]');
  const first = () => document.querySelector("#fn-table tbody tr td").textContent;
  r.table_initial = first();
  th.click();
  r.table_calls_desc = first();
  th.click();
  r.table_calls_asc = first();
  document.documentElement.setAttribute("data-interactions", JSON.stringify(r));
}());
)js";

std::string html_unescape(std::string s) {
  const std::pair<const char*, const char*> entities[] = {{"&quot;", "\""},     {"&lt;", "<"},
                                                          {"&gt;", ">"},        {"&#39;", "'"},
                                                          {"&nbsp;", "\u00a0"}, {"&amp;", "&"}};
  for (const auto& [from, to] : entities)
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + std::strlen(to)))
      s.replace(at, std::strlen(from), to);
  return s;
}

// "(9.76 ms of 72.1 ms)" of "view: +A to +B (9.76 ms of 72.1 ms); ..."
std::string view_width(const std::string& status) {
  size_t a = status.find('('), b = status.find(')');
  return a == std::string::npos || b == std::string::npos ? "" : status.substr(a, b - a + 1);
}

// target_c: sleeper (3 x 20 ms) is the widest frame under the root, and the
// first row by total; outer is the rightmost frame; leaf has the most calls
// and outer the fewest.
TEST_F(ReportHtml, WheelDragAndClicksDoWhatTheyShouldInChromium) {
  std::string trace = file("c.data");
  Result r = record(trace, "leaf,middle,outer,sleeper", {Paths::target_c, "100", tag_arg()});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  std::string page_path = file("report.html");
  ASSERT_TRUE(atrace({"report", "-i", trace, "--html=" + page_path}).exited(0));
  std::string page = read_file(page_path);
  size_t end = page.rfind("</body>");
  ASSERT_NE(end, std::string::npos);
  std::string driven = file("driven.html");
  std::ofstream(driven) << page.substr(0, end) << "<script>" << kInteractions << "</script>\n"
                        << page.substr(end);

  Result dom = chromium(driven, "--dump-dom");
  ASSERT_TRUE(dom.exited(0)) << dom.describe();
  size_t at = dom.out.find("data-interactions=\"");
  ASSERT_NE(at, std::string::npos) << "the script did not finish:\n" << dom.out.substr(0, 3000);
  at += std::strlen("data-interactions=\"");
  json got = json::parse(html_unescape(dom.out.substr(at, dom.out.find('"', at) - at)));
  SCOPED_TRACE(got.dump(1));

  const std::string initial = got["tl_initial"], zoomed = got["tl_zoomed"],
                    panned = got["tl_panned"], reset = got["tl_reset"];
  EXPECT_EQ(initial.rfind("view: +0", 0), 0u);
  EXPECT_NE(zoomed, initial);                          // the wheel zoomed in
  EXPECT_NE(view_width(zoomed), view_width(initial));  // narrower
  EXPECT_NE(panned, zoomed);                           // the drag moved it
  EXPECT_EQ(view_width(panned), view_width(zoomed));   // as wide as before
  EXPECT_EQ(reset, initial);                           // double-click: everything

  EXPECT_EQ(got["fg_right"].get<std::string>().rfind("outer ", 0), 0u);
  EXPECT_EQ(got["fg_right_zoomed"].get<std::string>().rfind("sleeper ", 0), 0u);  // fills the width
  EXPECT_EQ(got["fg_right_unzoomed"].get<std::string>().rfind("outer ", 0), 0u);

  EXPECT_EQ(got["table_initial"], "sleeper");
  EXPECT_EQ(got["table_calls_desc"], "leaf");
  EXPECT_EQ(got["table_calls_asc"], "outer");
}

// Four named worker threads: a timeline band for each, 2000 calls on each.
TEST_F(ReportHtml, ThreadsHaveTheirOwnRowsAndTheFlameGraphSplitsByThread) {
  std::string trace = file("threads.data");
  Result r = record(trace, "worker_step", {Paths::target_threads, "2000", tag_arg()},
                    {"--filter=off"});  // every call: exact counts per thread
  ASSERT_TRUE(r.exited(0)) << r.describe();
  std::string page_path = file("threads.html");
  Result h = atrace({"report", "-i", trace, "--threads", "--html=" + page_path});
  ASSERT_TRUE(h.exited(0)) << h.describe();
  json d = json::parse(data_blob(read_file(page_path)));

  const json& tl = d["timeline"];
  const size_t SS = tl["span_stride"];
  std::map<long long, long long> calls_by_tid;
  for (size_t i = 0; i < tl["spans"].size() / SS; i++)
    if (tl["spans"][i * SS + 1] == 0)
      calls_by_tid[tl["threads"][tl["spans"][i * SS].get<size_t>()]["tid"].get<long long>()]++;
  std::map<std::string, long long> by_name;
  for (const auto& th : tl["threads"]) {
    std::string name = th["name"];
    if (name.rfind("worker", 0) == 0) by_name[name] = calls_by_tid[th["tid"].get<long long>()];
  }
  EXPECT_EQ(by_name,
            (std::map<std::string, long long>{
                {"worker0", 2000}, {"worker1", 2000}, {"worker2", 2000}, {"worker3", 2000}}))
      << tl["threads"].dump();

  // --threads: a Thread node per worker under the root, 2000 calls under each.
  const json& fl = d["flame"];
  const size_t S = fl["stride"];
  EXPECT_EQ(fl["per_thread"], true);
  int threads = 0;
  for (size_t i = 1; i < fl["nodes"].size() / S; i++)
    if (fl["nodes"][i * S] == 0) {
      threads++;
      EXPECT_EQ(fl["nodes"][i * S + 2], 2000) << fl["names"][fl["nodes"][i * S + 1].get<size_t>()];
    }
  EXPECT_EQ(threads, 4);

  expect_renders(page_path);
}

// No file left behind and one error line: an unreadable trace (an old page
// under the name survives), a directory that does not exist, options that
// do not go together.
// The Flows section (docs/flows.md): the same edges as report --flows, and
// Chromium draws the graph and fills the table, one row per edge.
TEST_F(ReportHtml, TheFlowsSectionHasTheReportsEdgesAndChromiumDrawsThem) {
  const std::string trace = file("p.data");
  const std::string target =
      (std::filesystem::path(Paths::target_kernel).parent_path() / "target_pipeline").string();
  Result r = record(trace,
                    "make_record,put_record,take_record,transform,emit_batch,await_answer,"
                    "read_batch,answer",
                    {target, "400", tag_arg()},
                    {"--kernel=+net", "--follow-forks", "--filter=off",
                     "--args=put_record,take_record,transform,emit_batch,read_batch@auto",
                     "--retval=make_record/p"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  auto rep = report_json(trace, {"--flows"});
  ASSERT_TRUE(rep);
  const std::string page_path = file("flows.html");
  Result h = atrace({"report", "-i", trace, "--html=" + page_path});
  ASSERT_TRUE(h.exited(0)) << h.describe();
  json d = json::parse(data_blob(read_file(page_path)));
  const auto& flows = d["flows"];
  ASSERT_EQ(flows["edges"].size(), (*rep)["flows"].size()) << flows.dump(1);
  for (size_t i = 0; i < flows["edges"].size(); ++i) {
    const auto& e = flows["edges"][i];
    const auto& want = (*rep)["flows"][i];
    EXPECT_EQ(flows["nodes"][e["from"].get<size_t>()]["name"], want["from"]);
    EXPECT_EQ(flows["nodes"][e["to"].get<size_t>()]["name"], want["to"]);
    EXPECT_EQ(e["kind"], want["kind"]);
    EXPECT_EQ(e["count"], want["count"]);
    EXPECT_EQ(e["bytes"], want["bytes"]);
  }
  expect_renders(page_path);
  Result dom = chromium(page_path, "--dump-dom");
  ASSERT_TRUE(dom.exited(0)) << dom.describe();
  const size_t table = dom.out.find("<table id=\"fl-table\">");
  ASSERT_NE(table, std::string::npos);
  const std::string rows = dom.out.substr(table, dom.out.find("</table>", table) - table);
  size_t n = 0;
  for (size_t at = rows.find("<tr>"); at != std::string::npos; at = rows.find("<tr>", at + 1)) n++;
  EXPECT_EQ(n, flows["edges"].size() + 1) << rows;  // and the header
  EXPECT_NE(rows.find("make_record"), std::string::npos);
}

TEST_F(ReportHtml, BadInputLeavesNoFileAndSaysSoInOneLine) {
  std::string bogus = file("bogus.data");
  std::ofstream(bogus) << "not a trace\n";
  std::string page = file("old.html");
  std::ofstream(page) << "old page\n";
  Result r = atrace({"report", "-i", bogus, "--html=" + page});
  expect_one_error_line(r);
  EXPECT_EQ(read_file(page), "old page\n");

  std::string trace = file("c.data");
  Result rec = record(trace, "leaf", {Paths::target_c, "10", tag_arg()});
  ASSERT_TRUE(rec.exited(0)) << rec.describe();
  std::string line = expect_one_error_line(
      atrace({"report", "-i", trace, "--html=" + file("no/such/dir/page.html")}));
  EXPECT_NE(line.find("no/such/dir/page.html"), std::string::npos) << line;
  expect_one_error_line(atrace({"report", "-i", trace, "--tree", "--html=" + file("x.html")}));
  expect_one_error_line(atrace({"report", "-i", trace, "--html=" + tmp_->path().string()}));

  // Nothing but what the test wrote itself is left in the directory.
  DIR* dir = opendir(tmp_->path().c_str());
  ASSERT_NE(dir, nullptr);
  for (dirent* e; (e = readdir(dir));) {
    std::string n = e->d_name;
    EXPECT_TRUE(n == "." || n == ".." || n == "bogus.data" || n == "old.html" || n == "c.data")
        << "left behind: " << n;
  }
  closedir(dir);
}

}  // namespace
}  // namespace atrace::it
