#include "formats/block_index.h"

#include <cstring>

#include "formats/block_codec.h"
#include "formats/frame.h"
#include "formats/varint.h"

namespace atrace::formats {

using namespace v2;  // NOLINT: the format's constants

namespace {

// The tables a file cannot be read without (FORMAT.md, reading rule 6);
// the process table only adds what the user knows a process by.
bool required_table(uint8_t type) {
  return type != kFrameEvents && type != kFrameProcesses && type != kFrameClocks &&
         type != kFrameCorrections && type != kFrameSeries;
}

const char* status_text(FrameStatus s) {
  switch (s) {
    case FrameStatus::NoSync: return "no frame starts there";
    case FrameStatus::BadHead: return "impossible frame lengths";
    case FrameStatus::Incomplete: return "frame runs past the end of the file";
    case FrameStatus::BadChecksum: return "checksum mismatch";
    case FrameStatus::Ok: break;
  }
  return "ok";
}

class Mapper {
 public:
  explicit Mapper(const FileSource& src) : src_(src) {}

  FileMap run() {
    if (auto f = read_footer()) {
      map_.footer = std::move(f);
      from_index();
    } else {
      scan();
      if (!map_.footer)
        map_.warnings.push_back("no index (recorder did not finish): rebuilt by scanning " +
                                std::to_string(map_.blocks.size()) + " blocks");
    }
    return std::move(map_);
  }

 private:
  void damage(const std::string& what) {
    map_.damaged = true;
    map_.warnings.push_back(what);
  }

  std::optional<Footer> read_footer() {
    uint64_t size = src_.size();
    if (size < kPreambleSize + kTrailerSize) return std::nullopt;
    uint8_t t[kTrailerSize];
    if (src_.read_at(size - kTrailerSize, t, sizeof t) != sizeof t) return std::nullopt;
    if (std::memcmp(t + 8, kTrailerMagic, sizeof kTrailerMagic) != 0) return std::nullopt;
    ByteReader r(std::span<const uint8_t>(t, 8));
    uint64_t at = r.u64();
    Frame f;
    FrameStatus s =
        at >= kPreambleSize && at < size ? read_frame(src_, at, f) : FrameStatus::NoSync;
    if (s == FrameStatus::Ok && f.head.type == kFrameFooter) {
      try {
        decoder_.payload(f, raw_);
        Footer footer = decode_footer(ByteReader(raw_), src_.size() / kMinFrameSize);
        footer_at_ = at;
        return footer;
      } catch (const Malformed&) {
        s = FrameStatus::BadHead;
      }
    }
    damage("damaged footer at byte offset " + std::to_string(at) + " (" + status_text(s) +
           "): index rebuilt by scanning");
    return std::nullopt;
  }

  // Takes a good frame into the map.
  void take(const Frame& f) {
    if (f.head.type == kFrameEvents) {
      BlockMeta m;
      try {
        m = decode_block_meta(f.ext());
      } catch (const Malformed&) {
        damage("damaged block " + std::to_string(block_no_) + " at byte offset " +
               std::to_string(f.offset) + ": malformed block header, block skipped");
        return;
      }
      map_.blocks.push_back(
          {f.offset, kFrameEvents, m.tid, m.pid, m.count, m.first_ts, m.last_ts, m.host});
    } else if (f.head.type == kFrameHeader || f.head.type == kFrameStrings ||
               f.head.type == kFrameProbes || f.head.type == kFrameProcesses ||
               f.head.type == kFrameClocks || f.head.type == kFrameCorrections ||
               f.head.type == kFrameSeries) {
      TablePayload t{f.head.type, f.offset, {}};
      try {
        decoder_.payload(f, t.raw);
      } catch (const Malformed&) {
        if (required_table(f.head.type)) map_.damaged_tables++;
        damage("damaged table at byte offset " + std::to_string(f.offset) +
               ": payload does not decompress");
        return;
      }
      map_.tables.push_back(std::move(t));
    }
    // Other types: added by a newer minor version, skipped.
  }

