// The per-CPU ring buffers: one BPF ringbuf per CPU, installed in the BPF
// program's ARRAY_OF_MAPS, drained by one libbpf ring_buffer consumer. They
// carry every record but the plain function entries and exits, which go
// through the lanes (record/lanes.h).
// Draining never blocks a traced thread: the programs write without waking
// us and we come by on a timer sized to the rings (record/recorder.cpp).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "base/unique_fd.h"

struct ring_buffer;

namespace atrace {

class PerCpuRings {
 public:
  using Handler = std::function<void(const void* data, size_t size)>;

  // Creates `ncpus` rings of `bytes` each (a power of two, multiple of the
  // page size). Throws RecordError.
  PerCpuRings(int ncpus, size_t bytes);
  ~PerCpuRings();
  PerCpuRings(const PerCpuRings&) = delete;
  PerCpuRings& operator=(const PerCpuRings&) = delete;

  // A ring to serve as the outer map's inner-map template before the BPF
  // object is loaded (libbpf 1.1 cannot resize its own template).
  int template_fd() const { return rings_.front().get(); }
  // Stores ring i at index i of the loaded outer map and starts consuming.
  void install(int outer_map_fd, Handler handler);

  // Readable when a program forces a wake-up (none does today).
  int epoll_fd() const;
  // Hands every available record to the handler; returns how many.
  size_t drain();

 private:
  static int on_record(void* ctx, void* data, size_t size);
  std::vector<UniqueFd> rings_;
  Handler handler_;
  struct ring_buffer* rb_ = nullptr;
};

// Rounds a requested size up to a valid ring size (power of two, >= 1 page).
size_t ring_size_for(size_t requested);

}  // namespace atrace
