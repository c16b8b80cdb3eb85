// atrace list's fast-path verdicts (site_verdict.h).
#include "fastpath/site_verdict.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <memory>

#include "base/unique_fd.h"
#include "fastpath/trampoline.h"
#include "uprobes/placement.h"

namespace atrace::fastpath {

std::vector<std::string> fast_path_verdicts(const std::vector<uprobes::ProbeSite>& sites) {
  std::vector<std::string> out(sites.size());
  // By module: its file read once, its code entries decoded once, with the
  // starts of the functions listed (as the recording gives it those it patches).
  std::map<std::string, std::vector<size_t>> by_module;
  for (size_t i = 0; i < sites.size(); i++) by_module[sites[i].path].push_back(i);
  for (const auto& [path, members] : by_module) {
    UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
    std::vector<uint64_t> starts;
    for (size_t i : members) starts.push_back(sites[i].address);
    std::unique_ptr<uprobes::CodeEntries> entries;
    for (size_t i : members) {
      const uprobes::ProbeSite& s = sites[i];
      const bool whole = s.size > 0 && s.size <= kMaxEntryCode;
      std::vector<uint8_t> code(s.size ? std::min<size_t>(s.size, kMaxEntryCode)
                                       : kEntryCodeUnsized);
      // The function's first byte in the file (the probe may sit past it).
      const ssize_t got = fd.get() < 0 ? -1
                                       : pread(fd.get(), code.data(), code.size(),
                                               static_cast<off_t>(s.offset - s.entry_delta));
      if (got <= 0) {
        out[i] = "its code cannot be read from " + path;
        continue;
      }
      code.resize(static_cast<size_t>(got));
      if (!entries) entries = std::make_unique<uprobes::CodeEntries>(path, starts);
      out[i] = fast_path_refusal(s.mangled, code.data(), code.size(), s.address, *entries, whole);
    }
  }
  return out;
}

}  // namespace atrace::fastpath
