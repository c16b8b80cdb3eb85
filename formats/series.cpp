#include "formats/series.h"

#include <sys/random.h>
#include <time.h>

#include <vector>

namespace atrace::formats {

void encode_series(const SeriesInfo& s, ByteWriter& out) {
  out.u64(s.id);
  out.varint(s.seq);
  out.u8(s.last ? 1 : 0);
  out.u64(s.start_mono_ns);
  out.u64(s.start_real_ns);
}

SeriesInfo decode_series(ByteReader in) {
  SeriesInfo s;
  s.id = in.u64();
  s.seq = in.varint32();
  s.last = in.u8() != 0;
  s.start_mono_ns = in.u64();
  s.start_real_ns = in.u64();
  return s;
}

std::string series_file_name(const std::string& first, uint32_t seq) {
  if (seq == 0) return first;
  const size_t slash = first.rfind('/');
  const size_t base = slash == std::string::npos ? 0 : slash + 1;
  const size_t dot = first.rfind('.');
  // A dot that starts the name (".trace") or ends it is no extension.
  if (dot == std::string::npos || dot <= base || dot + 1 == first.size())
    return first + "." + std::to_string(seq);
  return first.substr(0, dot) + "." + std::to_string(seq) + first.substr(dot);
}

std::optional<std::string> series_first_name(const std::string& path, uint32_t seq) {
  if (seq == 0) return path;
  const std::string mark = "." + std::to_string(seq);
  // "trace.N.data" (a first name with an extension) or "trace.N" (without):
  // whichever gives `path` back.
  std::vector<std::string> candidates;
  const size_t dot = path.rfind('.');
  if (dot != std::string::npos && dot >= mark.size() &&
      path.compare(dot - mark.size(), mark.size(), mark) == 0)
    candidates.push_back(path.substr(0, dot - mark.size()) + path.substr(dot));
  if (path.size() > mark.size() && path.compare(path.size() - mark.size(), mark.size(), mark) == 0)
    candidates.push_back(path.substr(0, path.size() - mark.size()));
  for (const auto& c : candidates)
    if (series_file_name(c, seq) == path) return c;
  return std::nullopt;
}

uint64_t new_series_id() {
  uint64_t id = 0;
  if (getrandom(&id, sizeof id, 0) != static_cast<ssize_t>(sizeof id) || id == 0) {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    id = (static_cast<uint64_t>(ts.tv_sec) << 30) ^ static_cast<uint64_t>(ts.tv_nsec) ^ 1;
  }
  return id;
}

}  // namespace atrace::formats
