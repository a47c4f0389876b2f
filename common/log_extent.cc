#include "common/log_extent.h"

#include "common/checksum.h"
#include "common/object_record.h"
#include "common/oid.h"

namespace orthofs {
namespace {

constexpr size_t kCheckedBytes = kLogExtentSize - 4;

uint32_t ExtentCheck(std::string_view encoded) {
  return static_cast<uint32_t>(ObjectChecksum(encoded.substr(0, kCheckedBytes)));
}

}  // namespace

std::string EncodeLogExtent(const LogExtent& extent) {
  std::string r;
  r.reserve(kLogExtentSize);
  r.push_back(static_cast<char>(kLogExtentFormat));
  AppendBigEndian64(&r, extent.segment);
  AppendBigEndian64(&r, extent.offset);
  AppendBigEndian32(&r, extent.length);
  AppendBigEndian64(&r, extent.binding);
  AppendBigEndian32(&r, ExtentCheck(r));
  return r;
}

Result<LogExtent> DecodeLogExtent(std::string_view encoded) {
  if (encoded.size() != kLogExtentSize) {
    return Status::Corruption("data log extent of " + std::to_string(encoded.size()) +
                              " bytes, not " + std::to_string(kLogExtentSize));
  }
  if (static_cast<uint8_t>(encoded[0]) != kLogExtentFormat) {
    return Status::Corruption("not a data log extent (format " +
                              std::to_string(static_cast<uint8_t>(encoded[0])) + ")");
  }
  if (ReadBigEndian32(encoded.data() + kCheckedBytes) != ExtentCheck(encoded)) {
    return Status::Corruption("data log extent check mismatch");
  }
  return LogExtent{ReadBigEndian64(encoded.data() + 1), ReadBigEndian64(encoded.data() + 9),
                   ReadBigEndian32(encoded.data() + 17), ReadBigEndian64(encoded.data() + 21)};
}

uint64_t RecordBinding(std::string_view header, std::string_view data) {
  if (header.size() >= kObjectRecordHeaderSize) {
    return ObjectChecksum(header.substr(0, kObjectRecordHeaderSize));
  }
  std::string first(header);
  first.append(data.substr(0, kObjectRecordHeaderSize - header.size()));
  return ObjectChecksum(first);
}

uint64_t RecordBinding(std::string_view header, const BytePieces& data) {
  const uint64_t missing =
      header.size() >= kObjectRecordHeaderSize ? 0 : kObjectRecordHeaderSize - header.size();
  return RecordBinding(header, data.Sub(0, missing).Join());
}

}  // namespace orthofs
