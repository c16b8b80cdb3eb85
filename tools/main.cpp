// atrace: entry point. Parses the command line and hands over to the
// subcommand; every subcommand lives in its own cmd_*.cpp.
#include <cstdio>
#include <string>
#include <string_view>

#include "base/diagnostics.h"
#include "git_commit.h"  // build/: ATRACE_GIT_COMMIT
#include "record/record.h"
#include "tools/cli.h"
#include "tools/commands.h"

namespace {
std::string g_invocation;
namespace cli = atrace::tools::cli;

// `arg` as a POSIX shell reads it back: bare when it has only characters
// no shell treats specially, otherwise in single quotes (a quote inside
// as '\''). `atrace info` shows the recorded command line so, ready to
// paste.
std::string shell_quoted(const std::string& arg) {
  constexpr std::string_view kSafe =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-";
  if (!arg.empty() && arg.find_first_not_of(kSafe) == std::string::npos) return arg;
  std::string out = "'";
  for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}
}  // namespace

const std::string& atrace::tools::invocation() { return g_invocation; }

int main(int argc, char** argv) {
  for (int i = 0; i < argc; ++i) g_invocation += (i ? " " : "") + shell_quoted(argv[i]);
  // "--select=" (an empty shell variable, often): CLI11 would take the
  // next argument as the value, even "--". Refused before parsing.
  for (int i = 1; i < argc && std::string(argv[i]) != "--"; ++i) {
    std::string a = argv[i];
    if (a.size() > 3 && a.rfind("--", 0) == 0 && a.back() == '=' && a.find('=') == a.size() - 1) {
      atrace::base::error("%s: empty value", a.substr(0, a.size() - 1).c_str());
      return 2;
    }
  }
  const std::string commit = ATRACE_GIT_COMMIT;
  cli::CommandLine line{
      "atrace: trace user functions and kernel events of a process with eBPF",
      std::string(ATRACE_VERSION) + (commit.empty() ? "" : " (git " + commit + ")"),
      // What the running kernel offers, probed as `record` probes it.
      [] { return atrace::kernel_features_text(atrace::detect_kernel_features()); }};
  int status = 0;
  atrace::tools::add_record(line.root(), status);
  atrace::tools::add_top(line.root(), status);
  atrace::tools::add_report(line.root(), status);
  atrace::tools::add_script(line.root(), status);
  atrace::tools::add_convert(line.root(), status);
  atrace::tools::add_info(line.root(), status);
  atrace::tools::add_merge(line.root(), status);
  atrace::tools::add_list(line.root(), status);
  if (auto ended = line.parse(argc, argv)) return *ended;
  return status;
}
