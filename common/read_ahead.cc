#include "common/read_ahead.h"

#include <algorithm>

namespace orthofs {

ReadAhead::ReadAhead(const ReadAheadOptions& options) : options_(options) {}

ReadAhead::Stream& ReadAhead::Find(uint64_t fno, bool* fresh) {
  auto found = streams_.find(fno);
  *fresh = found == streams_.end();
  if (!*fresh) {
    lru_.splice(lru_.begin(), lru_, found->second.lru);
    return found->second;
  }
  if (streams_.size() >= std::max<size_t>(options_.max_files, 1)) {
    streams_.erase(lru_.back());
    lru_.pop_back();
  }
  lru_.push_front(fno);
  Stream& s = streams_[fno];
  s.lru = lru_.begin();
  return s;
}

void ReadAhead::Jump(Stream* s, uint64_t last, uint64_t object_count) {
  s->last = last;
  s->fetched_until = last + 1;
  s->window = 0;
  if (++s->jumps < options_.jumps_to_fill) return;
  if (s->fill_resume) {
    s->fill_next = std::min(*s->fill_resume, s->fill_end);
    s->fill_resume.reset();
  } else if (!s->filled && object_count > 0 && object_count <= options_.max_fill_objects) {
    s->filled = true;
    s->fill_next = 0;
    s->fill_end = object_count;
  }
}

ObjectRange ReadAhead::OnRead(uint64_t fno, uint64_t first, uint64_t last, uint64_t object_count,
                              uint32_t cap) {
  bool fresh = false;
  Stream& s = Find(fno, &fresh);
  if (fresh) {
    if (first != 0) {
      Jump(&s, last, object_count);  // a first read in the middle is a jump there
      return {};
    }
    s.last = last;
    s.fetched_until = last + 1;
    s.window = 0;
  } else if (last < s.last) {
    // Behind the stream: a request the FUSE loop handed over late, or a jump back.
    if (s.last - last > std::max<uint64_t>(s.window, 1)) Jump(&s, last, object_count);
    return {};
  } else if (first > std::max(s.last + 1, s.fetched_until)) {
    Jump(&s, last, object_count);  // a jump forward
    return {};
  } else {
    s.last = last;
  }
  s.fetched_until = std::max(s.fetched_until, last + 1);
  const uint32_t limit = std::min(options_.max_objects, cap);
  if (limit == 0) return {};
  const uint64_t ahead = s.fetched_until - (last + 1);
  if (s.window == 0) {
    s.window = std::min(std::max(options_.initial_objects, 1u), limit);
  } else if (ahead * 2 > s.window) {
    return {};  // more than half a window still ahead: fetch in batches, not per read
  } else {
    s.window = std::min(s.window * 2, limit);
  }
  s.window = std::min(s.window, limit);
  const uint64_t until = std::min(last + 1 + s.window, object_count);
  if (until <= s.fetched_until) return {};
  const ObjectRange range{s.fetched_until, until};
  s.fetched_until = until;
  return range;
}

std::optional<uint64_t> ReadAhead::NextToFill(uint64_t fno) {
  auto found = streams_.find(fno);
  if (found == streams_.end() || found->second.fill_next >= found->second.fill_end) {
    return std::nullopt;
  }
  return found->second.fill_next++;
}

void ReadAhead::StopFilling(uint64_t fno, uint64_t failed) {
  auto found = streams_.find(fno);
  if (found == streams_.end() || !found->second.filled) return;
  Stream& s = found->second;
  s.fill_resume = std::min(s.fill_resume.value_or(failed), failed);
  s.fill_next = s.fill_end;
  s.jumps = 0;
}

void ReadAhead::Forget(uint64_t fno) {
  auto found = streams_.find(fno);
  if (found == streams_.end()) return;
  lru_.erase(found->second.lru);
  streams_.erase(found);
}

}  // namespace orthofs
