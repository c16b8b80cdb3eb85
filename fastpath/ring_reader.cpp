#include "fastpath/ring_reader.h"

#include <algorithm>
#include <cstddef>
#include <cstring>

namespace atrace::fastpath {

namespace {

bool known_kind(uint16_t kind) {
  return kind >= static_cast<uint16_t>(RecordKind::Entry) &&
         kind <= static_cast<uint16_t>(RecordKind::GivenBack);
}

// A record's place among records of the same tick: what ends a call before
// what starts one.
int tie_rank(uint16_t kind) {
  switch (static_cast<RecordKind>(kind)) {
    case RecordKind::Exit:
    case RecordKind::Unwound:
    case RecordKind::Caught:
    case RecordKind::ThreadExit:
    case RecordKind::Switched:
    case RecordKind::GivenBack: return 0;
    default: return 1;
  }
}

}  // namespace

RingReader::RingReader(MemoryAccess& memory, uint64_t ring, const RingHeader& header,
                       uint64_t commit_wait_ticks, uint64_t start_tsc)
    : memory_(memory),
      ring_(ring),
      header_(header),
      wait_(commit_wait_ticks),
      lanes_(header.lane_count),
      stats_(header.lane_count),
      headers_(header.lane_count) {
  // Nothing was reserved before the reader existed (it is made before any
  // function is patched): slot 0 onwards came after start_tsc.
  for (Lane& l : lanes_) l.heads.emplace_back(start_tsc, 0);
}

uint64_t RingReader::slot_addr(uint32_t lane, uint64_t index) const {
  const uint64_t slot = index & (header_.lane_slots - 1);
  return ring_ + header_.records_offset +
         (uint64_t{lane} * header_.lane_slots + slot) * sizeof(FastRecord);
}

// The earliest time slot `index` can have been reserved: the last drain
// whose head had not reached it. Without one (its reservation is older than
// the history kept), the history's start: it has waited at least that long.
uint64_t RingReader::reserved_since(const Lane& lane, uint64_t index, uint64_t now_tsc) const {
  uint64_t since = lane.heads.empty() ? now_tsc : lane.heads.front().first;
  for (const auto& [tsc, head] : lane.heads)
    if (head <= index) since = tsc;
  return since;
}

bool RingReader::drain(uint64_t now_tsc, std::vector<FastRecord>& out, bool writers_gone,
                       uint64_t max_per_lane) {
  const uint32_t n = header_.lane_count;
  const uint64_t slots = header_.lane_slots;
  if (!memory_.read(ring_ + header_.lanes_offset, headers_.data(), n * sizeof(LaneHeader)))
    return false;

  // Every lane's slots from its tail to the head just read, in one batch.
  struct Range {
    uint64_t from = 0, to = 0;  // indices
    size_t at = 0;              // first record in first_/second_
  };
  std::vector<Range> ranges(n);
  std::vector<MemoryPiece> first_pieces, second_pieces;
  size_t total = 0;
  for (uint32_t i = 0; i < n; ++i) {
    Lane& lane = lanes_[i];
    if (!lane.started) {  // a ring atrace read before: go on from its tail
      lane.tail = lane.published = headers_[i].tail;
      lane.started = true;
    }
    uint64_t head = headers_[i].head;
    // A head behind the tail or more than a lane ahead is not the
    // trampolines' (they reserve only while head - tail < lane_slots).
    if (head < lane.tail) head = lane.tail;
    if (head - lane.tail > slots) head = lane.tail + slots;
    lane.head = head;
    // At most max_per_lane slots this time (the rest waits for the next
    // drain: drained() says whether there is any).
    const uint64_t to = head - lane.tail > max_per_lane ? lane.tail + max_per_lane : head;
    lane.capped = to < head;
    ranges[i] = Range{lane.tail, to, total};
    total += to - lane.tail;
  }
  first_.resize(total);
  second_.resize(total);
  for (uint32_t i = 0; i < n; ++i) {
    const Range& r = ranges[i];
    uint64_t index = r.from;
    size_t at = r.at;
    while (index < r.to) {  // at most two pieces: up to the lane's end, then from its start
      const uint64_t run = std::min(r.to - index, slots - (index & (slots - 1)));
      const size_t bytes = run * sizeof(FastRecord);
      first_pieces.push_back({slot_addr(i, index), &first_[at], bytes});
      second_pieces.push_back({slot_addr(i, index), &second_[at], bytes});
      index += run;
      at += run;
    }
  }
  if (!first_pieces.empty() && (!memory_.read(first_pieces) || !memory_.read(second_pieces)))
    return false;

  std::vector<MemoryPiece> tail_pieces;
  std::vector<uint64_t> new_tails(n);
  for (uint32_t i = 0; i < n; ++i) {
    Lane& lane = lanes_[i];
    LaneStats& stats = stats_[i];
    const Range& r = ranges[i];
    stats.full = headers_[i].lost;
    if (!lane.given_up.empty()) take_late(i, headers_[i].head, out);
    if (writers_gone) lane.given_up.clear();
    for (uint64_t index = r.from; index < r.to; ++index) {
      const FastRecord& a = first_[r.at + (index - r.from)];
      const FastRecord& b = second_[r.at + (index - r.from)];
      if (a.seq != index + 1 || b.seq != index + 1) continue;
      // The common case, every slot committed so far: the tail follows,
      // without the set (a tree node per record otherwise).
      if (index == lane.tail && lane.ahead.empty()) ++lane.tail;
      else if (!lane.ahead.insert(index).second) continue;  // taken by an earlier drain
      if (!known_kind(b.kind)) {
        ++stats.malformed;
        continue;
      }
      out.push_back(b);
      out.back().seq = i;  // handed out: the lane (ring_reader.h)
      ++stats.taken;
      lane.last_tsc = std::max(lane.last_tsc, b.tsc);
    }
    // The tail passes what was taken, and each slot reserved for longer
    // than the wait that an earlier drain already found reserved; it stops
    // at the first other one. Seen for the first time, a slot may be old
    // only because the drain before came late (a loaded machine): its
    // writer may be in the middle of its record, or of a signal handler
    // that interrupted it there, so it waits for the next drain (one
    // drain period: the kill bound counts one, record/kill_bound.h).
    lane.waiting_since = UINT64_MAX;
    while (lane.tail < r.to) {
      if (lane.ahead.erase(lane.tail)) {
        ++lane.tail;
        continue;
      }
      const uint64_t since = reserved_since(lane, lane.tail, now_tsc);
      const bool seen_before = lane.tail < lane.looked_to;
      if (!writers_gone && (now_tsc <= since || now_tsc - since < wait_ || !seen_before)) {
        lane.waiting_since = since;
        break;
      }
      ++stats.skipped;
      if (!writers_gone) {
        lane.given_up.push_back(lane.tail);
        if (lane.given_up.size() > kGivenUpKept) lane.given_up.pop_front();
      }
      ++lane.tail;
    }
    lane.looked_to = std::max(lane.looked_to, r.to);
    lane.heads.emplace_back(now_tsc, lane.head);
    // Keep the drains that can still bound a waiting slot's age: the
    // newest one older than the wait is enough for the older ones.
    while (lane.heads.size() > 1 && now_tsc >= lane.heads[1].first &&
           now_tsc - lane.heads[1].first >= wait_)
      lane.heads.pop_front();
    // With pages to give back (lane_pages.h), the writers get whole pages
    // only, after the system has taken them back.
    uint64_t publish = lane.tail;
    if (pages_) {
      constexpr uint64_t kPageSlots = LanePages::kSlotsPerPage;
      publish &= ~(kPageSlots - 1);
      uint64_t from = (lane.published + kPageSlots - 1) & ~(kPageSlots - 1);
      // Not the page of a slot given up and still watched: its writer may
      // commit there yet (take_late), and a page given back meanwhile
      // would take its record with it. That page stays until the lane
      // comes round to it.
      for (uint64_t watched : lane.given_up) {
        const uint64_t page = watched & ~(kPageSlots - 1);
        if (page + kPageSlots <= from) continue;
        if (page >= publish) break;
        if (page > from) pages_->release(i, from, page);
        from = page + kPageSlots;
      }
      if (publish > from) pages_->release(i, from, publish);
    }
    if (publish > lane.published) {
      new_tails[i] = publish;
      tail_pieces.push_back(
          {ring_ + header_.lanes_offset + i * sizeof(LaneHeader) + offsetof(LaneHeader, tail),
           &new_tails[i], sizeof(uint64_t)});
    }
  }
  if (!tail_pieces.empty() && !memory_.write(tail_pieces)) return false;
  for (uint32_t i = 0; i < n; ++i)
    if (new_tails[i] > lanes_[i].published) lanes_[i].published = new_tails[i];
  return true;
}

// Slots given up whose writers commit after all: taken while the lane has
// not come round to them (a writer of the next lap may reserve the slot
// once head reaches index + lane_slots; the head is read again after the
// record, so a record seen committed with the head still short of that is
// the late writer's own). Two reads, as for every slot (the copy of a
// VmMemory is not ordered against the writer's stores).
void RingReader::take_late(uint32_t i, uint64_t head, std::vector<FastRecord>& out) {
  Lane& lane = lanes_[i];
  LaneStats& stats = stats_[i];
  const uint64_t slots = header_.lane_slots;
  const uint64_t head_addr =
      ring_ + header_.lanes_offset + i * sizeof(LaneHeader) + offsetof(LaneHeader, head);
  for (auto it = lane.given_up.begin(); it != lane.given_up.end();) {
    const uint64_t index = *it;
    if (head >= index + slots) {  // came round: the record is gone for good
      it = lane.given_up.erase(it);
      continue;
    }
    FastRecord a{}, b{};
    uint64_t head_after = 0;
    if (!memory_.read(slot_addr(i, index), &a, sizeof a) || a.seq != index + 1 ||
        !memory_.read(slot_addr(i, index), &b, sizeof b) || b.seq != index + 1 ||
        !memory_.read(head_addr, &head_after, sizeof head_after)) {
      ++it;
      continue;
    }
    it = lane.given_up.erase(it);
    if (head_after >= index + slots) continue;
    --stats.skipped;
    if (!known_kind(b.kind)) {
      ++stats.malformed;
      continue;
    }
    out.push_back(b);
    out.back().seq = i;
    ++stats.taken;
    ++stats.late;
  }
}

bool RingReader::drained() const {
  for (const Lane& l : lanes_)
    if (l.tail < l.head) return false;
  return true;
}

uint64_t RingReader::complete_until() const {
  uint64_t until = UINT64_MAX;
  for (const Lane& l : lanes_) {
    if (l.capped) until = std::min(until, l.last_tsc);
    until = std::min(until, l.waiting_since);
  }
  return until;
}

uint64_t RingReader::lost() const {
  uint64_t sum = 0;
  for (const LaneStats& s : stats_) sum += s.lost();
  return sum;
}

void merge_by_time(std::vector<FastRecord>& records) {
  std::stable_sort(records.begin(), records.end(), [](const FastRecord& a, const FastRecord& b) {
    if (a.tsc != b.tsc) return a.tsc < b.tsc;
    return tie_rank(a.kind) < tie_rank(b.kind);
  });
}

}  // namespace atrace::fastpath
