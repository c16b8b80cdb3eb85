// Views of matched messages (issue 32) on a real recording of
// target_messages: N exchanges per channel between a client and its forked
// server, one message per call, all in one trace. The report's latency
// columns, and the exporters' arrows from each send to its receive.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tests/integration/convert_util.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

constexpr long long kN = 100;
// Receives in one run: TCP 2 connections x 2 directions, UDP, unix and
// the pipes 2 each; each received one send's bytes.
constexpr long long kReceives = 10 * kN;

std::string target_messages() {
  return (std::filesystem::path(Paths::target_kernel).parent_path() / "target_messages").string();
}

class MessageViews : public IntegrationTest {
 protected:
  void SetUp() override {
    IntegrationTest::SetUp();
    trace_ = file("m.data");
    Result r = record(trace_,
                      "tcp_client,tcp_server,udp_client,udp_server,unix_client,unix_server,"
                      "pipe_client,pipe_server",
                      {target_messages(), std::to_string(kN), tag_arg()},
                      {"--kernel=+net", "--follow-forks"});
    recorded_ = r.exited(0);
    ASSERT_TRUE(recorded_) << r.describe();
  }
  // atrace convert -i TRACE --to=FORMAT -o OUT; OUT's path.
  std::string converted(const std::string& format) {
    const std::string out = file("m." + format);
    EXPECT_TRUE(convert(trace_, format, out));
    return out;
  }

  // The merged trace converted (MessageViewsMerged).
  std::string converted_merged(const std::string& format) {
    const std::string out = file("merged." + format);
    EXPECT_TRUE(convert(file("merged.data"), format, out));
    return out;
  }

  std::string trace_;
  bool recorded_ = false;
};

TEST_F(MessageViews, ReportHasTheLatencyOfEveryMatchedMessage) {
  auto rep = report_json(trace_);
  ASSERT_TRUE(rep);
  ASSERT_TRUE(rep->contains("messages")) << rep->dump(1);
  std::set<std::string> traced = {"tcp_client",  "tcp_server",  "udp_client",  "udp_server",
                                  "unix_client", "unix_server", "pipe_client", "pipe_server"};
  long long rows = 0, received_matched = 0, sent_matched = 0;
  for (const auto& r : (*rep)["messages"]) {
    const std::string fn = base_name(r["function"].get<std::string>());
    if (!traced.count(fn)) {
      // The target's own output to the test's pipe: no traced reader, so
      // unmatched, and no latency is made up for it.
      EXPECT_EQ(r["sent_matched"], 0) << r.dump();
      EXPECT_EQ(r["received_matched"], 0) << r.dump();
      EXPECT_EQ(r["latencies"], 0) << r.dump();
      EXPECT_TRUE(r["latency_p50_ns"].is_null()) << r.dump();
      continue;
    }
    rows++;
    // Every message of the exchanges has its other end in the trace.
    EXPECT_EQ(r["sent_matched"], r["sent"]) << r.dump();
    EXPECT_EQ(r["received_matched"], r["received"]) << r.dump();
    // One pair per message, the row its sender or its receiver.
    EXPECT_EQ(r["latencies"], r["sent"].get<long long>() + r["received"].get<long long>())
        << r.dump();
    sent_matched += r["sent_matched"].get<long long>();
    received_matched += r["received_matched"].get<long long>();
    ASSERT_FALSE(r["latency_p50_ns"].is_null()) << r.dump();
    // The receiver is woken by the send: the median receive returns after.
    EXPECT_GT(r["latency_p50_ns"].get<long long>(), 0) << r.dump();
    EXPECT_LE(r["latency_p50_ns"].get<long long>(), r["latency_p99_ns"].get<long long>())
        << r.dump();
  }
  // 2 TCP rows per side, 1 UDP, 1 unix, 2 pipes per side.
  EXPECT_EQ(rows, 12);
  EXPECT_EQ(sent_matched, kReceives);
  EXPECT_EQ(received_matched, kReceives);

  // The text table has the same numbers.
  Result text = run({Paths::atrace, "report", "-i", trace_});
  ASSERT_TRUE(text.exited(0)) << text.describe();
  EXPECT_NE(text.out.find("Matched  Latency p50"), std::string::npos) << text.out;
}

