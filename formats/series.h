// A series of trace files (`atrace record --rotate`, docs/recording-long.md):
// one recording cut into self-contained files, each with a SERIES frame
// (formats/FORMAT.md) saying which series it belongs to and where in it.
//
// Names: the first file is the name given to -o; file N (N >= 1) has ".N"
// before the extension: trace.data, trace.1.data, trace.2.data, ...; a name
// without an extension gets ".N" appended (trace, trace.1, ...). A reader
// given the first file finds the others by these names, and keeps a file
// only when its SERIES frame has the series' id and the expected number.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "formats/varint.h"

namespace atrace::formats {

struct SeriesInfo {
  uint64_t id = 0;    // random, the same in every file of one recording
  uint32_t seq = 0;   // 0 for the first file
  bool last = false;  // the recording ended in this file (its final SERIES frame)
  // When the recording (not this file) began: the first file's start.
  uint64_t start_mono_ns = 0, start_real_ns = 0;
};

void encode_series(const SeriesInfo& s, ByteWriter& out);
// Throws Malformed.
SeriesInfo decode_series(ByteReader in);

// File `seq` of the series whose first file is `first` (see above).
std::string series_file_name(const std::string& first, uint32_t seq);
// The inverse: the first file's name, given `path`, the name of file
// `seq`; nullopt when series_file_name() gives no such name for `seq`
// (a file renamed since: its series cannot be found by name).
std::optional<std::string> series_first_name(const std::string& path, uint32_t seq);

// A fresh series id (never 0).
uint64_t new_series_id();

}  // namespace atrace::formats
