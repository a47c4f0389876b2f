// A file's bytes as objects: byte ranges split at object boundaries, objects read from the
// original (the replica on failure), written to both copies in parallel. Unwritten objects
// read as zeros and are never stored (sparse files).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "client/osd_client.h"

namespace orthofs {

// One object's share of a byte range.
struct ObjectSpan {
  uint64_t index;          // object index in the file
  uint64_t offset;         // within the object
  uint64_t length;         // bytes
  uint64_t buffer_offset;  // where the span starts in the caller's buffer
};

// Splits [offset, offset + length) at object boundaries. Pure; unit-tested.
std::vector<ObjectSpan> SplitIntoObjects(uint64_t offset, uint64_t length, uint64_t object_size);

class FileIo {
 public:
  FileIo(ClusterClient* cluster, uint32_t fnso) : cluster_(cluster), fnso_(fnso) {}

  // Reads up to `length` bytes at `offset` of a file of `file_size` bytes.
  Result<std::string> Read(uint64_t fno, uint64_t offset, uint64_t length, uint64_t file_size);
  // Writes both copies of every object the range touches; `sync` makes them durable.
  Status Write(uint64_t fno, uint64_t offset, std::string_view data, bool sync);

 private:
  ClusterClient* cluster_;
  uint32_t fnso_;
};

}  // namespace orthofs
