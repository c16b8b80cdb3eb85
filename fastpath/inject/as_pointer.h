// A number the kernel takes in a pointer argument: an address in another
// process (process_vm_readv/writev) or ptrace's integer addr/data (a
// signal, a size). Never dereferenced in atrace: the cast is the intent,
// in this one place.
#pragma once

#include <cstdint>

namespace atrace::fastpath {

inline void* as_pointer(uint64_t value) {
  return reinterpret_cast<void*>(value);  // NOLINT(performance-no-int-to-ptr)
}

}  // namespace atrace::fastpath
