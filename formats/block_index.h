// Finding the frames of a v2 file: from the footer index when the recorder
// finished, by scanning frame after frame when it did not. Either way every
// frame is read once and its checksum verified, so damage is known (and
// warned about) before any event is handed out, and the reader's later reads
// only touch frames known to be good.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "formats/file_source.h"
#include "formats/metadata_codec.h"

namespace atrace::formats {

// A table frame's decoded payload (HEADER, STRINGS, PROBES, PROCESSES), in
// file order.
struct TablePayload {
  uint8_t type = 0;
  uint64_t offset = 0;
  std::vector<uint8_t> raw;
};

struct FileMap {
  std::optional<Footer> footer;    // when the file was finished and the footer is good
  std::vector<IndexEntry> blocks;  // verified EVENTS frames, in file order
  std::vector<TablePayload> tables;
  uint64_t damaged_tables = 0;        // required table frames that failed their checksum
  std::vector<std::string> warnings;  // without the file name
  bool damaged = false;               // a checksum or structure error was found
};

// `src` has passed the preamble check.
FileMap map_file(const FileSource& src);

}  // namespace atrace::formats
