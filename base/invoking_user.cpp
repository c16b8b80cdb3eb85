#include "base/invoking_user.h"

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>

namespace atrace {

namespace {

std::optional<unsigned> env_id(const char* name) {
  const char* s = std::getenv(name);
  if (!s || !*s) return std::nullopt;
  unsigned v = 0;
  auto [end, ec] = std::from_chars(s, s + std::strlen(s), v);
  if (ec != std::errc() || *end) return std::nullopt;
  return v;
}

}  // namespace

std::optional<InvokingUser> sudo_invoker() {
  if (geteuid() != 0) return std::nullopt;
  auto uid = env_id("SUDO_UID"), gid = env_id("SUDO_GID");
  if (!uid || !gid || *uid == 0) return std::nullopt;
  return InvokingUser{static_cast<uid_t>(*uid), static_cast<gid_t>(*gid)};
}

bool give_to_invoker(int fd) {
  auto who = sudo_invoker();
  return !who || fchown(fd, who->uid, who->gid) == 0;
}

}  // namespace atrace
