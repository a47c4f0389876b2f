// The client's object cache (docs/DESIGN.md §7.1; [Knafla 1998] §3.2): the bytes of file
// objects this client read or wrote, kept whole per object and written back later by a pool of
// flush threads. Reads are served from it when every requested byte is known here; writes only
// copy into it. Objects written whole are due for write-back at once (they are unlikely to
// change again and writing them early overlaps the network with the writer); partly written
// ones when they reach the maximum dirty age, under memory pressure, or when the file is
// flushed (close, fsync).
//
// Pure state with no I/O and no locking: the owner serializes calls and does the writes.
#pragma once

#include <chrono>
#include <compare>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/byte_ranges.h"
#include "common/cow_bytes.h"
#include "common/shared_bytes.h"
#include "common/thrashing_control.h"

namespace orthofs {

using CacheClock = std::chrono::steady_clock;

struct ObjectKey {
  uint64_t fno = 0;
  uint64_t index = 0;  // object index in the file
  auto operator<=>(const ObjectKey&) const = default;
};

struct WriteBackOptions {
  uint64_t capacity_bytes = 256ull << 20;
  uint64_t object_size = 128 << 10;
  std::chrono::milliseconds max_dirty_age{5000};
  // W1 ([Wu 1993]): when dirty and in-flight objects fill this share of the cache, writers
  // write back synchronously until they are down to W2 = 0.8 W1. Between W2 and W1 the flush
  // threads write back partly written objects without waiting for their age; below W2 those
  // wait, so that rewrites of an object (random small writes) become one write-back.
  double pressure_share = 0.5;
  double w2_share() const { return pressure_share * 0.8; }
};

// One object's write-back: the bytes to write and where they go.
struct FlushJob {
  ObjectKey key;
  // The object's bytes [0, data.size()) when the job was taken, shared with the cache, which
  // copies them before it changes them (common/cow_bytes.h): they never change under the
  // write-back, whose requests refer to them until sent (ClusterClient::WriteBothCopiesAsync).
  std::string_view data;
  std::shared_ptr<const std::string> owner;  // holds `data`
  ByteRanges ranges;                         // the dirty ranges this job writes (offsets into data)
  bool replace = false;  // the cache knows the whole object: write `data` as its new content
  uint64_t incarnation = 0;
  uint64_t bytes() const { return replace ? data.size() : ranges.bytes(); }
};

struct WriteBackStats {
  uint64_t read_hits = 0;
  uint64_t read_misses = 0;
  uint64_t fills = 0;
  uint64_t stale_fills = 0;  // fetched while the file was truncated or invalidated: not kept
  uint64_t writes = 0;
  uint64_t flushes = 0;
  uint64_t flushed_bytes = 0;
  uint64_t flush_failures = 0;
  uint64_t refused_flushes = 0;  // dropped for good (FlushRefused)
  uint64_t refused_bytes = 0;
  uint64_t evictions = 0;
  uint64_t delivered_drops = 0;  // clean objects dropped once the kernel had them whole
  uint64_t entries = 0;
  uint64_t bytes = 0;              // cached bytes
  uint64_t dirty_bytes = 0;        // written here, not yet taken for write-back
  uint64_t pinned_bytes = 0;       // bytes of objects that are dirty or being written back
  uint64_t pressure_episodes = 0;  // times W1 was reached
};

class WriteBackCache {
 public:
  explicit WriteBackCache(const WriteBackOptions& options);

  WriteBackCache(const WriteBackCache&) = delete;
  WriteBackCache& operator=(const WriteBackCache&) = delete;

  // Appends [offset, offset + length) of the object to `out` if every byte is known here: the
  // cached bytes themselves, shared (they never change under `out`: common/cow_bytes.h).
  // `hole`, if given, is set when some of those bytes lie past every byte stored or written
  // (they read as zeros: a sparse file's hole, or an object deleted under the reader).
  bool Read(const ObjectKey& key, uint64_t offset, uint64_t length, SharedBytes* out,
            bool* hole = nullptr);

