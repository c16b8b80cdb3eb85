// Who a file atrace creates belongs to. Run through sudo (root, with
// SUDO_UID/SUDO_GID in the environment), the files are handed to the user
// who typed the command, so that `sudo atrace record` then `atrace report`
// works without a chown; otherwise they stay the running user's.
#pragma once

#include <sys/types.h>

#include <optional>

namespace atrace {

struct InvokingUser {
  uid_t uid;
  gid_t gid;
};

// The sudo caller when atrace runs as root under sudo; nullopt otherwise
// (or when SUDO_UID/SUDO_GID are not plain numbers).
std::optional<InvokingUser> sudo_invoker();

// Gives the open file `fd` to the sudo caller (a no-op without sudo).
// Returns false with errno set when fchown failed.
bool give_to_invoker(int fd);

}  // namespace atrace
