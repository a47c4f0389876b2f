// The OSD's data log: object records of 4 KiB and more are appended to segment files (the store
// keeps their extents, common/log_extent.h, in RocksDB), so each byte is written once instead of
// into RocksDB's write-ahead log, its memtable and then a blob file. Segments are appended to one
// at a time (the active one, replaced by a new one when full or at every open) and deleted by the
// store's garbage collection once nothing refers to them. Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/byte_pieces.h"
#include "common/log_extent.h"
#include "common/segment_usage.h"
#include "common/status.h"

namespace orthofs {

class DataLog {
 public:
  static constexpr uint64_t kDefaultSegmentBytes = 64 << 20;

  struct Options {
    uint64_t segment_bytes = kDefaultSegmentBytes;
    // Each read first drops its range from the page cache (cold-read experiments).
    bool drop_cache_before_reads = false;
    // Appended bytes leave the page cache once on disk (drop-behind): a stream of writes does
    // not push the data that reads use out of the page cache, and new appends reuse pages
    // just freed instead of taking fresh ones.
    bool drop_written_pages = true;
  };

  // Opens (creating) the log in `dir`: every segment file found is kept, and a new one starts,
  // numbered after every file found and at least `min_next_segment` (the store's counts name
  // segments whose files a power loss may have taken: their ids are never used again).
  static Result<std::unique_ptr<DataLog>> Open(const std::string& dir, const Options& options,
                                               uint64_t min_next_segment = 1);
  // fdatasync of every segment in `dir` (and of the directory): a previous run's appends are
  // durable before the store's index, which may refer to them, is opened (and made durable).
  static Status SyncExisting(const std::string& dir);
  ~DataLog();

  // A record to append: its header and bytes, written as they are.
  struct Record {
    std::string_view header;
    BytePieces data;
  };
  // Appends the records one after another, each where Append would put it (a new segment when
  // the active one lacks room), in pieces (pwritev, no joined copy): one write call per segment
  // the batch lands in. Concurrent appends write side by side. Each extent's segment stays
  // pinned (never collected) until Indexed or Abandoned is called for the extent.
  Result<std::vector<LogExtent>> AppendAll(const std::vector<Record>& records);
  // One record (AppendAll).
  Result<LogExtent> Append(std::string_view header, const BytePieces& data);
  Result<LogExtent> Append(std::string_view header, std::string_view data) {
    return Append(header, BytePieces(data));
  }
  // The store's index now refers to `added` instead of `removed` (either may be empty): the
  // live counts move and the added extents' pins are released.
  void Indexed(const std::vector<LogExtent>& added, const std::vector<LogExtent>& removed);
  // An appended extent the index will never refer to (its write failed): garbage.
  void Abandoned(const LogExtent& extent);
  // At open: the live bytes the store's counters recorded for a segment. False (and logged)
  // when the segment's file is missing.
  bool RestoreLive(uint64_t segment, int64_t live);

  // The record at `extent`: its first `header->size()` bytes into header (resized by the
  // caller), the rest into data. kNotFound when the segment has been collected (the index
  // moved on: read it again), kCorruption when the file is shorter than the extent.
  Status Read(const LogExtent& extent, std::string* header, std::string* data) const;

  // Starts reading the extents from disk (posix_fadvise WILLNEED), for Reads that follow.
  void WillNeed(const std::vector<LogExtent>& extents) const;

  // fdatasync of every segment appended to since the last Sync (and of the directory when
  // segments were created): every record appended before the call is durable (and, with
  // drop_written_pages, out of the page cache). A failed
  // fdatasync fails every later Sync and Append: the kernel may have dropped the pages it
  // could not write, so a retry that succeeds would prove nothing.
  Status Sync();

  // Starts a new active segment when the current one holds garbage, so that collection can
  // reach it too (space is short).
  Status SealActiveIfGarbage();
  // Segments garbage collection should empty (SegmentUsage::Victims).
  std::vector<uint64_t> Victims(double min_garbage_fraction, uint64_t max_live_bytes) const;
  // Deletes a collected segment. Reads under way keep their open file.
  Status Remove(uint64_t segment);

  uint64_t total_bytes() const;
  uint64_t garbage_bytes() const;
  // Records were appended since the last Sync took its segments (not yet durable).
  bool HasUnsynced() const;
  int64_t live_bytes(uint64_t segment) const;
  std::vector<uint64_t> segments() const;
  const std::string& dir() const { return dir_; }

 private:
  struct Segment;
  DataLog(std::string dir, const Options& options);
  // Creates segment `id` and makes it the active one (mu_ held).
  Status StartSegmentLocked(uint64_t id);
  // Writes `bytes` at `start` of the segment (its place reserved), then starts their disk
  // writes every kWritebackChunkBytes (and drops the chunks before, written by now).
  Status WriteRun(const std::shared_ptr<Segment>& segment, uint64_t start, const BytePieces& bytes);
  std::string PathOf(uint64_t id) const;
  std::shared_ptr<Segment> Find(uint64_t id) const;

  // Drops the segment's pages from `segment.*dropped_to` up to `end` from the page cache (those
  // still dirty or being written stay) and moves that cursor to `end`.
  void DropWrittenPages(Segment& segment, uint64_t Segment::*dropped_to, uint64_t end);

  const std::string dir_;
  const Options options_;
  std::mutex sync_mu_;  // held through a Sync
  mutable std::mutex mu_;
  std::map<uint64_t, std::shared_ptr<Segment>> segments_;  // guarded by mu_
  std::shared_ptr<Segment> active_;                        // guarded by mu_
  uint64_t active_id_ = 0;                                 // guarded by mu_
  uint64_t active_size_ = 0;                               // guarded by mu_
  SegmentUsage usage_;                                     // guarded by mu_
  bool directory_changed_ = false;                         // guarded by mu_
  std::vector<std::shared_ptr<Segment>> unsynced_;         // guarded by mu_
  Status failed_;                                          // guarded by mu_: a failed sync
};

}  // namespace orthofs
