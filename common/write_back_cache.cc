#include "common/write_back_cache.h"

#include <algorithm>
#include <cstring>
#include <iterator>

namespace orthofs {

namespace {

ThrashingConfig ThrashingFor(const WriteBackOptions& options) {
  ThrashingConfig config;
  config.w1_share = options.pressure_share;
  config.w2_share = options.w2_share();
  return config;
}

// How many of the bytes [offset, offset + length) of an object lie within its `stored_size`
// bytes; the rest read as zeros.
uint64_t StoredPart(uint64_t stored_size, uint64_t offset, uint64_t length) {
  return offset < stored_size ? std::min(length, stored_size - offset) : 0;
}

}  // namespace

WriteBackCache::WriteBackCache(const WriteBackOptions& options)
    : options_(options), thrashing_(ThrashingFor(options)) {}

void WriteBackCache::Unaccount(const Entry& e) {
  bytes_ -= e.data.size();
  dirty_bytes_ -= e.dirty.bytes();
  if (Pinned(e)) pinned_bytes_ -= e.data.size();
}

void WriteBackCache::Account(const ObjectKey& key, Entry& e) {
  bytes_ += e.data.size();
  dirty_bytes_ += e.dirty.bytes();
  if (Pinned(e)) pinned_bytes_ += e.data.size();
  thrashing_.Observe(pinned_bytes_, options_.capacity_bytes);
  // Keep the write-back queues in step with the entry.
  if (e.dirty.empty()) {
    if (e.dirty_seq != 0) dirty_order_.erase({e.dirty_seq, key});
    e.dirty_seq = 0;
  }
  if (!e.dirty.empty() && WholeObjectDirty(e)) {
    whole_dirty_.insert(key);
  } else {
    whole_dirty_.erase(key);
  }
}

WriteBackCache::Entry& WriteBackCache::Touch(const ObjectKey& key) {
  auto [it, created] = entries_.try_emplace(key);
  Entry& e = it->second;
  if (created) {
    lru_.push_front(key);
  } else {
    lru_.splice(lru_.begin(), lru_, e.lru);
  }
  e.lru = lru_.begin();
  return e;
}

bool WriteBackCache::CopyOut(const Entry& e, uint64_t offset, uint64_t length, char* out) const {
  const uint64_t stored = StoredPart(e.data.size(), offset, length);
  if (stored > 0) std::memcpy(out, e.data.view().data() + offset, stored);
  std::memset(out + stored, 0, length - stored);
  return stored < length;
}

bool WriteBackCache::ShareOut(std::shared_ptr<const std::string> data, uint64_t offset,
                              uint64_t length, SharedBytes* out) {
  const uint64_t stored = StoredPart(data->size(), offset, length);
  out->Append(std::move(data), offset, stored);
  out->AppendZeros(length - stored);
  return stored < length;
}

bool WriteBackCache::Read(const ObjectKey& key, uint64_t offset, uint64_t length, SharedBytes* out,
                          bool* hole) {
  auto it = entries_.find(key);
  if (it == entries_.end() || !it->second.valid.Covers(offset, offset + length)) {
    ++stats_.read_misses;
    return false;
  }
  ++stats_.read_hits;
  Entry& e = Touch(key);
  const bool past_data = ShareOut(e.data.Share(), offset, length, out);
  if (hole != nullptr) *hole = past_data;
  return true;
}

bool WriteBackCache::Has(const ObjectKey& key) const {
  auto it = entries_.find(key);
  return it != entries_.end() && it->second.valid.Covers(0, options_.object_size);
}

bool WriteBackCache::Delivered(const ObjectKey& key, uint64_t offset, uint64_t length,
                               uint64_t object_end) {
  auto it = entries_.find(key);
  if (it == entries_.end() || length == 0) return false;
  Entry& e = it->second;
  e.delivered.Add(offset, offset + length);
  if (Pinned(e) || !e.delivered.Covers(0, std::min(object_end, options_.object_size))) {
    return false;
  }
  ++stats_.delivered_drops;
  Drop(it);
  return true;
}

bool WriteBackCache::FillAndRead(const ObjectKey& key, uint64_t token, std::string stored,
                                 uint64_t offset, uint64_t length, SharedBytes* out) {
  if (StaleFill(key, token)) {
    // The file changed under the read: answer from what was read, overlaid with what this
    // client knows, but keep nothing.
    ++stats_.stale_fills;
    if (stored.size() > options_.object_size) stored.resize(options_.object_size);
    auto found = entries_.find(key);
    std::string merged = std::move(stored);
    if (found != entries_.end()) {
      const Entry& e = found->second;
      merged.resize(std::max<uint64_t>(merged.size(), e.data.size()), '\0');
      for (const auto& [b, end] : e.valid.ranges()) {
        if (b >= merged.size()) break;
        const uint64_t n = std::min<uint64_t>(end, merged.size()) - b;
        CopyOut(e, b, n, merged.data() + b);
      }
    }
    return ShareOut(std::make_shared<const std::string>(std::move(merged)), offset, length, out);
  }
  const bool hole = ShareOut(Keep(key, std::move(stored)).data.Share(), offset, length, out);
  EvictClean();
  return hole;
}

bool WriteBackCache::Fill(const ObjectKey& key, uint64_t token, std::string stored) {
  if (StaleFill(key, token)) {
    ++stats_.stale_fills;
    return false;
  }
  Keep(key, std::move(stored));
  EvictClean();
  return true;
}

WriteBackCache::Entry& WriteBackCache::Keep(const ObjectKey& key, std::string stored) {
  if (stored.size() > options_.object_size) stored.resize(options_.object_size);
  ++stats_.fills;
  Entry& e = Touch(key);
  Unaccount(e);
  // Fill the gaps between the bytes known here with the stored bytes.
  std::string merged = std::move(stored);
  merged.resize(std::max<uint64_t>(merged.size(), e.data.size()), '\0');
  for (const auto& [b, end] : e.valid.ranges()) {
    if (b >= merged.size()) break;
    CopyOut(e, b, std::min<uint64_t>(end, merged.size()) - b, merged.data() + b);
  }
  e.data.Adopt(std::move(merged));
  e.valid.Add(0, options_.object_size);
  Account(key, e);
  return e;
}

bool WriteBackCache::Write(const ObjectKey& key, uint64_t offset, std::string_view data,
                           CacheClock::time_point now) {
  if (data.empty()) return false;
  ++stats_.writes;
  Entry& e = Touch(key);
  Unaccount(e);
  const uint64_t end = offset + data.size();
  if (offset == 0 && e.data.size() <= end) {
    e.data.Assign(data);  // no zero-filling of bytes about to be overwritten
  } else {
    std::string& bytes = e.data.Mutable();
    if (bytes.size() < end) bytes.resize(end, '\0');
    std::memcpy(bytes.data() + offset, data.data(), data.size());
  }
  e.valid.Add(offset, end);
  e.written = true;
  if (e.dirty.empty()) {
    e.dirty_seq = next_dirty_seq_++;
    e.dirty_since = now;
    dirty_order_.insert({e.dirty_seq, key});
  }
  e.dirty.Add(offset, end);
  Account(key, e);
  EvictClean();
  return whole_dirty_.contains(key) || PartlyWrittenDue();
}

FlushJob WriteBackCache::Take(Entries::iterator it) {
  Entry& e = it->second;
  Unaccount(e);
  FlushJob job;
  job.key = it->first;
  job.owner = e.data.Share();  // no copy: the cache copies before changing them
  job.data = *job.owner;
  job.ranges = e.dirty;
  job.incarnation = e.incarnation;
  // Knowing the whole object, one replacing write is cheaper than several ranged ones.
  job.replace = e.valid.Covers(0, options_.object_size) &&
                (e.dirty.ranges().size() > 1 || e.dirty.Covers(0, e.data.size()));
  e.writing = e.dirty;
  e.dirty.Clear();
  e.in_flight = true;
  Account(it->first, e);
  return job;
}

std::optional<FlushJob> WriteBackCache::TakeFlushOf(uint64_t fno) {
  for (auto it = entries_.lower_bound({fno, 0}); it != entries_.end() && it->first.fno == fno;
       ++it) {
    if (!it->second.dirty.empty() && !it->second.in_flight) return Take(it);
  }
  return std::nullopt;
}

std::optional<FlushJob> WriteBackCache::TakeDueFlush(CacheClock::time_point now) {
  for (const ObjectKey& key : whole_dirty_) {
    auto it = entries_.find(key);
    if (!it->second.in_flight) return Take(it);
  }
  const bool pressure = PartlyWrittenDue();
  for (const auto& [seq, key] : dirty_order_) {
    auto it = entries_.find(key);
    if (it->second.in_flight) continue;
    if (pressure || now - it->second.dirty_since >= options_.max_dirty_age) return Take(it);
    return std::nullopt;  // later ones became dirty later still
  }
  return std::nullopt;
}

std::optional<FlushJob> WriteBackCache::TakeOldestFlush(const std::set<uint64_t>& skip_files) {
  for (const auto& [seq, key] : dirty_order_) {
    if (skip_files.contains(key.fno)) continue;
    auto it = entries_.find(key);
    if (!it->second.in_flight) return Take(it);
  }
  return std::nullopt;
}

void WriteBackCache::FlushDone(const FlushJob& job, bool ok) {
  FinishFlush(job, ok ? FlushOutcome::kWritten : FlushOutcome::kRetry);
}

void WriteBackCache::FlushRefused(const FlushJob& job) { FinishFlush(job, FlushOutcome::kRefused); }

void WriteBackCache::FinishFlush(const FlushJob& job, FlushOutcome outcome) {
  auto it = entries_.find(job.key);
  if (it == entries_.end()) return;
  Entry& e = it->second;
  Unaccount(e);
  e.in_flight = false;
  e.writing.Clear();
  if (outcome == FlushOutcome::kWritten) {
    ++stats_.flushes;
    stats_.flushed_bytes += job.bytes();
  } else {
    ++stats_.flush_failures;
    if (job.incarnation != e.incarnation) {
      // A truncation cut the bytes off meanwhile: nothing to retry or drop.
    } else if (outcome == FlushOutcome::kRefused && e.dirty.empty()) {
      ++stats_.refused_flushes;
      stats_.refused_bytes += job.bytes();
      e.data.Clear();
      e.valid.Clear();
    } else {
      // Newer writes to these bytes are in the buffer and dirty anyway: retrying the ranges
      // writes the newest bytes. Bytes a truncation cut off meanwhile are not retried.
      if (!e.dirty.empty()) dirty_order_.erase({e.dirty_seq, job.key});
      e.dirty_seq = next_retry_seq_++;
      e.dirty_since = CacheClock::time_point{};  // overdue: retried by the next flush pass
      dirty_order_.insert({e.dirty_seq, job.key});
      ByteRanges retry = job.ranges;
      retry.TrimTo(e.data.size());
      e.dirty.Add(retry);
    }
  }
  Account(job.key, e);
  if (e.valid.empty() && !Pinned(e)) {
    Unaccount(e);
    // A refused write-back may still have landed on one copy: a fetch begun before the write
    // must not bring the old bytes back here.
    if (e.written) RememberWrittenDrop(job.key);
    lru_.erase(e.lru);
    entries_.erase(it);
  }
  EvictClean();
}

void WriteBackCache::Drop(Entries::iterator it) {
  Entry& e = it->second;
  Unaccount(e);
  if (e.in_flight) {
    // Its write-back finishes; then FlushDone removes the emptied entry.
    e.data.Clear();
    e.valid.Clear();
    e.dirty.Clear();
    e.writing.Clear();
    ++e.incarnation;
    Account(it->first, e);
    return;
  }
  e.dirty.Clear();
  Account(it->first, e);  // leaves the write-back queues
  Unaccount(e);
  if (e.written) RememberWrittenDrop(it->first);
  lru_.erase(e.lru);
  entries_.erase(it);
}

bool WriteBackCache::StaleFill(const ObjectKey& key, uint64_t token) const {
  if (token < stale_before_) return true;
  auto dropped = written_drops_.find(key);
  return dropped != written_drops_.end() && token < dropped->second;
}

void WriteBackCache::RememberWrittenDrop(const ObjectKey& key) {
  const uint64_t now = ++fill_clock_;
  written_drops_[key] = now;
  drop_order_.emplace_back(now, key);
  while (drop_order_.size() > kRememberedDrops) {
    // Forgotten, this drop still makes every fill fetched before it stale: a few needless
    // refetches, never old bytes.
    const auto [clock, oldest] = drop_order_.front();
    drop_order_.pop_front();
    stale_before_ = std::max(stale_before_, clock);
    auto it = written_drops_.find(oldest);
    if (it != written_drops_.end() && it->second == clock) written_drops_.erase(it);
  }
}

void WriteBackCache::Forget(uint64_t fno) {
  stale_before_ = ++fill_clock_;
  auto it = entries_.lower_bound({fno, 0});
  while (it != entries_.end() && it->first.fno == fno) Drop(it++);
}

void WriteBackCache::ForgetClean(uint64_t fno) {
  stale_before_ = ++fill_clock_;
  auto it = entries_.lower_bound({fno, 0});
  while (it != entries_.end() && it->first.fno == fno) {
    Entry& e = it->second;
    if (!Pinned(e)) {
      Drop(it++);
      continue;
    }
    // Only what this client wrote is still known: dirty bytes and those on their way out.
    Unaccount(e);
    e.valid = e.dirty;
    e.valid.Add(e.writing);
    Account(it->first, e);
    ++it;
  }
}

void WriteBackCache::Truncate(uint64_t fno, uint64_t size) {
  stale_before_ = ++fill_clock_;
  const uint64_t os = options_.object_size;
  const uint64_t first_gone = (size + os - 1) / os;  // objects from here on hold no byte
  auto it = entries_.lower_bound({fno, first_gone});
  while (it != entries_.end() && it->first.fno == fno) Drop(it++);
  if (size % os == 0) return;
  auto boundary = entries_.find({fno, size / os});
  if (boundary == entries_.end()) return;
  Entry& e = boundary->second;
  const uint64_t cut = size % os;
  Unaccount(e);
  e.data.TruncateTo(cut);  // bytes beyond the cut now read as zeros
  e.dirty.TrimTo(cut);
  Account(boundary->first, e);
}

bool WriteBackCache::HasUnwritten(uint64_t fno) const {
  for (auto it = entries_.lower_bound({fno, 0}); it != entries_.end() && it->first.fno == fno;
       ++it) {
    if (Pinned(it->second)) return true;
  }
  return false;
}

bool WriteBackCache::HasInFlight(uint64_t fno) const {
  for (auto it = entries_.lower_bound({fno, 0}); it != entries_.end() && it->first.fno == fno;
       ++it) {
    if (it->second.in_flight) return true;
  }
  return false;
}

std::vector<uint64_t> WriteBackCache::FilesWithUnwritten() const {
  std::vector<uint64_t> files;
  for (const auto& [key, e] : entries_) {
    if (Pinned(e) && (files.empty() || files.back() != key.fno)) files.push_back(key.fno);
  }
  return files;
}

void WriteBackCache::EvictClean() {
  auto it = lru_.end();
  while (bytes_ > options_.capacity_bytes && it != lru_.begin()) {
    --it;
    auto found = entries_.find(*it);
    if (Pinned(found->second)) continue;
    ++stats_.evictions;
    Unaccount(found->second);
    if (found->second.written) RememberWrittenDrop(found->first);
    it = lru_.erase(it);
    entries_.erase(found);
  }
}

WriteBackStats WriteBackCache::stats() const {
  WriteBackStats s = stats_;
  s.entries = entries_.size();
  s.bytes = bytes_;
  s.dirty_bytes = dirty_bytes_;
  s.pinned_bytes = pinned_bytes_;
  s.pressure_episodes = thrashing_.stats().pressure_episodes;
  return s;
}

}  // namespace orthofs
