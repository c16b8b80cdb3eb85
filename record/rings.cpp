#include "record/rings.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "base/diagnostics.h"
#include "record/record_error.h"

namespace atrace {

size_t ring_size_for(size_t requested) {
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  size_t n = page;
  while (n < requested) n <<= 1;
  return n;
}

PerCpuRings::PerCpuRings(int ncpus, size_t bytes) {
  for (int cpu = 0; cpu < ncpus; ++cpu) {
    int fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "atrace_ring", 0, 0, static_cast<__u32>(bytes),
                            nullptr);
    if (fd < 0)
      throw RecordError("cannot create a " + std::to_string(bytes >> 10) +
                        " KiB ring buffer for CPU " + std::to_string(cpu) + ": " +
                        base::errno_text(errno));
    rings_.emplace_back(fd);
  }
}

void PerCpuRings::install(int outer_map_fd, Handler handler) {
  handler_ = std::move(handler);
  // In one batch: the kernel waits for an RCU grace period after every
  // update of a map of maps (10-20 ms each here), and once per batch.
  std::vector<__u32> keys(rings_.size());
  std::vector<int> fds(rings_.size());
  for (size_t cpu = 0; cpu < rings_.size(); ++cpu) {
    keys[cpu] = static_cast<__u32>(cpu);
    fds[cpu] = rings_[cpu].get();
  }
  __u32 count = static_cast<__u32>(rings_.size());
  LIBBPF_OPTS(bpf_map_batch_opts, batch);
  const bool batched =
      bpf_map_update_batch(outer_map_fd, keys.data(), fds.data(), &count, &batch) == 0 &&
      count == rings_.size();
  for (size_t cpu = 0; cpu < rings_.size(); ++cpu) {
    int fd = rings_[cpu].get();
    __u32 key = static_cast<__u32>(cpu);
    if (!batched && bpf_map_update_elem(outer_map_fd, &key, &fd, BPF_ANY) != 0)
      throw RecordError("cannot install ring buffer for CPU " + std::to_string(cpu) + ": " +
                        base::errno_text(errno));
    int err = rb_ ? ring_buffer__add(rb_, fd, on_record, this) : 0;
    if (!rb_) rb_ = ring_buffer__new(fd, on_record, this, nullptr);
    if (!rb_ || err)
      throw RecordError(std::string("cannot map ring buffer: ") + base::errno_text(errno));
  }
}

PerCpuRings::~PerCpuRings() {
  if (rb_) ring_buffer__free(rb_);
}

int PerCpuRings::epoll_fd() const { return ring_buffer__epoll_fd(rb_); }

size_t PerCpuRings::drain() {
  int n = ring_buffer__consume(rb_);
  return n > 0 ? static_cast<size_t>(n) : 0;
}

int PerCpuRings::on_record(void* ctx, void* data, size_t size) {
  auto* self = static_cast<PerCpuRings*>(ctx);
  if (self->handler_) self->handler_(data, size);
  return 0;
}

}  // namespace atrace
