#include "tests/integration/env.h"

#include <fcntl.h>
#include <linux/bpf.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <system_error>
#include <thread>

#include <nlohmann/json.hpp>

#include "base/whole_file.h"
#include "tests/integration/run.h"

namespace fs = std::filesystem;

namespace atrace::it {

bool in_ci() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::strcmp(ci, "true") == 0;
}

namespace {

// A tiny array map: the cheapest proof that bpf() is allowed here.
std::string try_bpf_syscall() {
  union bpf_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.map_type = BPF_MAP_TYPE_ARRAY;
  attr.key_size = 4;
  attr.value_size = 4;
  attr.max_entries = 1;
  long fd = ::syscall(__NR_bpf, BPF_MAP_CREATE, &attr, sizeof attr);
  if (fd < 0) return std::string("bpf(BPF_MAP_CREATE) failed: ") + std::strerror(errno);
  ::close(static_cast<int>(fd));
  return {};
}

}  // namespace

std::string tracing_unavailable_reason() {
  if (::geteuid() != 0) return "not running as root (integration tests need real BPF uprobes)";
  if (!fs::exists("/sys/bus/event_source/devices/uprobe/type"))
    return "no uprobe PMU (/sys/bus/event_source/devices/uprobe)";
  if (!fs::exists("/sys/kernel/btf/vmlinux")) return "no kernel BTF (/sys/kernel/btf/vmlinux)";
  return try_bpf_syscall();
}

bool keep_requested() {
  const char* v = std::getenv("ATRACE_KEEP_TMP");
  return v != nullptr && std::string(v) == "1";
}

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/atrace-it-XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr)
    throw std::system_error(errno, std::generic_category(), "mkdtemp " + tmpl);
  path_ = tmpl;
}

TempDir::~TempDir() {
  if (keep_) return;
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::string unique_tag() {
  static std::atomic<int> counter{0};
  return "atrace-it-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
}

std::optional<char> process_state(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return std::nullopt;
  // "PID (comm) S ...": comm may hold spaces and parentheses, the state
  // follows the last ')'.
  auto close = stat.rfind(')');
  if (close == std::string::npos || close + 2 >= stat.size()) return std::nullopt;
  return stat[close + 2];
}

std::vector<pid_t> pids_with_arg(const std::string& needle) {
  std::vector<pid_t> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    // Read without throwing: the process may be gone by the read.
    const std::string cmdline = base::read_whole_file(entry.path() / "cmdline").value_or("");
    if (cmdline.find(needle) == std::string::npos) continue;
    pid_t pid = std::stoi(name);
    if (pid == ::getpid()) continue;
    auto state = process_state(pid);
    if (state && *state != 'Z' && *state != 'X') found.push_back(pid);
  }
  return found;
}

void kill_pids_with_arg(const std::string& needle) {
  for (pid_t pid : pids_with_arg(needle)) ::kill(pid, SIGKILL);
}

std::optional<std::vector<std::uint8_t>> read_process_memory(pid_t pid, std::uint64_t addr,
                                                             size_t len) {
  int fd = ::open(("/proc/" + std::to_string(pid) + "/mem").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::vector<std::uint8_t> bytes(len);
  ssize_t n = ::pread(fd, bytes.data(), len, static_cast<off_t>(addr));
  ::close(fd);
  if (n != static_cast<ssize_t>(len)) return std::nullopt;
  return bytes;
}

namespace {

// The ids of the BPF programs some process holds: a program fd, or a BPF
// link fd, says its prog_id in fdinfo (bpftool's "pids" needs a bpftool
// built with skeletons, which Debian's is not).
std::set<int> held_bpf_program_ids() {
  std::set<int> ids;
  std::error_code ec;
  for (const auto& proc : fs::directory_iterator("/proc", ec)) {
    const std::string pid = proc.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::error_code ec2;
    for (const auto& fd : fs::directory_iterator(proc.path() / "fd", ec2)) {
      std::error_code ec3;
      const std::string target = fs::read_symlink(fd.path(), ec3).string();
      if (target != "anon_inode:bpf-prog" && target != "anon_inode:bpf_link") continue;
      std::ifstream info(proc.path() / "fdinfo" / fd.path().filename());
      for (std::string line; std::getline(info, line);)
        if (line.rfind("prog_id:", 0) == 0) ids.insert(std::atoi(line.c_str() + 8));
    }
  }
  return ids;
}

std::optional<std::vector<std::string>> unheld_atrace_programs_now() {
  static const std::set<std::string> names = {
      "func_entry",      "func_exit",       "usdt_hit",        "usdt_hit_str",   "usdt_hit_str_no",
      "release_scan",    "unwind_catch",    "unwind_start",    "unwind_walk",    "sched_switch",
      "sched_switch_no", "sched_wakeup",    "sched_wakeup_ne", "sched_migrate",  "sys_enter",
      "sys_exit",        "page_fault_user", "sched_process_f", "sched_process_e"};
  Result r = run({"bpftool", "-j", "prog", "show"}, std::chrono::milliseconds(10000));
  if (!r.exited(0)) return std::nullopt;
  auto progs = nlohmann::json::parse(r.out, nullptr, false);
  if (!progs.is_array()) return std::nullopt;
  // Listed after the programs: one loaded meanwhile by another atrace
  // running on the machine is held by then.
  const std::set<int> held = held_bpf_program_ids();
  std::vector<std::string> left;
  for (const auto& p : progs) {
    const int id = p.value("id", 0);
    if (names.count(p.value("name", "")) && !held.count(id))
      left.push_back(p.value("name", "") + " (id " + std::to_string(id) + ")");
  }
  return left;
}

}  // namespace

std::optional<std::vector<std::string>> unheld_atrace_bpf_programs(
    std::chrono::milliseconds settle) {
  const auto deadline = std::chrono::steady_clock::now() + settle;
  for (;;) {
    auto left = unheld_atrace_programs_now();
    if (!left || left->empty() || std::chrono::steady_clock::now() >= deadline) return left;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

std::optional<std::vector<std::string>> leftover_uprobe_events() {
  // The files a probe of ours would name: the build's targets and demo.
  const std::vector<std::string> ours = {
      fs::path(Paths::target_c).filename().string(),
      fs::path(Paths::target_cpp).filename().string(),
      fs::path(Paths::target_threads).filename().string(),
      fs::path(Paths::target_lib).filename().string(),
      fs::path(Paths::target_kernel).filename().string(),
      fs::path(Paths::target_filter).filename().string(),
      fs::path(Paths::target_filter_nop5).filename().string(),
      fs::path(Paths::target_filter_singlestep).filename().string(),
      "libtarget_shared.so",
      fs::path(Paths::demo).filename().string(),
  };
  for (const char* dir : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}) {
    std::ifstream in(std::string(dir) + "/uprobe_events");
    if (!in) continue;
    std::vector<std::string> left;
    for (std::string line; std::getline(in, line);)
      for (const auto& name : ours)
        if (line.find(name) != std::string::npos) {
          left.push_back(line);
          break;
        }
    return left;
  }
  return std::nullopt;
}

std::optional<std::string> printed_value(const std::string& out, const std::string& key) {
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (line.size() > key.size() && line.compare(0, key.size(), key) == 0 &&
        line[key.size()] == '=')
      return line.substr(key.size() + 1);
  return std::nullopt;
}

std::optional<long> printed_count(const std::string& out, const std::string& key) {
  auto text = printed_value(out, key);
  if (!text || text->empty() || text->find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::stol(*text);
}

}  // namespace atrace::it
