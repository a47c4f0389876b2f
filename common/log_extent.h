// Where a record's bytes lie in an OSD's data log (osd/data_log.h): the store keeps this under
// the object's key instead of the record, so that a 128 KiB object is written once (appended to
// the log) rather than into RocksDB's write-ahead log, its memtable and then a blob file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/byte_pieces.h"
#include "common/status.h"

namespace orthofs {

// The first byte of a stored value says what it is: 1 and 2 are records
// (common/object_record.h), 3 an extent of the data log.
inline constexpr uint8_t kLogExtentFormat = 3;
inline constexpr size_t kLogExtentSize = 1 + 8 + 8 + 4 + 8 + 4;

struct LogExtent {
  uint64_t segment = 0;
  uint64_t offset = 0;
  uint32_t length = 0;  // of the whole record: header and bytes
  // RecordBinding of the record written there: an extent that outlived its bytes (a power loss
  // between the log and the index) cannot pass off another record as this object's.
  uint64_t binding = 0;
  bool operator==(const LogExtent&) const = default;
};

// A check of a record's first kObjectRecordHeaderSize bytes (its header: format, version, data
// checksum), given as the record's first piece and (when that is shorter) the bytes after it.
uint64_t RecordBinding(std::string_view header, std::string_view data);
// The same for bytes in pieces (only the few the header lacks are joined).
uint64_t RecordBinding(std::string_view header, const BytePieces& data);

std::string EncodeLogExtent(const LogExtent& extent);
// kCorruption when the size, format or check is wrong.
Result<LogExtent> DecodeLogExtent(std::string_view encoded);
// Whether a stored value is an extent (possibly damaged) rather than a record.
inline bool IsLogExtent(std::string_view value) {
  return !value.empty() && static_cast<uint8_t>(value[0]) == kLogExtentFormat;
}

}  // namespace orthofs
