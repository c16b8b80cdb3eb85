// atrace: entry point. Parses the command line and hands over to the
// subcommand; every subcommand lives in its own cmd_*.cpp.
#include <cstdio>
#include <exception>
#include <string>

#include "tools/commands.h"

namespace {
std::string g_invocation;
}

const std::string& atrace::tools::invocation() { return g_invocation; }

int main(int argc, char** argv) {
  for (int i = 0; i < argc; ++i) g_invocation += (i ? " " : "") + std::string(argv[i]);
  // "--select=" (an empty shell variable, often): CLI11 would take the
  // next argument as the value, even "--". Refused before parsing.
  for (int i = 1; i < argc && std::string(argv[i]) != "--"; ++i) {
    std::string a = argv[i];
    if (a.size() > 3 && a.rfind("--", 0) == 0 && a.back() == '=' && a.find('=') == a.size() - 1) {
      std::fprintf(stderr, "atrace: %s: empty value\n", a.substr(0, a.size() - 1).c_str());
      return 2;
    }
  }
  CLI::App app{"atrace: trace user functions and kernel events of a process with eBPF"};
  app.set_version_flag("--version", ATRACE_VERSION);
  app.require_subcommand(1);
  int status = 0;
  atrace::tools::add_record(app, status);
  atrace::tools::add_report(app, status);
  atrace::tools::add_script(app, status);
  atrace::tools::add_convert(app, status);
  atrace::tools::add_info(app, status);
  atrace::tools::add_list(app, status);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "atrace: %s (see atrace --help)\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "atrace: %s\n", e.what());
    return 1;
  }
  return status;
}
