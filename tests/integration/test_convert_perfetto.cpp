// atrace convert --to=perfetto on real recordings, read back with protoc
// --decode_raw (Debian's protobuf-compiler, no schema): the file decodes;
// it is a Trace of TracePackets (field 1) on one sequence; every thread has
// its TrackDescriptor (thread pid/tid); slices open and close like a stack
// on each track; and per function the SLICE_BEGIN events, named through the
// interned EventNames, are as many as the report's calls. Field numbers as
// in output/export_perfetto.cpp (Perfetto's protos).
#include <map>
#include <set>

#include "tests/integration/convert_util.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

struct Decoded {
  std::map<long long, std::string> names;                        // interned EventName iid -> name
  std::map<long long, long long> thread_tracks;                  // track uuid -> tid
  std::map<long long, std::map<std::string, long long>> begins;  // tid -> name -> count
  long long ends = 0, begin_total = 0, instants = 0;
  std::map<long long, long long> depth;  // track -> open slices
};

// protoc --decode_raw < FILE, parsed, and the TrackEvents followed.
bool decode(const std::string& path, Decoded& d) {
  Result r = run({"sh", "-c", "protoc --decode_raw < '" + path + "'"});
  EXPECT_TRUE(r.exited(0)) << "protoc could not decode " << path << "\n" << r.err.substr(0, 2000);
  if (!r.exited(0)) return false;
  RawField root;
  std::string error;
  EXPECT_TRUE(parse_decode_raw(r.out, root, error)) << error;
  if (!error.empty()) return false;
  EXPECT_FALSE(root.fields.empty());
  long long last_ts = 0;
  for (const RawField& packet : root.fields) {
    EXPECT_EQ(packet.number, 1) << "a Trace holds only TracePackets (field 1)";
    EXPECT_TRUE(packet.is_message);
    EXPECT_EQ(packet.integer(10), 1) << "trusted_packet_sequence_id";
    if (const RawField* interned = packet.first(12))
      for (const RawField* n : interned->all(2)) {
        long long iid = n->integer(1);
        EXPECT_FALSE(d.names.count(iid)) << "iid " << iid << " interned twice";
        d.names[iid] = n->text(2);
      }
    if (const RawField* track = packet.first(60)) {
      if (const RawField* thread = track->first(4)) {
        EXPECT_GT(thread->integer(1), 0) << "pid";
        d.thread_tracks[track->integer(1)] = thread->integer(2);
        EXPECT_GT(track->integer(5), 0) << "a thread track has its process track as parent";
      }
    }
    if (const RawField* ev = packet.first(11)) {
      long long ts = packet.integer(8);
      EXPECT_GE(ts, last_ts) << "packets in time order";
      last_ts = ts;
      long long track = ev->integer(11);
      long long type = ev->integer(9);
      if (type == 1) {
        EXPECT_TRUE(d.thread_tracks.count(track)) << "slice on an undeclared track " << track;
        long long iid = ev->integer(10);
        EXPECT_TRUE(d.names.count(iid)) << "name iid " << iid << " not interned before use";
        d.begins[d.thread_tracks[track]][d.names[iid]]++;
        d.begin_total++;
        d.depth[track]++;
      } else if (type == 2) {
        EXPECT_GT(d.depth[track], 0) << "SLICE_END with no open slice on track " << track;
        d.depth[track]--;
        d.ends++;
      } else {
        EXPECT_EQ(type, 3);
        d.instants++;
      }
    }
  }
  for (const auto& [track, open] : d.depth) EXPECT_EQ(open, 0) << "track " << track;
  return true;
}

class ConvertPerfetto : public IntegrationTest {};

TEST_F(ConvertPerfetto, ProtocDecodesItAndSlicesEqualCalls) {
  REQUIRE_TOOL("protoc");
  std::string trace = file("c.data"), pb = file("c.perfetto-trace");
  Result r = record(trace, "leaf,middle,outer,sleeper", {Paths::target_c, "100", tag_arg()},
                    {"--kernel=all", "--filter-min-calls=1000"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  ASSERT_TRUE(convert(trace, "perfetto", pb));
  Decoded d;
  ASSERT_TRUE(decode(pb, d));
  auto rep = report_json(trace);
  ASSERT_TRUE(rep);
  const long long pid = printed_count(r.out, "pid").value_or(-1);
  ASSERT_TRUE(d.begins.count(pid)) << "no slices on the main thread's track";
  for (const auto& f : (*rep)["functions"]) {
    const std::string name = f["name"];
    EXPECT_EQ(d.begins[pid][name], f["calls"].get<long long>()) << name;
  }
  EXPECT_EQ(d.begins[pid]["leaf"], 300);
  EXPECT_EQ(d.begin_total, d.ends);
  // Kernel events: system calls are slices too, faults instants.
  EXPECT_GT(d.begins[pid]["syscall:clock_nanosleep"], 0);
  EXPECT_GT(d.instants, 0);
  // Interning: each name is in the file once, whatever the number of calls.
  std::string bytes = read_whole(pb);
  size_t count = 0;
  for (size_t at = bytes.find("middle"); at != std::string::npos; at = bytes.find("middle", at + 1))
    ++count;
  EXPECT_EQ(count, 1u);
}

TEST_F(ConvertPerfetto, OneTrackPerThread) {
  REQUIRE_TOOL("protoc");
  std::string trace = file("t.data"), pb = file("t.perfetto-trace");
  Result r =
      record(trace, "worker_step", {Paths::target_threads, "2000", tag_arg()}, {"--filter=off"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  ASSERT_TRUE(convert(trace, "perfetto", pb));
  Decoded d;
  ASSERT_TRUE(decode(pb, d));
  std::set<long long> tids, workers;
  for (const auto& [uuid, tid] : d.thread_tracks) EXPECT_TRUE(tids.insert(tid).second) << tid;
  for (const auto& [tid, names] : d.begins) {
    auto it = names.find("worker_step");
    if (it == names.end()) continue;
    EXPECT_EQ(it->second, 2000) << tid;
    workers.insert(tid);
  }
  EXPECT_EQ(workers.size(), 4u);
}

}  // namespace
}  // namespace atrace::it
