#include "fastpath/inject/process_memory.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "fastpath/inject/inject_error.h"

namespace atrace::fastpath {

std::string errno_message(const std::string& what, int err) {
  return what + ": " + std::strerror(err);
}

namespace {

std::string where(pid_t pid, uint64_t address, size_t size) {
  char buf[96];
  snprintf(buf, sizeof buf, "process %d at 0x%llx (%zu bytes)", pid,
           static_cast<unsigned long long>(address), size);
  return buf;
}

[[noreturn]] void fail(const char* verb, pid_t pid, uint64_t address, size_t size, int err) {
  std::string msg = std::string("cannot ") + verb + " the memory of " + where(pid, address, size);
  // ESRCH: the process ended; a read of its /proc/PID/mem then returns 0.
  if (err == ESRCH || err == 0) throw ProcessGone(msg + ": the process ended");
  throw InjectError(errno_message(msg, err));
}

}  // namespace

ProcessMemory::ProcessMemory(pid_t pid) : pid_(pid), vm_(pid) {
  std::string path = "/proc/" + std::to_string(pid) + "/mem";
  mem_.reset(::open(path.c_str(), O_RDWR | O_CLOEXEC));
  if (!mem_) {
    int err = errno;
    if (err == ENOENT) throw ProcessGone("no process with pid " + std::to_string(pid));
    throw InjectError(errno_message("cannot open " + path, err));
  }
}

void ProcessMemory::read(uint64_t address, std::span<std::byte> out) const {
  if (!vm_.read(address, out.data(), out.size())) fail("read", pid_, address, out.size(), errno);
}

void ProcessMemory::write(uint64_t address, std::span<const std::byte> bytes) const {
  if (!vm_.write(address, bytes.data(), bytes.size()))
    fail("write", pid_, address, bytes.size(), errno);
}

void ProcessMemory::read_any(uint64_t address, std::span<std::byte> out) const {
  size_t done = 0;
  while (done < out.size()) {
    ssize_t n = ::pread(mem_.get(), out.data() + done, out.size() - done,
                        static_cast<off_t>(address + done));
    if (n <= 0) fail("read", pid_, address, out.size(), n < 0 ? errno : 0);
    done += static_cast<size_t>(n);
  }
}

void ProcessMemory::write_any(uint64_t address, std::span<const std::byte> bytes) const {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::pwrite(mem_.get(), bytes.data() + done, bytes.size() - done,
                         static_cast<off_t>(address + done));
    if (n <= 0) fail("write", pid_, address, bytes.size(), n < 0 ? errno : 0);
    done += static_cast<size_t>(n);
  }
}

}  // namespace atrace::fastpath
