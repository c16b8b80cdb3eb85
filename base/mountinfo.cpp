#include "base/mountinfo.h"

#include <sys/sysmacros.h>

#include <cctype>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace atrace::base {

std::vector<std::string> split_field(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= s.size()) {
    size_t next = s.find(sep, at);
    if (next == std::string::npos) next = s.size();
    out.push_back(s.substr(at, next - at));
    at = next + 1;
  }
  return out;
}

std::string unescape_mountinfo(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1]))) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 3), nullptr, 8));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::vector<Mount> parse_mountinfo(const std::string& text) {
  std::vector<Mount> out;
  for (const auto& line : split_field(text, '\n')) {
    const std::vector<std::string> f = split_field(line, ' ');
    size_t dash = 6;  // after the optional fields
    while (dash < f.size() && f[dash] != "-") ++dash;
    if (f.size() < 5) continue;
    unsigned major = 0, minor = 0;
    if (std::sscanf(f[2].c_str(), "%u:%u", &major, &minor) != 2) continue;
    Mount m;
    m.dev = makedev(major, minor);
    m.root = unescape_mountinfo(f[3]);
    m.point = unescape_mountinfo(f[4]);
    if (dash + 1 < f.size()) m.type = f[dash + 1];
    if (dash + 3 < f.size()) m.super_options = f[dash + 3];
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<Mount> read_mountinfo(pid_t pid) {
  std::ifstream in(pid > 0 ? "/proc/" + std::to_string(pid) + "/mountinfo"
                           : std::string("/proc/self/mountinfo"));
  std::ostringstream text;
  text << in.rdbuf();
  return parse_mountinfo(text.str());
}

}  // namespace atrace::base
