#include "common/object_record.h"

#include "common/checksum.h"
#include "common/oid.h"

namespace orthofs {
namespace {

constexpr size_t kCheckedHeaderBytes = 1 + 8 + 8;

uint32_t HeaderCheck(std::string_view header) {
  return static_cast<uint32_t>(ObjectChecksum(header.substr(0, kCheckedHeaderBytes)));
}

std::string EncodeHeader(uint8_t format, uint64_t version, uint64_t checksum,
                         size_t reserve_for_data) {
  std::string r;
  r.reserve(kObjectRecordHeaderSize + reserve_for_data);
  r.push_back(static_cast<char>(format));
  AppendBigEndian64(&r, version);
  AppendBigEndian64(&r, checksum);
  AppendBigEndian32(&r, HeaderCheck(r));
  return r;
}

std::string EncodeRecord(uint8_t format, uint64_t version, uint64_t checksum,
                         std::string_view data) {
  std::string r = EncodeHeader(format, version, checksum, data.size());
  r.append(data);
  return r;
}

// The checked header at the start of `record` (at least kObjectRecordHeaderSize bytes).
Result<ObjectRecordView> DecodeHeader(std::string_view record) {
  const uint8_t format = static_cast<uint8_t>(record[0]);
  if (format != kObjectRecordFormat && format != kTombstoneRecordFormat) {
    return Status::Corruption("object record has unknown format " +
                              std::to_string(static_cast<uint8_t>(record[0])));
  }
  if (ReadBigEndian32(record.data() + kCheckedHeaderBytes) != HeaderCheck(record)) {
    return Status::Corruption("object record header check mismatch");
  }
  ObjectRecordView view;
  view.version = ReadBigEndian64(record.data() + 1);
  view.checksum = ReadBigEndian64(record.data() + 9);
  view.tombstone = format == kTombstoneRecordFormat;
  return view;
}

// A record checked but for its bytes' checksum: size, header, and a tombstone's emptiness.
Result<ObjectRecordView> DecodeAllButTheBytes(std::string_view record) {
  if (record.size() < kObjectRecordHeaderSize) {
    return Status::Corruption("object record of " + std::to_string(record.size()) +
                              " bytes is shorter than its header");
  }
  Result<ObjectRecordView> view = DecodeHeader(record);
  if (!view.ok()) return view;
  view->data = record.substr(kObjectRecordHeaderSize);
  if (view->tombstone && (!view->data.empty() || view->checksum != 0)) {
    return Status::Corruption("tombstone record carries data");
  }
  return view;
}

}  // namespace

std::string EncodeObjectRecordHeader(uint64_t version, uint64_t checksum) {
  return EncodeHeader(kObjectRecordFormat, version, checksum, 0);
}

std::string EncodeObjectRecord(uint64_t version, std::string_view data) {
  return EncodeObjectRecord(version, ObjectChecksum(data), data);
}

std::string EncodeObjectRecord(uint64_t version, uint64_t checksum, std::string_view data) {
  return EncodeRecord(kObjectRecordFormat, version, checksum, data);
}

std::string EncodeTombstoneRecord(uint64_t version) {
  return EncodeRecord(kTombstoneRecordFormat, version, 0, "");
}

Result<ObjectRecordView> DecodeObjectRecord(std::string_view record) {
  Result<ObjectRecordView> view = DecodeAllButTheBytes(record);
  if (view.ok() && !view->tombstone && ObjectChecksum(view->data) != view->checksum) {
    return Status::Corruption("object record checksum mismatch");
  }
  return view;
}

Result<ObjectRecordView> DecodeObjectRecord(std::string_view header, std::string_view data) {
  if (header.size() != kObjectRecordHeaderSize) {
    return Status::Corruption("object record header of " + std::to_string(header.size()) +
                              " bytes");
  }
  Result<ObjectRecordView> view = DecodeHeader(header);
  if (!view.ok()) return view;
  view->data = data;
  if (view->tombstone && (!data.empty() || view->checksum != 0)) {
    return Status::Corruption("tombstone record carries data");
  }
  if (!view->tombstone && ObjectChecksum(data) != view->checksum) {
    return Status::Corruption("object record checksum mismatch");
  }
  return view;
}

Result<ObjectRecordSummary> SummarizeObjectRecord(std::string_view record) {
  Result<ObjectRecordView> view = DecodeAllButTheBytes(record);
  if (!view.ok()) return view.status();
  return ObjectRecordSummary{view->version, view->checksum, view->data.size(), view->tombstone};
}

std::string EncodeObjectRecordSummary(const ObjectRecordSummary& summary) {
  std::string r = summary.tombstone
                      ? EncodeHeader(kTombstoneRecordFormat, summary.version, 0, 8)
                      : EncodeHeader(kObjectRecordFormat, summary.version, summary.checksum, 8);
  AppendBigEndian64(&r, summary.tombstone ? 0 : summary.length);
  AppendBigEndian32(&r, static_cast<uint32_t>(ObjectChecksum(r)));
  return r;
}

Result<ObjectRecordSummary> DecodeObjectRecordSummary(std::string_view encoded) {
  if (encoded.size() != kObjectRecordSummarySize) {
    return Status::Corruption("object record summary of " + std::to_string(encoded.size()) +
                              " bytes, not " + std::to_string(kObjectRecordSummarySize));
  }
  const size_t checked = kObjectRecordSummarySize - 4;
  if (ReadBigEndian32(encoded.data() + checked) !=
      static_cast<uint32_t>(ObjectChecksum(encoded.substr(0, checked)))) {
    return Status::Corruption("object record summary check mismatch");
  }
  Result<ObjectRecordView> header = DecodeHeader(encoded);
  if (!header.ok()) return header.status();
  ObjectRecordSummary summary{header->version, header->checksum,
                              ReadBigEndian64(encoded.data() + kObjectRecordHeaderSize),
                              header->tombstone};
  if (summary.tombstone && (summary.checksum != 0 || summary.length != 0)) {
    return Status::Corruption("tombstone summary carries data");
  }
  return summary;
}

}  // namespace orthofs
