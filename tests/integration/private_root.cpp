#include "tests/integration/private_root.h"

#include <signal.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

namespace atrace::it {

namespace {

// `s` as one word for sh: single quotes, a quote in it closed and escaped.
std::string sh_word(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string parent_of(const std::string& path) {
  return std::filesystem::path(path).parent_path().string();
}

// The "Name:\tvalue" field of /proc/PID/status, "" when missing.
std::string status_field(pid_t pid, const std::string& name) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind(name + ":", 0) == 0) {
      size_t at = line.find_first_not_of(" \t", name.size() + 1);
      return at == std::string::npos ? "" : line.substr(at);
    }
  return "";
}

// The child of `parent` (the init of the namespace unshare made), -1 when
// there is none.
pid_t child_of(pid_t parent) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = std::stoi(name);
    if (status_field(pid, "PPid") == std::to_string(parent)) return pid;
  }
  return -1;
}

}  // namespace

std::vector<std::string> ldd_files(const std::string& program) {
  Result r = run({"ldd", program}, milliseconds(20000));
  std::vector<std::string> out;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    // "\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)" or
    // "\t/lib64/ld-linux-x86-64.so.2 (0x...)"; vdso and "not found" have no path.
    const size_t arrow = line.find("=> ");
    const size_t at = line.find('/', arrow == std::string::npos ? 0 : arrow);
    if (at == std::string::npos) continue;
    const size_t end = line.find(" (", at);
    out.push_back(line.substr(at, end == std::string::npos ? std::string::npos : end - at));
  }
  return out;
}

PrivateRoot::PrivateRoot(const std::string& mountpoint, const PrivateRootSpec& spec,
                         const std::string& ready)
    : mountpoint_(mountpoint) {
  std::filesystem::create_directories(mountpoint_);
  const std::string R = sh_word(mountpoint_);
  auto in_root = [&](const std::string& inside) { return sh_word(mountpoint_ + inside); };

  // What goes in: the program, what it and the copied files link, the rest.
  std::vector<RootFile> copies = {{spec.program, spec.inside}};
  copies.insert(copies.end(), spec.copies.begin(), spec.copies.end());
  std::set<std::string> libs;
  for (const auto& f : copies)
    for (const auto& lib : ldd_files(f.host)) libs.insert(lib);
  for (const auto& f : spec.binds)
    for (const auto& lib : ldd_files(f.host)) libs.insert(lib);
  for (const auto& lib : libs) copies.push_back({lib, lib});

  std::string script = "set -e\nmount -t tmpfs -o mode=0755 atrace-private-root " + R + "\n";
  for (size_t i = 0; i < spec.overlays.size(); ++i) {
    const RootFile& o = spec.overlays[i];
    const std::string layer = mountpoint_ + "/.layer" + std::to_string(i);
    script +=
        "mkdir -p " + sh_word(layer + "/upper") + " " + sh_word(layer + "/work") + " " +
        in_root(o.inside) + " && mount -t overlay atrace-private-layer -o " +
        sh_word("lowerdir=" + o.host + ",upperdir=" + layer + "/upper,workdir=" + layer + "/work") +
        " " + in_root(o.inside) + "\n";
  }
  for (const auto& f : copies)
    script += "mkdir -p " + in_root(parent_of(f.inside)) + " && cp -L " + sh_word(f.host) + " " +
              in_root(f.inside) + "\n";
  for (const auto& f : spec.binds)
    script += "mkdir -p " + in_root(parent_of(f.inside)) + " && touch " + in_root(f.inside) +
              " && mount --bind " + sh_word(f.host) + " " + in_root(f.inside) + "\n";
  script += "mkdir -p " + in_root("/tmp") + " " + in_root("/etc") + "\n";
  if (!spec.ld_conf_dirs.empty()) {
    script += "printf '%s\\n'";
    for (const auto& d : spec.ld_conf_dirs) script += " " + sh_word(d);
    script += " > " + in_root("/etc/ld.so.conf") + "\nldconfig -r " + R + "\n";
  }
  if (!spec.ld_library_path.empty())
    script += "export LD_LIBRARY_PATH=" + sh_word(spec.ld_library_path) + "\n";
  script += "exec chroot " + R + " " + sh_word(spec.inside);
  for (const auto& a : spec.args) script += " " + sh_word(a);
  script += "\n";

  // --kill-child: the namespace's init dies with unshare (a test killed
  // midway leaves nothing behind).
  child_ = std::make_unique<Child>(std::vector<std::string>{"unshare", "--mount", "--pid", "--fork",
                                                            "--kill-child", "--propagation",
                                                            "private", "sh", "-c", script});
  if (!child_->wait_for_line(ready, milliseconds(20000))) {
    Result r = child_->wait(milliseconds(2000));
    error_ = "the program did not start in its private root\n" + r.describe();
    return;
  }
  host_pid_ = child_of(child_->pid());
  const std::string nspid = host_pid_ > 0 ? status_field(host_pid_, "NSpid") : "";
  // "HOSTPID\tNSPID": one pid per namespace level, the innermost last.
  const size_t tab = nspid.rfind('\t');
  if (tab == std::string::npos) {
    error_ = "no process of the private root found under unshare (pid " +
             std::to_string(child_->pid()) + ")";
    return;
  }
  ns_pid_ = std::stoi(nspid.substr(tab + 1));
}

PrivateRoot::~PrivateRoot() {
  // The whole group: unshare, and the program (its namespace's init), which
  // takes its namespace's mounts with it. Child's destructor reaps.
  if (child_ && child_->running()) child_->signal(SIGKILL);
  child_.reset();
  std::error_code ec;
  std::filesystem::remove(mountpoint_, ec);  // empty on the host
}

std::string PrivateRoot::reach(const std::string& inside) const {
  return "/proc/" + std::to_string(host_pid_) + "/root" + inside;
}

}  // namespace atrace::it
