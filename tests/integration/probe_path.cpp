#include "tests/integration/probe_path.h"

#include <cstdlib>
#include <cstring>
#include <map>

#include "tests/integration/env.h"

namespace atrace::it {

namespace {

// The tests of the corpus suites the fast path does not pass yet, each with
// the limit that keeps it out (docs/fast-path.md, "What it guarantees, and
// its limits"). Remove a line when its limit goes.
const std::map<std::string, std::string>& left_out() {
  static const std::map<std::string, std::string> list = {};
  return list;
}

}  // namespace

bool fast_path_run() {
  const char* v = std::getenv("ATRACE_TEST_PROBES");
  return v && std::strcmp(v, "fast-path") == 0;
}

std::vector<std::string> with_probe_path(std::vector<std::string> argv) {
  if (!fast_path_run() || argv.size() < 2 || argv[0] != Paths::atrace || argv[1] != "record")
    return argv;
  argv.insert(argv.begin() + 2, "--fast-path");
  return argv;
}

std::string fast_path_left_out(const std::string& test) {
  auto it = left_out().find(test);
  return it == left_out().end() ? std::string() : it->second;
}

}  // namespace atrace::it
