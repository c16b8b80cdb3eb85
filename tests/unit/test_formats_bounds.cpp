// Crafted trace files: what a reader allocates is bounded by what it read
// (formats/format_v2.h, kMaxExpansion and kMinFrameSize), never by what a
// length or an index claims; stdin that is not a trace is refused at once.
#include <gtest/gtest.h>
#include <xxhash.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>

#include "formats/file_source.h"
#include "formats/format_v2.h"
#include "formats/frame.h"
#include "formats/metadata_codec.h"
#include "tests/unit/test_formats_util.h"

using namespace atrace::formats;
using namespace atrace::formats::testing;

namespace {

std::string small_trace(const std::string& path) {
  FakeClock c;
  TraceWriter w(path, c.options(/*block_bytes=*/512));
  w.write_header(sample_header());
  w.write_probes(sample_probes());
  std::vector<Event> batch;
  for (int i = 0; i < 100; i++)
    batch.push_back(ev(1000000 + static_cast<uint64_t>(i) * 1000, 1,
                       i % 2 ? EventKind::FuncExit : EventKind::FuncEntry, 1));
  w.write_events(batch);
  w.finish(sample_header(), {{1, 4242, "main", 0, 0, 0}}, {});
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

uint64_t footer_offset(const std::string& bytes) {
  ByteReader r(std::span<const uint8_t>(
      reinterpret_cast<const uint8_t*>(bytes.data()) + bytes.size() - v2::kTrailerSize, 8));
  return r.u64();
}

// The file with its footer replaced by `f`, and `extra` frames (listed in
// `f` by the caller) before it.
std::string with_footer(const std::string& bytes, const Footer& f, const std::string& extra = {}) {
  std::string out = bytes.substr(0, footer_offset(bytes)) + extra;
  ByteWriter payload;
  encode_footer(f, payload);
  std::vector<uint8_t> frame;
  FrameEncoder(3).append(frame, v2::kFrameFooter, {}, payload.buf(), true);
  ByteWriter trailer;
  trailer.u64(out.size());
  trailer.bytes(v2::kTrailerMagic, sizeof v2::kTrailerMagic);
  out.append(frame.begin(), frame.end());
  out.append(trailer.buf().begin(), trailer.buf().end());
  return out;
}

Footer footer_of(const std::string& path, const std::string& bytes) {
  FileSource src(path);
  Frame f;
  EXPECT_EQ(read_frame(src, footer_offset(bytes), f), FrameStatus::Ok);
  std::vector<uint8_t> raw;
  FrameDecoder().payload(f, raw);
  return decode_footer(ByteReader(raw));
}

bool has_warning(const TraceReader& r, const std::string& what) {
  for (const auto& w : r.warnings())
    if (w.find(what) != std::string::npos) return true;
  return false;
}

// The fault campaign's 8.8 KB file listed one 256 MiB strings frame 64
// times and took 3.8 GB: each listing was decoded again.
TEST(FormatsBounds, IndexListingAFrameTwiceIsDamageNotMemory) {
  TempFile t;
  std::string bytes = small_trace(t.path());
  Footer f = footer_of(t.path(), bytes);
  auto listing_strings = [&](int times) {
    Footer g = f;
    g.index.clear();
    for (const auto& x : f.index)
      for (int i = 0; i < (x.type == v2::kFrameStrings ? times : 1); i++) g.index.push_back(x);
    return g;
  };
  // A few times: each listing after the first is ignored.
  t.set_bytes(with_footer(bytes, listing_strings(4)));
  {
    TraceReader r(t.path());
    EXPECT_TRUE(r.damaged());
    EXPECT_TRUE(has_warning(r, "out of order or twice"));
    EXPECT_EQ(r.probes().size(), sample_probes().size());
  }
  // 64 times: more frames than this small file has room for; the footer
  // is refused whole and the file read by scanning.
  t.set_bytes(with_footer(bytes, listing_strings(64)));
  TraceReader r(t.path());
  EXPECT_TRUE(r.damaged());
  EXPECT_TRUE(has_warning(r, "damaged footer"));
  EXPECT_EQ(r.probes().size(), sample_probes().size());
}

// A frame whose head claims far more than its stored bytes can expand to
// is refused before anything is allocated for it.
TEST(FormatsBounds, FrameClaimingMoreThanItsBoundIsRefused) {
  std::vector<uint8_t> frame;
  ByteWriter head;
  head.bytes(v2::kFrameSync, sizeof v2::kFrameSync);
  head.u8(v2::kFrameStrings);
  head.u8(v2::kCodecZstd);
  head.u16(0);
  head.u32(16);          // stored
  head.u32(256u << 20);  // raw: 256 MiB
  frame = head.buf();
  frame.resize(frame.size() + 16, 0x5a);
  uint64_t sum = XXH3_64bits(frame.data(), frame.size());
  for (int i = 0; i < 8; i++) frame.push_back(static_cast<uint8_t>(sum >> (8 * i)));
  TempFile t;
  std::string bytes(v2::kMagic, sizeof v2::kMagic);
  bytes += std::string("\x02\x00\x00\x00", 4);
  bytes.append(frame.begin(), frame.end());
  t.set_bytes(bytes);
  FileSource src(t.path());
  Frame f;
  EXPECT_EQ(read_frame(src, v2::kPreambleSize, f), FrameStatus::BadHead);
}

// The writer keeps the rule: what compresses better is stored as is.
TEST(FormatsBounds, WriterNeverExceedsTheExpansionBound) {
  std::vector<uint8_t> zeros(1 << 20, 0), out;
  FrameEncoder(3).append(out, v2::kFrameStrings, {}, zeros, true);
  ByteReader r(std::span<const uint8_t>(out.data() + 8, 8));
  uint32_t stored = r.u32(), raw = r.u32();
  EXPECT_EQ(raw, zeros.size());
  EXPECT_LE(uint64_t{raw}, uint64_t{stored} * v2::kMaxExpansion);
}

// -i /dev/zero (or an endless pipe of anything else) filled TMPDIR.
TEST(FormatsBounds, InputThatIsNotATraceIsNotSpooled) {
  try {
    FileSource src("/dev/zero");
    FAIL() << "accepted /dev/zero";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("not an atrace trace file"), std::string::npos)
        << e.what();
  }
}

// The crafted cases of the fault campaign (issue 18), as files. They are
// committed as seeds of the fuzz corpus (tests/fuzz/corpus/crafted_*,
// replayed by ctest fuzz.corpus_replay and fuzzed from in CI); rewrite them
// with ATRACE_WRITE_SEEDS=DIR atrace_unit_tests
// --gtest_filter=FormatsBounds.CraftedSeeds*.
std::vector<std::pair<std::string, std::string>> crafted_cases(const TempFile& t) {
  std::vector<std::pair<std::string, std::string>> cases;
  std::string bytes = small_trace(t.path());
  Footer f = footer_of(t.path(), bytes);
  auto listing_strings = [&](int times) {
    Footer g = f;
    g.index.clear();
    for (const auto& x : f.index)
      for (int i = 0; i < (x.type == v2::kFrameStrings ? times : 1); i++) g.index.push_back(x);
    return g;
  };
  // One strings frame listed 4 and 64 times by the index (3.8 GB before).
  cases.emplace_back("crafted_index_strings_x4", with_footer(bytes, listing_strings(4)));
  cases.emplace_back("crafted_index_strings_x64", with_footer(bytes, listing_strings(64)));
  // Index entries declaring 2^32-1 events and offsets far past the end.
  Footer huge = f;
  for (auto& x : huge.index) {
    x.count = 0xffffffffu;
    x.last_ts = ~0ull;
  }
  cases.emplace_back("crafted_index_huge_counts", with_footer(bytes, huge));
  Footer past = f;
  for (auto& x : past.index) x.offset += uint64_t{1} << 40;
  cases.emplace_back("crafted_index_offsets_past_end", with_footer(bytes, past));
  // A strings frame declaring 2^62 strings, the first 2^40 bytes long,
  // listed in the index: lengths checked against the payload read.
  {
    uint64_t next_id = 0;
    FileSource src(t.path());
    for (const auto& x : f.index) {
      if (x.type != v2::kFrameStrings) continue;
      Frame fr;
      EXPECT_EQ(read_frame(src, x.offset, fr), FrameStatus::Ok);
      std::vector<uint8_t> raw;
      FrameDecoder().payload(fr, raw);
      ByteReader r(raw);
      uint64_t first = r.varint();
      next_id = first + r.varint();
    }
    ByteWriter payload;
    payload.varint(next_id);
    payload.varint(uint64_t{1} << 62);
    payload.varint(uint64_t{1} << 40);
    payload.bytes("abcdefgh", 8);
    std::vector<uint8_t> frame;
    FrameEncoder(3).append(frame, v2::kFrameStrings, {}, payload.buf(), false);
    Footer g = f;
    g.index.push_back({footer_offset(bytes), v2::kFrameStrings, 0, 0, 0, 0, 0});
    cases.emplace_back("crafted_strings_huge_lengths",
                       with_footer(bytes, g, std::string(frame.begin(), frame.end())));
  }
  // A frame whose head claims 256 MiB from 16 stored bytes.
  {
    ByteWriter head;
    head.bytes(v2::kFrameSync, sizeof v2::kFrameSync);
    head.u8(v2::kFrameStrings);
    head.u8(v2::kCodecZstd);
    head.u16(0);
    head.u32(16);
    head.u32(256u << 20);
    std::vector<uint8_t> frame = head.buf();
    frame.resize(frame.size() + 16, 0x5a);
    uint64_t sum = XXH3_64bits(frame.data(), frame.size());
    for (int i = 0; i < 8; i++) frame.push_back(static_cast<uint8_t>(sum >> (8 * i)));
    std::string file = bytes.substr(0, v2::kPreambleSize);
    file.append(frame.begin(), frame.end());
    cases.emplace_back("crafted_frame_claims_256mib", file);
  }
  return cases;
}

// AddressSanitizer reserves terabytes of shadow memory: there an address
// space cap means nothing, and the files are only read (.ci/sanitize.sh).
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAsan = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAsan = true;
#else
constexpr bool kAsan = false;
#endif
#else
constexpr bool kAsan = false;
#endif

// Reads `path` completely in a child whose address space may grow by at
// most `cap` bytes (a `prlimit --as` in-process): returns the child's exit
// status, 0 when the reader refused the file or read it, 2 on bad_alloc.
int read_under_memory_cap(const std::string& path, uint64_t cap) {
  pid_t pid = fork();
  if (pid == 0) {
    long pages = 0;
    std::ifstream("/proc/self/statm") >> pages;
    uint64_t now = static_cast<uint64_t>(pages) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    rlimit lim{now + cap, now + cap};
    if (!kAsan && setrlimit(RLIMIT_AS, &lim) != 0) _exit(4);
    try {
      TraceReader r(path);
      Event ev;
      while (r.next(ev)) {
      }
      _exit(0);
    } catch (const TraceError&) {
      _exit(0);
    } catch (const std::bad_alloc&) {
      _exit(2);
    } catch (...) {
      _exit(3);
    }
  }
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, 0), pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Every crafted case (and the committed seeds, which must be these files)
// is read or refused within 64 MiB more than the process had: before, the
// same files took 1 to 3.8 GB.
TEST(FormatsBounds, CraftedSeedsAreReadInBoundedMemory) {
  TempFile t, seed(".seed");
  const char* write_to = std::getenv("ATRACE_WRITE_SEEDS");
  for (const auto& [name, bytes] : crafted_cases(t)) {
    SCOPED_TRACE(name);
    if (write_to)
      std::ofstream(std::string(write_to) + "/" + name + ".atrace", std::ios::binary) << bytes;
    seed.set_bytes(bytes);
    EXPECT_EQ(read_under_memory_cap(seed.path(), 64u << 20), 0);
    const std::string committed = std::string(ATRACE_FUZZ_CORPUS_DIR) + "/" + name + ".atrace";
    EXPECT_TRUE(std::filesystem::exists(committed)) << "missing fuzz seed " << committed;
    EXPECT_EQ(read_under_memory_cap(committed, 64u << 20), 0);
  }
}

// The cap is real: a reader that allocated what the frame claims would not
// get it.
TEST(FormatsBounds, CraftedSeedsMemoryCapCatchesAnAllocationOfTheClaimedSize) {
  if (kAsan) return;  // no cap under AddressSanitizer (above)
  pid_t pid = fork();
  if (pid == 0) {
    long pages = 0;
    std::ifstream("/proc/self/statm") >> pages;
    uint64_t now = static_cast<uint64_t>(pages) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    rlimit lim{now + (64u << 20), now + (64u << 20)};
    if (setrlimit(RLIMIT_AS, &lim) != 0) _exit(4);
    try {
      std::vector<uint8_t> v(256u << 20);
      _exit(v.size() == 0 ? 0 : 1);
    } catch (const std::bad_alloc&) {
      _exit(2);
    }
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2);
}

}  // namespace
