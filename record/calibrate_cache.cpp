#include "record/calibrate_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "base/unique_fd.h"

namespace atrace {

namespace {

constexpr const char* kFileName = "probe-cost";
constexpr const char* kMagic = "atrace probe-cost cache 1";

std::string first_line(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string read_cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      return colon == std::string::npos ? line : line.substr(colon + 1);
    }
  return "unknown";
}

void set(std::string* why, const std::string& text) {
  if (why) *why = text;
}

// Root's and writable by no one else: the only writer is a root recorder.
bool trusted(const struct stat& st, std::string* why, const std::string& what) {
  if (st.st_uid != 0) {
    set(why, what + " is not root's");
    return false;
  }
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    set(why, what + " is writable by others than root");
    return false;
  }
  return true;
}

// The fields of a key, in the file's order; '\n' cannot be in any.
std::vector<std::pair<std::string, std::string>> key_fields(const CalibrationKey& k) {
  return {{"boot_id", k.boot_id},
          {"kernel", k.kernel},
          {"cpu_model", k.cpu_model},
          {"version", k.version},
          {"links", k.multi ? "multi" : "perf"}};
}

}  // namespace

CalibrationKey CalibrationKey::current(bool multi, const std::string& programs_id) {
  CalibrationKey k;
  k.boot_id = first_line("/proc/sys/kernel/random/boot_id");
  struct utsname u {};
  if (uname(&u) == 0) k.kernel = std::string(u.release) + " " + u.version;
  k.cpu_model = read_cpu_model();
  k.version = std::string(ATRACE_VERSION) + " " + programs_id;
  k.multi = multi;
  return k;
}

std::string cost_cache_text(const CalibrationKey& key, const ProbeCost& c) {
  std::string out = std::string(kMagic) + "\n";
  for (const auto& [name, value] : key_fields(key)) out += name + "=" + value + "\n";
  const std::pair<const char*, uint64_t> costs[] = {
      {"nop5_ns", c.nop5_ns},
      {"emulated_ns", c.emulated_ns},
      {"single_step_ns", c.single_step_ns},
      {"nop5_inside_ns", c.nop5_inside_ns},
      {"emulated_inside_ns", c.emulated_inside_ns},
      {"single_step_inside_ns", c.single_step_inside_ns},
      {"took_ns", c.took_ns}};
  for (const auto& [name, value] : costs)
    out += std::string(name) + "=" + std::to_string(value) + "\n";
  return out;
}

std::optional<ProbeCost> parse_cost_cache(const std::string& text, const CalibrationKey& key,
                                          std::string* why) {
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line) || line != kMagic) {
    set(why, "not a probe-cost cache");
    return std::nullopt;
  }
  std::map<std::string, std::string> v;
  while (std::getline(in, line)) {
    auto eq = line.find('=');
    if (eq != std::string::npos) v[line.substr(0, eq)] = line.substr(eq + 1);
  }
  for (const auto& [name, value] : key_fields(key))
    if (v[name] != value) {
      set(why, "stale: " + name + " differs");
      return std::nullopt;
    }
  ProbeCost c;
  std::pair<const char*, uint64_t*> costs[] = {{"nop5_ns", &c.nop5_ns},
                                               {"emulated_ns", &c.emulated_ns},
                                               {"single_step_ns", &c.single_step_ns},
                                               {"nop5_inside_ns", &c.nop5_inside_ns},
                                               {"emulated_inside_ns", &c.emulated_inside_ns},
                                               {"single_step_inside_ns", &c.single_step_inside_ns},
                                               {"took_ns", &c.took_ns}};
  for (auto& [name, field] : costs) {
    const auto it = v.find(name);
    char* end = nullptr;
    if (it == v.end() || it->second.empty() ||
        (*field = std::strtoull(it->second.c_str(), &end, 10), *end != '\0')) {
      set(why, std::string("no valid ") + name);
      return std::nullopt;
    }
  }
  return c;
}

std::optional<ProbeCost> load_cached_cost(const std::string& dir, const CalibrationKey& key,
                                          std::string* why) {
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0) {
    set(why, "no cache");
    return std::nullopt;
  }
  if (!S_ISDIR(st.st_mode)) {
    set(why, dir + " is not a directory");
    return std::nullopt;
  }
  if (!trusted(st, why, dir)) return std::nullopt;
  const std::string path = dir + "/" + kFileName;
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (fd.get() < 0) {
    set(why, "no cache");
    return std::nullopt;
  }
  if (fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    set(why, path + " is not a regular file");
    return std::nullopt;
  }
  if (!trusted(st, why, path)) return std::nullopt;
  std::string text;
  char buf[1024];
  ssize_t n;
  while ((n = read(fd.get(), buf, sizeof buf)) > 0 && text.size() < 16384)
    text.append(buf, static_cast<size_t>(n));
  return parse_cost_cache(text, key, why);
}

bool store_cached_cost(const std::string& dir, const CalibrationKey& key, const ProbeCost& cost) {
  if (geteuid() != 0 || !cost.error.empty()) return false;
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return false;
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || !trusted(st, nullptr, dir))
    return false;
  std::string tmp = dir + "/." + kFileName + ".XXXXXX";
  UniqueFd fd(mkostemp(tmp.data(), O_CLOEXEC));
  if (fd.get() < 0) return false;
  const std::string text = cost_cache_text(key, cost);
  const bool written = fchmod(fd.get(), 0600) == 0 && write(fd.get(), text.data(), text.size()) ==
                                                          static_cast<ssize_t>(text.size());
  fd.reset();
  if (!written || rename(tmp.c_str(), (dir + "/" + kFileName).c_str()) != 0) {
    unlink(tmp.c_str());
    return false;
  }
  return true;
}

}  // namespace atrace