  void from_index() {
    uint64_t next_free = kPreambleSize;  // frames are listed in file order, each once
    for (const auto& x : map_.footer->index) {
      if (x.type == kFrameEvents) block_no_++;
      if (x.offset >= footer_at_) {
        damage("footer index points past the footer (byte offset " + std::to_string(x.offset) +
               "): entry ignored");
        continue;
      }
      if (x.offset < next_free) {
        damage("footer index lists byte offset " + std::to_string(x.offset) +
               " out of order or twice: entry ignored");
        continue;
      }
      Frame f;
      FrameStatus s = read_frame(src_, x.offset, f);
      if (s == FrameStatus::Ok && f.head.type != x.type) s = FrameStatus::BadHead;
      if (s != FrameStatus::Ok) {
        bad_frame(x.type, x.offset, s);
        continue;
      }
      next_free = x.offset + f.head.size();
      take(f);
    }
  }

  void bad_frame(uint8_t type, uint64_t offset, FrameStatus s) {
    std::string what =
        type == kFrameEvents ? "block " + std::to_string(block_no_) : std::string("table");
    if (required_table(type)) map_.damaged_tables++;
    damage("damaged " + what + " at byte offset " + std::to_string(offset) + " (" + status_text(s) +
           "): skipped, the rest of the file is read");
  }

  // Walks frames from the preamble on; after damage, looks for the next
  // frame that verifies (its sync bytes and checksum).
  void scan() {
    uint64_t off = kPreambleSize, end = src_.size();
    Frame f;
    while (off < end) {
      FrameStatus s = read_frame(src_, off, f);
      if (s == FrameStatus::Ok) {
        if (f.head.type == kFrameFooter) {  // complete up to a cut trailer
          try {
            decoder_.payload(f, raw_);
            map_.footer = decode_footer(ByteReader(raw_), src_.size() / kMinFrameSize);
          } catch (const Malformed&) {
          }
          return;
        }
        if (f.head.type == kFrameEvents) block_no_++;
        take(f);
        off += f.head.size();
        continue;
      }
      uint64_t next = resync(off + 1, end);
      // A frame that runs past the end with nothing good after it is the
      // file being cut short (killed recorder, or still being written), not
      // damage; anything else is damage.
      if (next == end && s == FrameStatus::Incomplete) {
        truncated(off, end);
        return;
      }
      block_no_++;
      damage("damaged block " + std::to_string(block_no_) + " at byte offset " +
             std::to_string(off) + " (" + status_text(s) + "): " + std::to_string(next - off) +
             " bytes skipped, the rest of the file is read");
      off = next;
    }
  }

  // Says how much is lost: bytes always; events and thread when the cut
  // block's header made it to the file (it is written before the payload).
  void truncated(uint64_t off, uint64_t end) {
    std::string what = "an incomplete block";
    uint8_t h[kFrameHeadSize + kEventsExtSize];
    if (src_.read_at(off, h, sizeof h) == sizeof h && h[4] == kFrameEvents &&
        (h[6] | h[7] << 8) >= static_cast<int>(kEventsExtSize) &&
        std::memcmp(h, kFrameSync, sizeof kFrameSync) == 0) {
      try {
        BlockMeta m =
            decode_block_meta(std::span<const uint8_t>(h + kFrameHeadSize, kEventsExtSize));
        what = "an incomplete block of " + std::to_string(m.count) + " events of thread " +
               std::to_string(m.tid);
      } catch (const Malformed&) {
      }
    }
    map_.warnings.push_back("truncated: the last " + std::to_string(end - off) + " bytes (" + what +
                            ") are lost");
  }

  // Offset of the next good frame at or after `from`, or `end`.
  uint64_t resync(uint64_t from, uint64_t end) {
    std::vector<uint8_t> chunk(1 << 16);
    Frame f;
    for (uint64_t at = from; at < end;) {
      size_t n = src_.read_at(at, chunk.data(), chunk.size());
      if (n < sizeof kFrameSync) break;
      for (size_t i = 0; i + sizeof kFrameSync <= n; i++) {
        if (std::memcmp(chunk.data() + i, kFrameSync, sizeof kFrameSync) != 0) continue;
        if (read_frame(src_, at + i, f) == FrameStatus::Ok) return at + i;
      }
      at += n - (sizeof kFrameSync - 1);  // a sync split over two chunks is found next time
      if (n < chunk.size()) break;
    }
    return end;
  }

  const FileSource& src_;
  FrameDecoder decoder_;
  std::vector<uint8_t> raw_;
  FileMap map_;
  uint64_t footer_at_ = 0;
  uint64_t block_no_ = 0;  // 1-based number of the current EVENTS frame
};

}  // namespace

FileMap map_file(const FileSource& src) { return Mapper(src).run(); }

}  // namespace atrace::formats