  // Taken before reading an object from the OSDs and handed to FillAndRead: a fill that raced
  // with a Truncate or Forget of its file is not kept, nor one that raced with this client's
  // write of its object when the written object has left the cache since (the fetch may
  // carry the bytes from before the write, and nothing here would win over them any more).
  uint64_t FillToken() const { return fill_clock_; }
  // The object as the OSDs hold it (`stored`; bytes beyond it read as zeros, as do absent
  // objects). Bytes written here are newer and win. Appends [offset, offset + length) of the
  // merged object to `out`, as Read does. The cache keeps `stored` itself (moved in: no copy of
  // the object). Returns whether some of those bytes were a hole (see Read).
  bool FillAndRead(const ObjectKey& key, uint64_t token, std::string stored, uint64_t offset,
                   uint64_t length, SharedBytes* out);

  // FillAndRead without a reader (read-ahead): keeps the object unless the token is stale.
  bool Fill(const ObjectKey& key, uint64_t token, std::string stored);
  // Whether every byte of the object is known here (no fetch needed to read it whole).
  bool Has(const ObjectKey& key) const;
  // Bytes [offset, offset + length) of the object went to the kernel's page cache (a read
  // that was not O_DIRECT). Once the kernel has had every byte of the object up to
  // `object_end` (its end in the file, capped at the object size), a clean object is dropped
  // here: a second copy of bytes the kernel now serves itself only takes memory, and the freed
  // buffer takes the next object read without faulting in fresh pages. Dirty or in-flight
  // objects stay. Returns whether the object was dropped.
  bool Delivered(const ObjectKey& key, uint64_t offset, uint64_t length, uint64_t object_end);
  // Objects read-ahead may fetch ahead of a reader now: thrashing control's prefetch quantity
  // ([Wu 1993]), halved each time dirty and in-flight objects crowd the cache to W1.
  uint32_t ReadAheadQuantity() const { return thrashing_.prefetch_quantity(); }
  // Copies new bytes into the object and marks them dirty. (Written objects stay when written
  // back, though the kernel has their pages too: once this client's close publishes a new
  // mtime, the kernel drops its pages of the file at the next attribute refresh, and reading
  // the file back then comes here.)
  // Returns whether write-back is now due at once: the object is written whole, or pinned
  // bytes reached W2, when partly written objects are due too.
  bool Write(const ObjectKey& key, uint64_t offset, std::string_view data,
             CacheClock::time_point now);

  // Take an object's dirty bytes for write-back; it stays pinned until FlushDone. At most one
  // write-back per object is in flight, so writes reach the OSDs in order.
  std::optional<FlushJob> TakeFlushOf(uint64_t fno);                 // any dirty object of the file
  std::optional<FlushJob> TakeDueFlush(CacheClock::time_point now);  // whole, aged, or pressure
  // Synchronous write-back: the oldest dirty object not of a file in `skip_files`.
  std::optional<FlushJob> TakeOldestFlush(const std::set<uint64_t>& skip_files = {});
  // A failed write-back leaves its bytes dirty, to be retried.
  void FlushDone(const FlushJob& job, bool ok);
  // A write-back the OSDs refused for good (a full disk): retrying cannot help, so its bytes
  // leave the cache, dirty and cached alike, and later reads see what the OSDs hold. If newer
  // writes re-dirtied the object meanwhile, the job's bytes are retried with them instead.
  void FlushRefused(const FlushJob& job);

  // Drops every byte of the file, dirty ones too (the file is gone). Write-backs in flight
  // finish, but nothing of them is kept.
  void Forget(uint64_t fno);
  // Drops the bytes of the file that this client did not write (another client changed it).
  void ForgetClean(uint64_t fno);
  // The file is now `size` bytes long: bytes beyond are dropped; they read as zeros later.
  void Truncate(uint64_t fno, uint64_t size);

  // Dirty or in-flight bytes of the file exist.
  bool HasUnwritten(uint64_t fno) const;
  bool HasInFlight(uint64_t fno) const;
  // Files with dirty or in-flight bytes, ascending.
  std::vector<uint64_t> FilesWithUnwritten() const;
  // Dirty and in-flight objects reached W1 and are not back down to W2: writers should write
  // back synchronously (thrashing control, common/thrashing_control.h).
  bool UnderPressure() const { return thrashing_.under_pressure(); }
  // Dirty and in-flight objects fill the cache: writers must wait for write-backs.
  bool Full() const { return pinned_bytes_ >= options_.capacity_bytes; }
  // Room left before caching more evicts something.
  uint64_t FreeBytes() const {
    return options_.capacity_bytes > bytes_ ? options_.capacity_bytes - bytes_ : 0;
  }

