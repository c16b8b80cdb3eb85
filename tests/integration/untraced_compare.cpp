#include "tests/integration/untraced_compare.h"

#include <sstream>

#include "tests/integration/env.h"

namespace atrace::it {

namespace {

// atrace writes its own status lines to the stderr it shares with the
// target, each a whole line starting "atrace: ".
void split_atrace_lines(const std::string& err, std::string* target, std::string* atrace) {
  size_t pos = 0;
  while (pos < err.size()) {
    size_t end = err.find('\n', pos);
    end = end == std::string::npos ? err.size() : end + 1;
    std::string line = err.substr(pos, end - pos);
    (line.rfind("atrace: ", 0) == 0 ? *atrace : *target) += line;
    pos = end;
  }
}

std::string how_it_ended(const Result& r) {
  if (r.timed_out) return "timed out";
  if (r.term_signal) return "killed by signal " + std::to_string(r.term_signal);
  return "exit status " + std::to_string(r.exit_code);
}

}  // namespace

ComparedRun run_untraced_and_traced(const std::vector<std::string>& cmd, const std::string& trace,
                                    const std::vector<std::string>& atrace_args,
                                    milliseconds timeout) {
  ComparedRun r;
  r.untraced = run(cmd, timeout);
  std::vector<std::string> argv = {Paths::atrace, "record", "-o", trace};
  argv.insert(argv.end(), atrace_args.begin(), atrace_args.end());
  argv.push_back("--");
  argv.insert(argv.end(), cmd.begin(), cmd.end());
  r.traced = run(argv, timeout);
  std::string target_err;
  split_atrace_lines(r.traced.err, &target_err, &r.atrace_lines);
  r.traced.err = target_err;
  return r;
}

::testing::AssertionResult behaves_as_untraced(const ComparedRun& r) {
  std::ostringstream why;
  if (r.untraced.timed_out || r.untraced.term_signal)
    why << "the untraced run itself did not finish normally: " << how_it_ended(r.untraced) << "\n";
  if (how_it_ended(r.untraced) != how_it_ended(r.traced))
    why << "untraced: " << how_it_ended(r.untraced) << ", traced: " << how_it_ended(r.traced)
        << "\n";
  if (r.untraced.out != r.traced.out)
    why << "stdout differs\n--- untraced\n" << r.untraced.out << "--- traced\n" << r.traced.out;
  if (r.untraced.err != r.traced.err)
    why << "stderr differs\n--- untraced\n" << r.untraced.err << "--- traced\n" << r.traced.err;
  if (why.str().empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << join_command(r.traced.argv) << "\n"
                                       << why.str() << "--- atrace said\n"
                                       << r.atrace_lines;
}

}  // namespace atrace::it
