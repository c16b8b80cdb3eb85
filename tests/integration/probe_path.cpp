#include "tests/integration/probe_path.h"

#include <cstdlib>
#include <cstring>

#include "tests/integration/env.h"

namespace atrace::it {

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

}  // namespace atrace::it