// The function slices ("X", cat function) of each thread, as [start, end]
// in microseconds.
using Slices = std::map<std::pair<long long, long long>, std::vector<std::pair<double, double>>>;

bool inside(const Slices& slices, long long pid, long long tid, double ts) {
  auto it = slices.find({pid, tid});
  if (it == slices.end()) return false;
  for (const auto& [start, end] : it->second)
    if (start <= ts && ts <= end) return true;
  return false;
}

TEST_F(MessageViews, ChromeHasOneArrowPerMatchedMessageBetweenEnclosingSlices) {
  auto doc = nlohmann::json::parse(read_whole(converted("chrome")), nullptr, false);
  ASSERT_FALSE(doc.is_discarded());
  Slices slices;
  for (const auto& e : doc["traceEvents"])
    if (e["ph"] == "X" && e["cat"].get<std::string>().rfind("function", 0) == 0) {
      double ts = e["ts"].get<double>();
      slices[{e["pid"].get<long long>(), e["tid"].get<long long>()}].push_back(
          {ts, ts + e["dur"].get<double>()});
    }
  std::map<long long, const nlohmann::json*> starts, finishes;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] != "s" && e["ph"] != "f") continue;
    auto& side = e["ph"] == "s" ? starts : finishes;
    long long id = e["id"].get<long long>();
    EXPECT_FALSE(side.count(id)) << "two " << e["ph"] << " of flow " << id;
    side[id] = &e;
    EXPECT_EQ(e["bp"], "e");
    EXPECT_EQ(e["cat"], "message");
    // Bound to the traced call the message was sent or received in.
    EXPECT_TRUE(inside(slices, e["pid"], e["tid"], e["ts"].get<double>())) << e.dump();
  }
  EXPECT_EQ(static_cast<long long>(starts.size()), kReceives);
  EXPECT_EQ(static_cast<long long>(finishes.size()), kReceives);
  for (const auto& [id, s] : starts) {
    ASSERT_TRUE(finishes.count(id)) << "flow " << id << " never ends";
    // From the client to the server or back: two processes.
    EXPECT_NE((*s)["pid"], (*finishes[id])["pid"]) << id;
  }
}

TEST_F(MessageViews, PerfettoHasOneFlowPerMatchedMessage) {
  Result r = run({"sh", "-c", "protoc --decode_raw < '" + converted("perfetto") + "'"});
  ASSERT_TRUE(r.exited(0)) << r.err.substr(0, 2000);
  RawField root;
  std::string error;
  ASSERT_TRUE(parse_decode_raw(r.out, root, error)) << error;
  std::map<long long, long long> thread_pid;      // track uuid -> pid
  std::map<std::string, long long> starts, ends;  // flow id -> track
  for (const RawField& packet : root.fields) {
    if (const RawField* track = packet.first(60))
      if (const RawField* thread = track->first(4))
        thread_pid[track->integer(1)] = thread->integer(1);
    const RawField* ev = packet.first(11);
    if (!ev) continue;
    for (const RawField* f : ev->all(47)) {
      EXPECT_EQ(ev->integer(9), 3) << "flows start at a message's instant";
      EXPECT_FALSE(starts.count(f->value)) << f->value;
      starts[f->value] = ev->integer(11);
    }
    for (const RawField* f : ev->all(48)) {
      EXPECT_FALSE(ends.count(f->value)) << f->value;
      ends[f->value] = ev->integer(11);
    }
  }
  EXPECT_EQ(static_cast<long long>(starts.size()), kReceives);
  EXPECT_EQ(static_cast<long long>(ends.size()), kReceives);
  for (const auto& [id, track] : starts) {
    ASSERT_TRUE(ends.count(id)) << id;
    ASSERT_TRUE(thread_pid.count(track) && thread_pid.count(ends[id]));
    EXPECT_NE(thread_pid[track], thread_pid[ends[id]]) << id;
  }
}

