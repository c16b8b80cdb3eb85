// `record -o PATH`, and the files derived from a trace (OUTPUT.exclude,
// `report --html`, `convert -o`): atrace never removes or truncates what it
// did not create (base/new_file.h). Devices, FIFOs, directories and
// symbolic links are refused with one line and left as they were; an
// existing trace becomes PATH.old once the new one has its header; a run
// that fails before that leaves PATH untouched; new traces are 0600 and,
// under sudo, the sudo caller's.
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "tests/integration/fixture.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

class OutputPath : public IntegrationTest {
 protected:
  // A run that would write a trace: leaf is called 3 times.
  Result record_to(const std::string& out, const std::vector<std::string>& pre = {}) {
    std::vector<std::string> argv = pre;
    for (const std::string& a :
         {std::string(Paths::atrace), std::string("record"), std::string("-o"), out,
          std::string("--select=leaf"), std::string("--"), std::string(Paths::target_c),
          std::string("1"), tag_arg()})
      argv.push_back(a);
    return run(argv);
  }
  // A run that fails before the header: the selector matches nothing.
  Result failing_record_to(const std::string& out) {
    return record(out, "no_such_function_xyz", {Paths::target_c, "1", tag_arg()});
  }
};

std::string contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

mode_t kind_of(const std::string& path) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return 0;
  return st.st_mode & S_IFMT;
}

TEST_F(OutputPath, DeviceIsRefusedAndKept) {
  // A /dev/full of our own: the run's header write would fail there.
  std::string dev = file("full");
  ASSERT_EQ(mknod(dev.c_str(), S_IFCHR | 0666, makedev(1, 7)), 0) << std::strerror(errno);
  Result r = record_to(dev);
  std::string line = expect_one_error_line(r);
  EXPECT_NE(line.find("device"), std::string::npos) << line;
  EXPECT_EQ(kind_of(dev), S_IFCHR) << "the device node was removed";
  EXPECT_EQ(r.out.find("leaf="), std::string::npos) << "the target must not run";
  expect_no_uprobe_events_left();
}

TEST_F(OutputPath, SymlinkIsRefusedAndNeitherItNorItsFileIsTouched) {
  std::string real = file("precious.txt"), link = file("link.data");
  write_file(real, "precious contents\n");
  ASSERT_EQ(symlink(real.c_str(), link.c_str()), 0);
  for (bool fails : {false, true}) {
    SCOPED_TRACE(fails ? "run failing before the header" : "run that would succeed");
    Result r = fails ? failing_record_to(link) : record_to(link);
    expect_one_error_line(r);
    EXPECT_EQ(kind_of(link), S_IFLNK) << "the link was removed";
    EXPECT_EQ(contents(real), "precious contents\n") << "the linked file was written";
  }
  Result r = record_to(link);
  EXPECT_NE(expect_one_error_line(r).find("symbolic link"), std::string::npos);
}

