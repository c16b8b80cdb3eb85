#include "record/exclude_list.h"

#include <unistd.h>

#include <cstdio>

#include "base/diagnostics.h"
#include "record/output_file.h"
#include "uprobes/exclude_file.h"

namespace atrace {

// OUTPUT.exclude: the detached functions, for `--exclude=@OUTPUT.exclude`
// in a later run (nothing when none was detached, or the trace went to
// stdout).
void write_exclude_list(const std::vector<formats::ProbeInfo>& detached, const std::string& output,
                        std::string exe, pid_t pid) {
  if (detached.empty() || output == "-") return;
  std::string path = output + ".exclude";
  if (exe.empty() && pid > 0) {
    char buf[4096];
    ssize_t n = readlink(("/proc/" + std::to_string(pid) + "/exe").c_str(), buf, sizeof buf - 1);
    if (n > 0) exe.assign(buf, static_cast<size_t>(n));
  }
  const std::string main_module = exe.substr(exe.rfind('/') + 1);
  try {
    // Created like the trace (output_file.h): private, never through a link.
    OutputFile file(path);
    file.write(uprobes::exclude_file_text(
        detached, main_module,
        "functions detached by atrace's relevance filters while recording " + output +
            "\nuse: atrace record --exclude=@" + path + " ..."));
    file.commit();
    base::progress("%zu detached function(s) listed in %s", detached.size(), path.c_str());
  } catch (const OutputError& e) {
    base::warning("%s", e.what());
  }
}

}  // namespace atrace