TEST_F(MessageViews, PajeHasOneLinkPerMatchedMessage) {
  REQUIRE_TOOL("pj_dump");
  Result r = run({"pj_dump", converted("paje")});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  EXPECT_EQ(r.err, "");
  // "Link, 0, Message, start, end, duration, message, from, to, key"
  long long links = 0;
  std::set<std::string> keys;
  std::istringstream lines(r.out);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("Link,", 0) != 0) continue;
    std::vector<std::string> f;
    std::istringstream cells(line);
    std::string cell;
    while (std::getline(cells, cell, ',')) f.push_back(cell.substr(cell.find_first_not_of(' ')));
    ASSERT_EQ(f.size(), 10u) << line;
    links++;
    keys.insert(f[9]);
    EXPECT_EQ(f[2], "Message");
    EXPECT_NE(f[7], f[8]) << "from one thread to another: " << line;
  }
  EXPECT_EQ(links, kReceives);
  EXPECT_EQ(static_cast<long long>(keys.size()), kReceives);
}

// Two recordings of target_messages, merged: one trace with two hosts
// (one boot, so one machine: loopback pairs within it). Every view shows
// the hosts apart and every exchange of both runs is matched.
class MessageViewsMerged : public MessageViews {
 protected:
  void SetUp() override {
    MessageViews::SetUp();
    if (!recorded_) return;
    const std::string second = file("b.data");
    Result r = record(second,
                      "tcp_client,tcp_server,udp_client,udp_server,unix_client,unix_server,"
                      "pipe_client,pipe_server",
                      {target_messages(), std::to_string(kN), tag_arg()},
                      {"--kernel=+net", "--follow-forks"});
    ASSERT_TRUE(r.exited(0)) << r.describe();
    merged_ = file("merged.data");
    Result m = run({Paths::atrace, "merge", trace_, second, "-o", merged_});
    ASSERT_TRUE(m.exited(0)) << m.describe();
  }
  std::string merged_;
};

