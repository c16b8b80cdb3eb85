// Output for a person at a terminal, as git and perf do it: colour and a
// pager, only when stdout is a terminal (or when asked), never in a pipe.
//
//   --color=auto|always|never   auto: stdout is a terminal, NO_COLOR is unset
//                               or empty, and TERM is not "dumb"
//   --no-pager                  PAGER (default "less -FRX": quits when the
//                               output fits, keeps colours) is not started;
//                               PAGER="" or "cat" means none
#pragma once

#include <sys/types.h>

#include <string>

#include "tools/cli.h"

namespace atrace::tools {

struct TerminalArgs {
  std::string color = "auto";
  bool no_pager = false;
};

void add_terminal_options(cli::Command cmd, TerminalArgs& args);

// Whether to colour stdout; ask before a Pager takes it.
bool use_color(const TerminalArgs& args);

// While it lives, stdout goes to the pager (when stdout is a terminal and
// the pager is wanted); its destructor flushes stdout, closes it and waits
// for the pager, so atrace ends after the person quit reading.
class Pager {
 public:
  explicit Pager(const TerminalArgs& args);
  ~Pager();
  Pager(const Pager&) = delete;
  Pager& operator=(const Pager&) = delete;

 private:
  pid_t pid_ = -1;
};

}  // namespace atrace::tools
