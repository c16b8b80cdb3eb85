#include "tests/integration/fed_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace atrace::it {

namespace {

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// /proc/PID/syscall of a thread blocked in read(0, ...) starts "0 0x0 ";
// xz waits in poll(2) on stdin and its signal pipe (7), others may use
// ppoll (271), select (23) or pselect6 (270).
bool waits_for_input(const std::string& syscall) {
  if (syscall.rfind("0 0x0 ", 0) == 0) return true;
  for (const char* call : {"7 ", "271 ", "23 ", "270 "})
    if (syscall.rfind(call, 0) == 0) return true;
  return false;
}

}  // namespace

FedProcess::FedProcess(const std::vector<std::string>& argv, const std::string& out_path,
                       const std::string& err_path)
    : argv_(argv), out_path_(out_path), err_path_(err_path) {
  if (argv_.empty()) throw std::invalid_argument("FedProcess: empty command");
  int in_pipe[2];
  if (::pipe2(in_pipe, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("pipe2: ") + std::strerror(errno));
  const int out_fd = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int err_fd = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out_fd < 0 || err_fd < 0)
    throw std::runtime_error("FedProcess: cannot create " + out_path + " or " + err_path);
  // Built before fork: only async-signal-safe calls after it.
  std::vector<char*> args;
  for (auto& a : argv_) args.push_back(a.data());
  args.push_back(nullptr);
  const std::string exec_failed = "exec " + argv_[0] + " failed\n";
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid_ == 0) {
    ::setpgid(0, 0);
    ::dup2(in_pipe[0], 0);
    ::dup2(out_fd, 1);
    ::dup2(err_fd, 2);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    ::execvp(args[0], args.data());
    ssize_t ignored = ::write(2, exec_failed.data(), exec_failed.size());
    (void)ignored;
    ::_exit(127);
  }
  ::setpgid(pid_, pid_);
  ::close(in_pipe[0]);
  ::close(out_fd);
  ::close(err_fd);
  in_fd_ = in_pipe[1];
}

FedProcess::~FedProcess() {
  if (in_fd_ >= 0) ::close(in_fd_);
  if (!reaped_ && pid_ > 0) {
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &status_, 0);
  }
}

bool FedProcess::feed(const std::string& bytes) {
  // A write to a program that died would raise SIGPIPE in the test.
  struct sigaction ignore {
  }, old{};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, &old);
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(in_fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::sigaction(SIGPIPE, &old, nullptr);
  return done == bytes.size();
}

bool FedProcess::wait_idle(milliseconds timeout) {
  const auto end = std::chrono::steady_clock::now() + scaled(timeout);
  const std::string syscall_file = "/proc/" + std::to_string(pid_) + "/syscall";
  int seen = 0;
  while (std::chrono::steady_clock::now() < end && running()) {
    int queued = -1;
    const bool reading = waits_for_input(slurp(syscall_file));
    if (::ioctl(in_fd_, FIONREAD, &queued) == 0 && queued == 0 && reading) {
      // Twice in a row, 20 ms apart: not a read between two others.
      if (++seen == 2) return true;
    } else {
      seen = 0;
    }
    std::this_thread::sleep_for(milliseconds(20));
  }
  return false;
}

bool FedProcess::running() {
  if (reaped_) return false;
  pid_t r = ::waitpid(pid_, &status_, WNOHANG);
  if (r == pid_) reaped_ = true;
  return !reaped_;
}

void FedProcess::signal(int sig) {
  if (!reaped_) ::kill(pid_, sig);
}

Result FedProcess::finish(milliseconds timeout) {
  if (in_fd_ >= 0) ::close(in_fd_);
  in_fd_ = -1;
  Result r;
  r.argv = argv_;
  const auto end = std::chrono::steady_clock::now() + scaled(timeout);
  while (running() && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(milliseconds(10));
  if (!reaped_) {
    r.timed_out = true;
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &status_, 0);
    reaped_ = true;
  } else if (WIFEXITED(status_)) {
    r.exit_code = WEXITSTATUS(status_);
  } else if (WIFSIGNALED(status_)) {
    r.term_signal = WTERMSIG(status_);
  }
  r.out = out();
  r.err = err();
  return r;
}

std::string FedProcess::out() const { return slurp(out_path_); }
std::string FedProcess::err() const { return slurp(err_path_); }

std::map<std::string, std::vector<std::uint8_t>> code_snapshot(pid_t pid) {
  std::map<std::string, std::vector<std::uint8_t>> code;
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  const int mem = ::open(("/proc/" + std::to_string(pid) + "/mem").c_str(), O_RDONLY | O_CLOEXEC);
  std::string line;
  while (std::getline(maps, line)) {
    std::istringstream in(line);
    std::string range, perms, offset, dev, inode, path;
    in >> range >> perms >> offset >> dev >> inode >> path;
    if (perms.size() < 3 || perms[2] != 'x' || path.empty() || path[0] != '/') continue;
    const uint64_t start = std::stoull(range.substr(0, range.find('-')), nullptr, 16);
    const uint64_t stop = std::stoull(range.substr(range.find('-') + 1), nullptr, 16);
    std::vector<std::uint8_t> bytes(stop - start);
    const ssize_t n = mem < 0 ? -1 : ::pread(mem, bytes.data(), bytes.size(), (off_t)start);
    bytes.resize(n < 0 ? 0 : static_cast<size_t>(n));
    std::string key = range;
    key.append(" ").append(path);
    code[key] = std::move(bytes);
  }
  if (mem >= 0) ::close(mem);
  return code;
}

std::string code_difference(const std::map<std::string, std::vector<std::uint8_t>>& before,
                            const std::map<std::string, std::vector<std::uint8_t>>& after) {
  std::ostringstream why;
  for (const auto& [key, bytes] : before) {
    auto it = after.find(key);
    if (it == after.end()) {
      why << key << ": gone\n";
      continue;
    }
    if (it->second == bytes) continue;
    size_t at = 0;
    while (at < bytes.size() && at < it->second.size() && bytes[at] == it->second[at]) at++;
    size_t differ = 0;
    for (size_t i = 0; i < bytes.size() && i < it->second.size(); i++)
      differ += bytes[i] != it->second[i];
    why << key << ": " << differ << " bytes differ, the first at +0x" << std::hex << at << std::dec
        << "\n";
  }
  return why.str();
}

}  // namespace atrace::it