TEST_F(MessageViewsMerged, ScriptNamesTheHostOfEveryLine) {
  Result r = run({Paths::atrace, "script", "-i", merged_, "--kind=message"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  // Both recordings are of this machine: one name, told apart by index.
  std::map<std::string, long long> receives;
  std::istringstream lines(r.out);
  std::string line;
  while (std::getline(lines, line)) {
    const std::string host = line.substr(0, line.find(' '));
    ASSERT_TRUE(host.size() > 2 &&
                (host.substr(host.size() - 2) == "#0" || host.substr(host.size() - 2) == "#1"))
        << line;
    if (line.find("message:      recv") != std::string::npos) receives[host]++;
  }
  ASSERT_EQ(receives.size(), 2u) << r.out.substr(0, 2000);
  for (const auto& [host, n] : receives) EXPECT_EQ(n, kReceives) << host;
}

TEST_F(MessageViewsMerged, ReportGroupsByHostAndMatchesBothRuns) {
  auto rep = report_json(merged_);
  ASSERT_TRUE(rep);
  std::map<std::string, long long> threads, matched;
  for (const auto& t : (*rep)["threads"]) threads[t["host"].get<std::string>()]++;
  ASSERT_EQ(threads.size(), 2u) << (*rep)["threads"].dump(1);
  for (const auto& [host, n] : threads) EXPECT_EQ(n, 2) << host;  // the client and its fork
  for (const auto& f : (*rep)["functions"]) EXPECT_TRUE(f.contains("host")) << f.dump();
  for (const auto& r : (*rep)["messages"])
    matched[r["host"].get<std::string>()] += r["received_matched"].get<long long>();
  ASSERT_EQ(matched.size(), 2u);
  for (const auto& [host, n] : matched) EXPECT_EQ(n, kReceives) << host;

  Result text = run({Paths::atrace, "report", "-i", merged_, "--threads"});
  ASSERT_TRUE(text.exited(0)) << text.describe();
  // "Host NAME#0:", then its threads; the same for #1.
  long long headings = 0;
  std::istringstream lines(text.out);
  std::string line;
  while (std::getline(lines, line))
    if (line.rfind("Host ", 0) == 0 && line.back() == ':') headings++;
  EXPECT_EQ(headings, 2) << text.out;
}

TEST_F(MessageViewsMerged, ExportsPutProcessesUnderTheirHostsWithEveryArrow) {
  // Chrome: the second host's ids are moved past the first's, each
  // process named after its host, one flow per matched message.
  auto doc = nlohmann::json::parse(read_whole(converted_merged("chrome")), nullptr, false);
  ASSERT_FALSE(doc.is_discarded());
  std::map<long long, std::string> process_names;
  long long starts = 0, finishes = 0;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name")
      process_names[e["pid"].get<long long>()] = e["args"]["name"].get<std::string>();
    if (e["ph"] == "s") starts++;
    if (e["ph"] == "f") finishes++;
  }
  EXPECT_EQ(starts, 2 * kReceives);
  EXPECT_EQ(finishes, 2 * kReceives);
  ASSERT_EQ(process_names.size(), 4u);
  for (const auto& [pid, name] : process_names) {
    const bool second = pid >= 10000000;
    EXPECT_NE(name.find(second ? "#1: " : "#0: "), std::string::npos) << pid << " " << name;
  }

  // Perfetto: one flow per matched message.
  Result pb = run({"sh", "-c", "protoc --decode_raw < '" + converted_merged("perfetto") + "'"});
  ASSERT_TRUE(pb.exited(0));
  RawField root;
  std::string error;
  ASSERT_TRUE(parse_decode_raw(pb.out, root, error)) << error;
  long long flows = 0, terminating = 0;
  for (const RawField& packet : root.fields)
    if (const RawField* ev = packet.first(11)) {
      flows += static_cast<long long>(ev->all(47).size());
      terminating += static_cast<long long>(ev->all(48).size());
    }
  EXPECT_EQ(flows, 2 * kReceives);
  EXPECT_EQ(terminating, 2 * kReceives);

  // Paje: Host containers holding the processes; every link.
  if (!tool_present("pj_dump")) {
    if (in_ci()) FAIL() << "pj_dump is not installed";
    return;
  }
  Result pj = run({"pj_dump", converted_merged("paje")});
  ASSERT_TRUE(pj.exited(0)) << pj.describe();
  EXPECT_EQ(pj.err, "");
  long long hosts = 0, processes_in_hosts = 0, links = 0;
  std::istringstream lines(pj.out);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("Container, 0, Host,", 0) == 0) hosts++;
    if (line.rfind("Container, ", 0) == 0 && line.find(", Process,") != std::string::npos &&
        line.find("#") < line.find(", Process,"))
      processes_in_hosts++;
    if (line.rfind("Link,", 0) == 0) links++;
  }
  EXPECT_EQ(hosts, 2);
  EXPECT_EQ(processes_in_hosts, 4);
  EXPECT_EQ(links, 2 * kReceives);
}

// Arrows between hosts: a client and a server (target_reqresp) each
// recorded by its own atrace, merged. Every request, answer and FIFO
// message crosses from one recording to the other.
class MessageViewsCrossHost : public IntegrationTest {};

