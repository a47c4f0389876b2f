// The stored form of one object: a fixed header (format, version, data checksum, and a check
// of the header itself, since versions drive concurrency control) and the bytes. The length is
// the value's size minus the header, so it cannot disagree with the bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace orthofs {

inline constexpr uint8_t kObjectRecordFormat = 1;
// A deleted metadata object: the header alone, keeping the version so that versions never go
// back (a recreated object continues after it, and a late copy update older than it is
// recognised as stale).
inline constexpr uint8_t kTombstoneRecordFormat = 2;
inline constexpr size_t kObjectRecordHeaderSize = 1 + 8 + 8 + 4;

struct ObjectRecordView {
  uint64_t version = 0;
  uint64_t checksum = 0;
  std::string_view data;  // points into the encoded record
  bool tombstone = false;
};

std::string EncodeObjectRecord(uint64_t version, std::string_view data);
// The same with the checksum already computed (ObjectChecksum(data)).
std::string EncodeObjectRecord(uint64_t version, uint64_t checksum, std::string_view data);
std::string EncodeTombstoneRecord(uint64_t version);
// The header alone: EncodeObjectRecordHeader(v, c) + data == EncodeObjectRecord(v, c, data), for
// writers that hand both pieces to the store without joining them.
std::string EncodeObjectRecordHeader(uint64_t version, uint64_t checksum);
// Checks format, header and data checksums; kCorruption when any is wrong.
Result<ObjectRecordView> DecodeObjectRecord(std::string_view record);
// The same for a record read as two pieces: its first kObjectRecordHeaderSize bytes, then the
// rest (the view's data is `data`).
Result<ObjectRecordView> DecodeObjectRecord(std::string_view header, std::string_view data);

// What a record says of its object without the bytes: the store keeps one beside every record
// (osd/object_store.h), so that a write replacing an object whole need not read the old bytes
// to learn its version and length. Encoded as the record's checked header, the length, and a
// check of both.
struct ObjectRecordSummary {
  uint64_t version = 0;
  uint64_t checksum = 0;
  uint64_t length = 0;
  bool tombstone = false;
  bool operator==(const ObjectRecordSummary&) const = default;
};
inline constexpr size_t kObjectRecordSummarySize = kObjectRecordHeaderSize + 8 + 4;

std::string EncodeObjectRecordSummary(const ObjectRecordSummary& summary);
// The summary of an encoded record, checking its header but not its bytes (a record whose bytes
// are damaged still has a version and a length; reading it whole reports the damage).
Result<ObjectRecordSummary> SummarizeObjectRecord(std::string_view record);
// kCorruption when the size, format or either check is wrong, or a tombstone has bytes.
Result<ObjectRecordSummary> DecodeObjectRecordSummary(std::string_view encoded);

}  // namespace orthofs