TEST_F(OutputPath, FifoIsRefusedAndKept) {
  std::string fifo = file("fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // Before: open(2) of a FIFO without a reader blocked, then the FIFO was
  // deleted; the run's timeout turns a hang into a failure here.
  Result r = failing_record_to(fifo);
  std::string line = expect_one_error_line(r);
  EXPECT_NE(line.find("FIFO"), std::string::npos) << line;
  EXPECT_EQ(kind_of(fifo), S_IFIFO) << "the FIFO was removed";
}

TEST_F(OutputPath, DirectoryAndEmptyNameAreRefused) {
  std::string dir = file("adir");
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
  EXPECT_NE(expect_one_error_line(record_to(dir)).find("directory"), std::string::npos);
  EXPECT_EQ(kind_of(dir), S_IFDIR);
  std::string line = expect_one_error_line(record_to(""));
  EXPECT_NE(line.find("file name"), std::string::npos) << line;
}

TEST_F(OutputPath, FailedRunLeavesAnExistingFileAlone) {
  std::string out = file("old.data");
  write_file(out, "an older trace\n");
  expect_one_error_line(failing_record_to(out));
  EXPECT_EQ(contents(out), "an older trace\n");
  EXPECT_EQ(kind_of(out + ".old"), 0) << "nothing recorded: nothing to move aside";
  // And a failed run to a new name leaves nothing.
  std::string fresh = file("fresh.data");
  expect_one_error_line(failing_record_to(fresh));
  EXPECT_EQ(kind_of(fresh), 0);
  for (const auto& e : std::filesystem::directory_iterator(tmp_->path()))
    EXPECT_EQ(e.path().filename().string().find(".atrace-"), std::string::npos)
        << "temporary file left: " << e.path();
}

TEST_F(OutputPath, ExistingTraceBecomesOld) {
  std::string out = file("t.data");
  write_file(out, "an older trace\n");
  Result r = record_to(out);
  ASSERT_TRUE(r.exited(0)) << r.describe();
  EXPECT_EQ(contents(out + ".old"), "an older trace\n");
  auto rep = report_json(out);
  ASSERT_TRUE(rep);
  EXPECT_EQ(calls_of(*rep, "leaf"), 3);
}

TEST_F(OutputPath, NewTraceIsPrivateAndTheSudoCallersFile) {
  std::string out = file("mine.data");
  ::umask(022);
  Result r = record_to(out, {"env", "SUDO_UID=65534", "SUDO_GID=65533"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  struct stat st {};
  ASSERT_EQ(stat(out.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(st.st_uid, 65534u);
  EXPECT_EQ(st.st_gid, 65533u);
  // Without sudo: root's, still 0600.
  std::string plain = file("plain.data");
  Result p = record_to(plain, {"env", "-u", "SUDO_UID", "-u", "SUDO_GID"});
  ASSERT_TRUE(p.exited(0)) << p.describe();
  ASSERT_EQ(stat(plain.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(st.st_uid, 0u);
}

// OUTPUT.exclude (functions the filters detached) is created the same way.
TEST_F(OutputPath, ExcludeListIsPrivateAndNeverWrittenThroughALink) {
  std::string out = file("f.data"), real = file("precious.txt");
  write_file(real, "precious contents\n");
  ASSERT_EQ(symlink(real.c_str(), (out + ".exclude").c_str()), 0);
  const std::vector<std::string> argv = {
      "env",    "SUDO_UID=65534", "SUDO_GID=65533",       Paths::atrace, "record",        "-o",
      out,      "--select=leaf",  "--filter-max-calls=1", "--",          Paths::target_c, "2",
      tag_arg()};
  Result r = run(argv);
  ASSERT_TRUE(r.exited(0)) << r.describe();
  EXPECT_NE(r.err.find("warning"), std::string::npos) << "the link is refused\n" << r.describe();
  EXPECT_EQ(contents(real), "precious contents\n");
  EXPECT_EQ(kind_of(out + ".exclude"), S_IFLNK);
  ASSERT_EQ(unlink((out + ".exclude").c_str()), 0);
  Result again = run(argv);
  ASSERT_TRUE(again.exited(0)) << again.describe();
  struct stat st {};
  ASSERT_EQ(lstat((out + ".exclude").c_str(), &st), 0) << again.describe();
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(st.st_uid, 65534u);
  EXPECT_EQ(st.st_gid, 65533u);
  EXPECT_NE(contents(out + ".exclude").find("leaf"), std::string::npos);
}

// What `report --html=FILE` and `convert -o FILE` write follows the same
// rule (base/new_file.h): 0600 whatever the umask, the sudo caller's under
// sudo, an older file replaced by a new one.
TEST_F(OutputPath, HtmlAndConvertOutputsArePrivateAndTheSudoCallersFiles) {
  std::string trace = file("t.data");
  ASSERT_TRUE(record_to(trace).exited(0));
  ::umask(022);
  const std::vector<std::string> sudo = {"env", "SUDO_UID=65534", "SUDO_GID=65533", Paths::atrace};
  std::string page = file("page.html"), csv = file("out.csv"), json = file("out.json");
  write_file(json, "an older export\n");
  ASSERT_EQ(chmod(json.c_str(), 0644), 0);
  std::vector<std::vector<std::string>> runs = {
      {"report", "-i", trace, "--html=" + page},
      {"convert", "-i", trace, "--to=csv", "-o", csv},
      {"convert", "-i", trace, "--to=chrome", "-o", json}};
  for (const auto& args : runs) {
    std::vector<std::string> argv = sudo;
    argv.insert(argv.end(), args.begin(), args.end());
    Result r = run(argv);
    ASSERT_TRUE(r.exited(0)) << r.describe();
  }
  for (const std::string& out : {page, csv, json}) {
    SCOPED_TRACE(out);
    struct stat st {};
    ASSERT_EQ(lstat(out.c_str(), &st), 0);
    EXPECT_TRUE(S_ISREG(st.st_mode));
    EXPECT_EQ(st.st_mode & 07777, 0600u);
    EXPECT_EQ(st.st_uid, 65534u);
    EXPECT_EQ(st.st_gid, 65533u);
    EXPECT_GT(st.st_size, 100);
  }
  EXPECT_NE(contents(page).find("<html"), std::string::npos);
  EXPECT_NE(contents(csv).find("leaf"), std::string::npos);
  // Without sudo: root's, still 0600.
  Result p = run({"env", "-u", "SUDO_UID", "-u", "SUDO_GID", Paths::atrace, "convert", "-i", trace,
                  "--to=csv", "-o", csv});
  ASSERT_TRUE(p.exited(0)) << p.describe();
  struct stat st {};
  ASSERT_EQ(stat(csv.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(st.st_uid, 0u);
}

// A symbolic link, FIFO or device given as `--html` or `convert -o` is
// refused with one line and neither it nor what it points to is touched
// (before, the page was renamed over the link, and convert truncated the
// file the link pointed to, then removed it after a failure).
TEST_F(OutputPath, HtmlAndConvertRefuseLinksFifosAndDevices) {
  std::string trace = file("t.data");
  ASSERT_TRUE(record_to(trace).exited(0));
  std::string real = file("precious.txt"), link = file("link.out"), fifo = file("fifo");
  write_file(real, "precious contents\n");
  ASSERT_EQ(symlink(real.c_str(), link.c_str()), 0);
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& out : {link, fifo, std::string("/dev/null")}) {
    for (const std::vector<std::string>& argv :
         {std::vector<std::string>{Paths::atrace, "report", "-i", trace, "--html=" + out},
          std::vector<std::string>{Paths::atrace, "convert", "-i", trace, "--to=csv", "-o", out}}) {
      SCOPED_TRACE(argv[1] + " to " + out);
      Result r = run(argv);
      std::string line = expect_one_error_line(r);
      EXPECT_NE(line.find(out), std::string::npos) << line;
      EXPECT_NE(line.find(out == link   ? "symbolic link"
                          : out == fifo ? "FIFO"
                                        : "device"),
                std::string::npos)
          << line;
    }
  }
  EXPECT_EQ(kind_of(link), S_IFLNK) << "the link was replaced";
  EXPECT_EQ(contents(real), "precious contents\n") << "the linked file was written";
  EXPECT_EQ(kind_of(fifo), S_IFIFO);
  EXPECT_EQ(kind_of("/dev/null"), S_IFCHR);
  for (const auto& e : std::filesystem::directory_iterator(tmp_->path()))
    EXPECT_EQ(e.path().filename().string().find(".atrace-"), std::string::npos)
        << "temporary file left: " << e.path();
}

}  // namespace
}  // namespace atrace::it
