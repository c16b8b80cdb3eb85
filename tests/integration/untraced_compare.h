// The safety corpus's one rule (docs/safety.md): a program traced by atrace
// prints the same stdout and stderr and ends with the same status as the
// same program untraced. One helper for every corpus test.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/integration/run.h"

namespace atrace::it {

struct ComparedRun {
  Result untraced;
  Result traced;             // atrace's run; its own "atrace: " lines taken out of err
  std::string atrace_lines;  // those lines, for messages
};

// Runs `cmd` untraced, then as `atrace record -o TRACE ATRACE_ARGS... -- cmd`.
ComparedRun run_untraced_and_traced(const std::vector<std::string>& cmd, const std::string& trace,
                                    const std::vector<std::string>& atrace_args,
                                    milliseconds timeout = milliseconds(120000));

// Success when both runs ended the same way (status or signal) with
// byte-identical stdout and stderr; otherwise what differs.
::testing::AssertionResult behaves_as_untraced(const ComparedRun& r);

}  // namespace atrace::it