TEST_F(MessageViewsCrossHost, ArrowsGoFromOneHostToTheOther) {
  constexpr int kRequests = 200;
  const std::string reqresp =
      (std::filesystem::path(Paths::target_kernel).parent_path() / "target_reqresp").string();
  const std::string server = file("server.data"), client = file("client.data");
  const std::string fifo = file("fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string n = std::to_string(kRequests);
  Child srv({Paths::atrace, "record", "-o", server, "--kernel=+net", "--filter=off",
             "--select=serve_request,read_fifo", "--", reqresp, "server", "0", n, fifo});
  auto ready = srv.wait_for_line("ready port=", scaled(milliseconds(30000)));
  ASSERT_TRUE(ready) << srv.wait(milliseconds(1000)).describe();
  Result cl = run({Paths::atrace, "record", "-o", client, "--kernel=+net", "--filter=off",
                   "--select=send_request,write_fifo", "--", reqresp, "client", "127.0.0.1",
                   ready->substr(ready->find('=') + 1), n, fifo},
                  scaled(milliseconds(120000)));
  ASSERT_TRUE(cl.exited(0)) << cl.describe();
  Result sr = srv.wait(scaled(milliseconds(60000)));
  ASSERT_TRUE(sr.exited(0)) << sr.describe();
  const std::string merged = file("cs.data");
  Result m = run({Paths::atrace, "merge", client, server, "-o", merged});
  ASSERT_TRUE(m.exited(0)) << m.describe();

  // Requests and FIFO messages client -> server, answers back: 3 N
  // arrows, each from one host to the other (the server's ids moved past
  // the client's).
  ASSERT_TRUE(convert(merged, "chrome", file("cs.json")));
  auto doc = nlohmann::json::parse(read_whole(file("cs.json")), nullptr, false);
  ASSERT_FALSE(doc.is_discarded());
  std::map<long long, long long> start_pid, finish_pid;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "s") start_pid[e["id"].get<long long>()] = e["pid"].get<long long>();
    if (e["ph"] == "f") finish_pid[e["id"].get<long long>()] = e["pid"].get<long long>();
  }
  EXPECT_EQ(static_cast<long long>(start_pid.size()), 3 * kRequests);
  EXPECT_EQ(static_cast<long long>(finish_pid.size()), 3 * kRequests);
  long long to_server = 0, to_client = 0;
  for (const auto& [id, pid] : start_pid) {
    ASSERT_TRUE(finish_pid.count(id)) << id;
    const bool from_server = pid >= 10000000, at_server = finish_pid[id] >= 10000000;
    EXPECT_NE(from_server, at_server) << "flow " << id << " stays on one host";
    (at_server ? to_server : to_client)++;
  }
  EXPECT_EQ(to_server, 2 * kRequests);
  EXPECT_EQ(to_client, kRequests);

  // The report: every receive on both hosts matched, with its latency.
  auto rep = report_json(merged);
  ASSERT_TRUE(rep);
  std::map<std::string, long long> received;
  for (const auto& r : (*rep)["messages"]) {
    const std::string fn = base_name(r["function"].get<std::string>());
    if (r["received"] == 0) continue;
    EXPECT_EQ(r["received_matched"], r["received"]) << r.dump();
    EXPECT_FALSE(r["latency_p50_ns"].is_null()) << r.dump();
    received[fn] += r["received_matched"].get<long long>();
  }
  EXPECT_EQ(received["serve_request"], kRequests);
  EXPECT_EQ(received["send_request"], kRequests);
  EXPECT_EQ(received["read_fifo"], kRequests);
}

// Without the net group nothing changes: no arrow, no link type.
TEST_F(MessageViews, NoArrowsWithoutMessages) {
  const std::string plain = file("plain.data");
  Result r = record(plain, "tcp_client,tcp_server", {target_messages(), "5", tag_arg()},
                    {"--follow-forks"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  ASSERT_TRUE(convert(plain, "chrome", file("p.json")));
  ASSERT_TRUE(convert(plain, "paje", file("p.paje")));
  EXPECT_EQ(read_whole(file("p.json")).find("\"ph\":\"s\""), std::string::npos);
  EXPECT_EQ(read_whole(file("p.paje")).find("PajeDefineLinkType"), std::string::npos);
}

}  // namespace
}  // namespace atrace::it
