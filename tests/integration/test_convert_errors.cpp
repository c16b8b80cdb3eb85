// atrace convert on bad input: a file that is not a trace, a missing one, an
// unknown format, an output that cannot be written or fills up half way.
// Each gets one "atrace: " line and a non-zero exit, and never leaves a
// half-written output file behind. Also: stdout and -o give the same bytes,
// run after run.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "tests/integration/convert_util.h"

namespace atrace::it {
namespace {

class ConvertErrors : public IntegrationTest {
 protected:
  // One small real recording for the tests that need a good input.
  std::string good_trace() {
    std::string trace = file("c.data");
    Result r = record(trace, "leaf,middle,outer", {Paths::target_c, "100", tag_arg()});
    EXPECT_TRUE(r.exited(0)) << r.describe();
    return trace;
  }
};

TEST_F(ConvertErrors, NotATraceCreatesNoOutput) {
  std::string bogus = file("bogus.data"), out = file("out.json");
  std::ofstream(bogus) << "this is not a trace\n";
  Result r = run({Paths::atrace, "convert", "-i", bogus, "--to=chrome", "-o", out});
  std::string line = expect_one_error_line(r);
  EXPECT_NE(line.find("bogus.data"), std::string::npos) << line;
  EXPECT_FALSE(std::filesystem::exists(out)) << "an output was created for a bad input";

  Result missing = run({Paths::atrace, "convert", "-i", file("none.data"), "--to=csv"});
  expect_one_error_line(missing);
  EXPECT_EQ(missing.out, "");
}

TEST_F(ConvertErrors, UnknownFormatNamesTheKnownOnes) {
  std::string out = file("out.x");
  Result r = run({Paths::atrace, "convert", "-i", file("whatever.data"), "--to=xml", "-o", out});
  std::string line = expect_one_error_line(r);
  EXPECT_NE(line.find("xml"), std::string::npos) << line;
  for (const char* known : {"chrome", "perfetto", "paje", "csv"})
    EXPECT_NE(line.find(known), std::string::npos) << line;
  EXPECT_FALSE(std::filesystem::exists(out));
  Result none = run({Paths::atrace, "convert", "-i", file("whatever.data")});
  expect_one_error_line(none);  // --to is required
}

TEST_F(ConvertErrors, UnwritableOutputs) {
  std::string trace = good_trace();
  Result dir =
      run({Paths::atrace, "convert", "-i", trace, "--to=csv", "-o", file("no/such/dir/out.csv")});
  std::string line = expect_one_error_line(dir);
  EXPECT_NE(line.find("no/such/dir/out.csv"), std::string::npos) << line;

  // A device that is full: the error is said, and the device is not removed.
  Result full = run({Paths::atrace, "convert", "-i", trace, "--to=chrome", "-o", "/dev/full"});
  line = expect_one_error_line(full);
  EXPECT_NE(line.find("/dev/full"), std::string::npos) << line;
  struct stat st {};
  ASSERT_EQ(::stat("/dev/full", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

// The output gets its name only once complete (base/new_file.h): a
// conversion failing half way leaves no file, and an older file under the
// name as it was.
TEST_F(ConvertErrors, AFileThatFillsUpHalfWayIsNeverNamed) {
  std::string trace = good_trace();
  for (bool existed : {false, true}) {
    SCOPED_TRACE(existed ? "over an existing file" : "a new name");
    std::string out = file(existed ? "old.json" : "big.json");
    if (existed) std::ofstream(out) << "an older export\n";
    // A file size limit of a few KiB (SIGXFSZ ignored: write() fails with
    // EFBIG instead), well under the conversion's size.
    Result r =
        run({"sh", "-c",
             "ulimit -f 8; trap '' XFSZ; exec \"$0\" convert -i \"$1\" --to=chrome -o \"$2\"",
             Paths::atrace, trace, out});
    std::string line = expect_one_error_line(r);
    EXPECT_NE(line.find("nothing written to " + out), std::string::npos) << line;
    if (existed) EXPECT_EQ(read_whole(out), "an older export\n");
    else EXPECT_FALSE(std::filesystem::exists(out)) << "a half-written file was left behind";
  }
  for (const auto& e : std::filesystem::directory_iterator(tmp_->path()))
    EXPECT_EQ(e.path().filename().string().find(".atrace-"), std::string::npos)
        << "temporary file left: " << e.path();
}

TEST_F(ConvertErrors, StdoutAndFileGiveTheSameBytesEveryTime) {
  std::string trace = good_trace();
  for (const char* format : {"chrome", "perfetto", "paje", "csv"}) {
    SCOPED_TRACE(format);
    std::string out = file(std::string("out.") + format);
    ASSERT_TRUE(convert(trace, format, out));
    Result r = run({Paths::atrace, "convert", "-i", trace, std::string("--to=") + format});
    ASSERT_TRUE(r.exited(0)) << r.describe();
    EXPECT_EQ(r.out, read_whole(out));
    EXPECT_FALSE(r.out.empty());
  }
}

}  // namespace
}  // namespace atrace::it
