// base/diagnostics.h (the one voice of atrace's messages) and
// base/duration.h (the one rule for durations in options).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <string>

#include "base/diagnostics.h"
#include "base/duration.h"
#include "tools/option_values.h"

namespace atrace {
namespace {

using base::Severity;

// What `say` writes to stderr, read back through a pipe.
class StderrCapture {
 public:
  StderrCapture() {
    std::fflush(stderr);
    saved_ = dup(STDERR_FILENO);
    EXPECT_EQ(pipe(pipe_), 0);
    dup2(pipe_[1], STDERR_FILENO);
  }
  std::string take() {
    std::fflush(stderr);
    dup2(saved_, STDERR_FILENO);
    close(saved_);
    close(pipe_[1]);
    std::string out;
    char buf[256];
    for (ssize_t n; (n = read(pipe_[0], buf, sizeof buf)) > 0;) out.append(buf, n);
    close(pipe_[0]);
    return out;
  }

 private:
  int saved_ = -1;
  int pipe_[2] = {-1, -1};
};

TEST(OneVoiceDiagnostics, EachKindHasItsPrefix) {
  EXPECT_EQ(base::diagnostic_line(Severity::Error, "x: cannot open"), "atrace: x: cannot open\n");
  EXPECT_EQ(base::diagnostic_line(Severity::Warning, "3 events lost"),
            "atrace: warning: 3 events lost\n");
  EXPECT_EQ(base::diagnostic_line(Severity::Note, "waiting"), "atrace: note: waiting\n");
  EXPECT_EQ(base::diagnostic_line(Severity::Progress, "detached 4 probes"),
            "atrace: detached 4 probes\n");
}

TEST(OneVoiceDiagnostics, PrintfStyleLinesGoToStderr) {
  StderrCapture cap;
  base::error("%s: cannot open", "/x");
  base::warning("%d of %zu functions could not be probed", 2, size_t{5});
  base::note("--select='%s:%s' probes its own", "libc.so.6", "malloc");
  base::progress("detached %zu probes in %.1f ms", size_t{4}, 1.25);
  base::say(Severity::Error, "100% literal");  // no format: '%' kept
  EXPECT_EQ(cap.take(),
            "atrace: /x: cannot open\n"
            "atrace: warning: 2 of 5 functions could not be probed\n"
            "atrace: note: --select='libc.so.6:malloc' probes its own\n"
            "atrace: detached 4 probes in 1.2 ms\n"
            "atrace: 100% literal\n");
}

TEST(OneVoiceDiagnostics, LongMessagesAreWhole) {
  const std::string long_text(5000, 'a');
  StderrCapture cap;
  base::error("%s!", long_text.c_str());
  EXPECT_EQ(cap.take(), "atrace: " + long_text + "!\n");
}

TEST(OneVoiceDiagnostics, ErrnoIsWordedOnce) {
  EXPECT_EQ(base::errno_text(EACCES), "Permission denied");
  EXPECT_EQ(base::errno_text(-EACCES), "Permission denied");  // the kernel's -errno
  EXPECT_EQ(base::errno_text(ENOENT), "No such file or directory");
  EXPECT_EQ(base::errno_text(524), "Operation not supported by the kernel (ENOTSUPP)");
  EXPECT_EQ(base::errno_text(-524), "Operation not supported by the kernel (ENOTSUPP)");
}

TEST(OneVoiceDuration, UnitsAndBareNumbers) {
  using base::BareNumber;
  using base::parse_duration_ns;
  EXPECT_EQ(parse_duration_ns("2us"), 2000u);
  EXPECT_EQ(parse_duration_ns("500ns"), 500u);
  EXPECT_EQ(parse_duration_ns("1.5ms"), 1500000u);
  EXPECT_EQ(parse_duration_ns("1s"), 1000000000u);
  EXPECT_EQ(parse_duration_ns("300"), 300u);  // a threshold: nanoseconds
  EXPECT_EQ(parse_duration_ns("300", BareNumber::Seconds), 300'000'000'000u);
  EXPECT_EQ(parse_duration_ns("1.5", BareNumber::Seconds), 1'500'000'000u);
  EXPECT_EQ(parse_duration_ns("250ms", BareNumber::Seconds), 250'000'000u);
  EXPECT_EQ(parse_duration_ns("0"), 0u);
  for (const char* bad :
       {"", "2 us", "us", "2h", "-1", "+1", "nan", "inf", "1..2", "1e3", "9300000000s"})
    EXPECT_FALSE(parse_duration_ns(bad, BareNumber::Seconds)) << bad;
}

TEST(OneVoiceDuration, BoundsShowInTheirLargestExactUnit) {
  EXPECT_EQ(base::show_duration(0), "0ns");
  EXPECT_EQ(base::show_duration(7), "7ns");
  EXPECT_EQ(base::show_duration(40'000), "40us");
  EXPECT_EQ(base::show_duration(100'000'000), "100ms");
  EXPECT_EQ(base::show_duration(3600'000'000'000), "3600s");
  EXPECT_EQ(base::show_duration(1'500'000'000), "1500ms");
}

// tools/option_values.h words every bad duration and number one way.
TEST(OneVoiceOptionValues, DurationsAndNumbersSayWhatIsAccepted) {
  auto error_of = [](auto f) -> std::string {
    try {
      f();
    } catch (const tools::OptionError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(tools::parse_duration("--interval", "250ms", base::BareNumber::Seconds, 100'000'000,
                                  3600'000'000'000),
            250'000'000u);
  EXPECT_EQ(error_of([] {
              tools::parse_duration("--interval", "2h", base::BareNumber::Seconds, 100'000'000,
                                    3600'000'000'000);
            }),
            "--interval: '2h' is not a duration (a number of ns, us, ms or s, seconds without a "
            "unit, from 100ms up to 3600s)");
  EXPECT_EQ(error_of([] {
              tools::parse_duration("--interval", "0.05", base::BareNumber::Seconds, 100'000'000,
                                    3600'000'000'000);
            }),
            "--interval: '0.05' is out of range (a number of ns, us, ms or s, seconds without a "
            "unit, from 100ms up to 3600s)");
  EXPECT_EQ(error_of([] {
              tools::parse_duration("--filter-threshold", "2 us", base::BareNumber::Nanoseconds, 0,
                                    UINT64_MAX);
            }),
            "--filter-threshold: '2 us' is not a duration (a number of ns, us, ms or s, "
            "nanoseconds without a unit)");
  EXPECT_EQ(tools::number_problem("101", 0, 100), "'101' is out of range (a number from 0 to 100)");
  EXPECT_EQ(tools::number_problem("0", 1, HUGE_VAL),
            "'0' is out of range (a number of at least 1)");
  EXPECT_EQ(tools::number_problem("x", 0, 1, true),
            "'x' is not a number (a number above 0 up to 1)");
  EXPECT_EQ(tools::number_problem("50", 0, 100), "");
  EXPECT_EQ(tools::count_problem("1,2", 2147483647),
            "'1,2' is not a whole number (from 0 to 2147483647)");
  EXPECT_EQ(tools::count_problem("300", 255), "'300' is too large (a whole number from 0 to 255)");
  EXPECT_EQ(tools::count_problem("255", 255), "");
  EXPECT_EQ(error_of([] { tools::parse_count("--pid", "1x", 10); }),
            "--pid: '1x' is not a whole number (from 0 to 10)");
  EXPECT_EQ(error_of([] { tools::parse_number("--filter-budget", "nan", 0, 100); }),
            "--filter-budget: 'nan' is not a number (a number from 0 to 100)");
}

}  // namespace
}  // namespace atrace
