// The client's read-ahead: which objects of a file to fetch before the reader asks for them.
//
// A miss costs a whole network round trip (~1 ms on loopback, more across hosts) before any
// byte moves, so a reader that takes one object at a time runs at object_size / round trip
// however fast the OSDs and links are. A sequential reader's next objects are fetched in the
// background instead; with COR they come from the replica OSD, which has them in memory
// (common/window_table.h), so the client's read-ahead and the OSD's prefetch stack.
//
// Per file, like Linux's on-demand read-ahead: a read that continues the last one (the same
// object, the next, or one already fetched ahead) keeps the stream; the first continuation
// starts a window of `initial_objects`, and each time the reader has used up half of what was
// fetched ahead the window doubles (up to `max_objects` and the caller's cap) and the objects
// up to a window ahead of the reader are fetched. Any other read (a jump) ends the stream.
// A file read from its first object starts at once: such files are usually read whole.
// Requests a multithreaded FUSE loop hands over slightly out of order (a read just behind the
// last) are neither a jump nor progress.
//
// A file read at random gains nothing from a window, but every miss still waits a round trip
// while the machine idles. Once a file has seen `jumps_to_fill` jumps and has at most
// `max_fill_objects` objects (the caller sizes that to a small share of its cache), the whole
// file is filled instead: NextToFill hands out its objects from the first on, for the caller
// to fetch a few at a time in the background, so later reads hit (whole-file caching, as
// AFS does for the files it caches).
//
// Pure logic, no locking.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <optional>

namespace orthofs {

struct ReadAheadOptions {
  uint32_t initial_objects = 2;
  uint32_t max_objects = 16;      // 2 MiB ahead at the default object size
  size_t max_files = 1024;        // streams kept; the least recently read file's is dropped
  uint32_t jumps_to_fill = 4;     // jumps after which a small file is filled whole
  uint64_t max_fill_objects = 0;  // the largest file filled, in objects; 0: none
};

// Objects [begin, end) of a file.
struct ObjectRange {
  uint64_t begin = 0;
  uint64_t end = 0;
  bool empty() const { return end <= begin; }
  uint64_t size() const { return empty() ? 0 : end - begin; }
  bool operator==(const ObjectRange&) const = default;
};

class ReadAhead {
 public:
  explicit ReadAhead(const ReadAheadOptions& options = {});

  // A read of objects [first, last] of file `fno`, which has `object_count` objects. Returns
  // the objects to fetch ahead now: after `last`, before `object_count`, at most
  // min(max_objects, cap) ahead of `last`, and none returned before in this stream. cap 0 (the
  // cache is under pressure) fetches nothing ahead.
  ObjectRange OnRead(uint64_t fno, uint64_t first, uint64_t last, uint64_t object_count,
                     uint32_t cap);
  // The file is gone or changed: its stream ends.
  void Forget(uint64_t fno);
  // The next object to fill of a file being filled (OnRead started it), once each; nothing
  // when the file is not (or no longer) being filled or every object was handed out.
  std::optional<uint64_t> NextToFill(uint64_t fno);
  // Pauses filling the file: the fetch of object `failed` failed (an OSD down or recovering;
  // the reader's own reads fail over or say why). The fill resumes from the lowest failed
  // object after another `jumps_to_fill` jumps, so an outage costs a few failed fetches, not
  // the rest of the fill.
  void StopFilling(uint64_t fno, uint64_t failed);

  size_t tracked_files() const { return streams_.size(); }

 private:
  struct Stream {
    uint64_t last = 0;           // the last object read
    uint64_t fetched_until = 0;  // objects before it are fetched or read
    uint32_t window = 0;         // 0: no stream (yet)
    uint32_t jumps = 0;          // reads that were neither the stream's next nor near it
    uint64_t fill_next = 0;      // filling: objects [fill_next, fill_end) not handed out yet
    uint64_t fill_end = 0;
    bool filled = false;  // filling started (a paused fill resumes; it never starts over)
    std::optional<uint64_t> fill_resume;  // paused by a failed fetch: where to resume
    std::list<uint64_t>::iterator lru;
  };
  Stream& Find(uint64_t fno, bool* fresh);
  // A read that is not the stream's continuation: the stream restarts at `last`.
  void Jump(Stream* s, uint64_t last, uint64_t object_count);

  const ReadAheadOptions options_;
  std::map<uint64_t, Stream> streams_;
  std::list<uint64_t> lru_;  // front = most recently read
};

}  // namespace orthofs
