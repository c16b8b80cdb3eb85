// glibc's cache format (elf/cache.c, sysdeps/generic/dl-cache.h): a header
// "glibc-ld.so.cache1.1", nlibs entries of 24 bytes, then the strings. The
// entries' key and value are offsets of NUL-terminated strings from the
// start of that header.
#include "uprobes/ld_cache.h"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>

namespace atrace::uprobes {

namespace {

constexpr char kMagic[] = "glibc-ld.so.cache1.1";
constexpr size_t kMagicLen = sizeof kMagic - 1;
constexpr size_t kHeaderLen = 48;  // magic+version, nlibs, len_strings, flags, ext, unused
constexpr size_t kEntryLen = 24;   // flags, key, value, osversion, hwcap

uint32_t u32_at(const std::string& s, size_t at) {
  uint32_t v = 0;
  std::memcpy(&v, s.data() + at, sizeof v);
  return v;
}

// The string at `off` from `base`, or empty when it runs off the file.
std::string string_at(const std::string& s, size_t base, uint32_t off) {
  size_t at = base + off;
  if (at >= s.size()) return {};
  size_t end = s.find('\0', at);
  if (end == std::string::npos) return {};
  return s.substr(at, end - at);
}

}  // namespace

std::vector<std::pair<std::string, std::string>> read_ld_cache(const std::string& file) {
  std::vector<std::pair<std::string, std::string>> out;
  std::ifstream in(file, std::ios::binary);
  if (!in) return out;
  const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t base = data.find(std::string(kMagic, kMagicLen));
  if (base == std::string::npos || data.size() < base + kHeaderLen) return out;
  const uint32_t nlibs = u32_at(data, base + kMagicLen);
  const size_t entries = base + kHeaderLen;
  if (nlibs > (data.size() - entries) / kEntryLen) return out;  // truncated or not a cache
  for (uint32_t i = 0; i < nlibs; ++i) {
    const size_t e = entries + size_t{i} * kEntryLen;
    std::string name = string_at(data, base, u32_at(data, e + 4));
    std::string path = string_at(data, base, u32_at(data, e + 8));
    if (!name.empty() && !path.empty() && path.front() == '/')
      out.emplace_back(std::move(name), std::move(path));
  }
  return out;
}

}  // namespace atrace::uprobes