  WriteBackStats stats() const;
  const WriteBackOptions& options() const { return options_; }

 private:
  struct Entry {
    CowBytes data;         // bytes [0, data.size()); beyond are zeros where valid
    ByteRanges valid;      // bytes known here
    ByteRanges dirty;      // written here, not yet taken for write-back; subset of valid
    ByteRanges writing;    // the ranges of the write-back in flight
    ByteRanges delivered;  // bytes the kernel's page cache received from here (Delivered)
    bool in_flight = false;
    bool written = false;      // this client wrote bytes of it (Write)
    uint64_t incarnation = 0;  // bumped when the bytes are dropped under a write-back
    uint64_t dirty_seq = 0;    // position in dirty_order_ while dirty
    CacheClock::time_point dirty_since;
    std::list<ObjectKey>::iterator lru;
  };
  using Entries = std::map<ObjectKey, Entry>;

  bool Pinned(const Entry& e) const { return e.in_flight || !e.dirty.empty(); }
  bool WholeObjectDirty(const Entry& e) const { return e.dirty.Covers(0, options_.object_size); }
  // Pinned bytes reached W2: partly written objects are written back without waiting for
  // their age, so that writers reach W1 (synchronous write-back) later. (From half of W1, as
  // it once was, random 16 KiB writes of 5 x 100 MiB went at 103-123 MB/s: objects were
  // written back again and again while the writer kept changing them; from W2 at 153-196.)
  bool PartlyWrittenDue() const {
    return pinned_bytes_ >= static_cast<uint64_t>(static_cast<double>(options_.capacity_bytes) *
                                                  options_.w2_share());
  }
  // Whether a fill with `token` came too late to be kept (see FillToken).
  bool StaleFill(const ObjectKey& key, uint64_t token) const;
  // An entry this client wrote leaves the cache: fills of it fetched before now are stale.
  void RememberWrittenDrop(const ObjectKey& key);
  // Every state change of an entry happens between Unaccount and Account.
  void Unaccount(const Entry& e);
  void Account(const ObjectKey& key, Entry& e);
  Entry& Touch(const ObjectKey& key);  // finds or creates, and marks most recently used
  // Returns whether some of the bytes lay past the entry's data (a hole: zeros).
  bool CopyOut(const Entry& e, uint64_t offset, uint64_t length, char* out) const;
  // CopyOut's bytes shared rather than copied: appended to `out`.
  static bool ShareOut(std::shared_ptr<const std::string> data, uint64_t offset, uint64_t length,
                       SharedBytes* out);
  // Merges the stored bytes under the ones known here; the object is then valid whole.
  Entry& Keep(const ObjectKey& key, std::string stored);
  FlushJob Take(Entries::iterator it);
  void Drop(Entries::iterator it);  // dropped now, or emptied and dropped after its write-back
  void EvictClean();
  enum class FlushOutcome { kWritten, kRetry, kRefused };
  void FinishFlush(const FlushJob& job, FlushOutcome outcome);

  const WriteBackOptions options_;
  Entries entries_;
  std::list<ObjectKey> lru_;                              // front = most recently used
  std::set<std::pair<uint64_t, ObjectKey>> dirty_order_;  // by the time they became dirty
  std::set<ObjectKey> whole_dirty_;                       // due for write-back at once
  // Failed write-backs are retried first, so their sequence numbers sort before all others.
  uint64_t next_retry_seq_ = 1;
  uint64_t next_dirty_seq_ = 1ull << 63;
  // Fill tokens: the clock ticks at every event that makes earlier fills stale. Fills with a
  // token before `stale_before_` are stale for every object (a Truncate or Forget, or a
  // written drop forgotten below); those before the clock of a remembered drop of their
  // object are stale for that object.
  uint64_t fill_clock_ = 0;
  uint64_t stale_before_ = 0;
  std::map<ObjectKey, uint64_t> written_drops_;           // object -> clock of its drop
  std::list<std::pair<uint64_t, ObjectKey>> drop_order_;  // oldest first
  static constexpr size_t kRememberedDrops = 4096;
  uint64_t bytes_ = 0;
  uint64_t dirty_bytes_ = 0;
  uint64_t pinned_bytes_ = 0;
  ThrashingController thrashing_;
  WriteBackStats stats_;
};

}  // namespace orthofs
