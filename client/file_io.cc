#include "client/file_io.h"

#include <algorithm>

namespace orthofs {

std::vector<ObjectSpan> SplitIntoObjects(uint64_t offset, uint64_t length, uint64_t object_size) {
  std::vector<ObjectSpan> spans;
  uint64_t done = 0;
  while (done < length) {
    const uint64_t pos = offset + done;
    const uint64_t in_object = pos % object_size;
    const uint64_t n = std::min(length - done, object_size - in_object);
    spans.push_back(ObjectSpan{pos / object_size, in_object, n, done});
    done += n;
  }
  return spans;
}

Result<std::string> FileIo::Read(uint64_t fno, uint64_t offset, uint64_t length,
                                 uint64_t file_size) {
  if (offset >= file_size) return std::string();
  length = std::min(length, file_size - offset);
  std::string out(length, '\0');  // holes and short objects read as zeros
  const uint64_t object_size = cluster_->map().object_size;
  for (const ObjectSpan& span : SplitIntoObjects(offset, length, object_size)) {
    const Oid original{fnso_, fno, span.index, ObjectType::kData, CopyFlag::kOriginal};
    Result<wire::ReadResponse> read = cluster_->Read(original, span.offset, span.length);
    if (!read.ok() && !read.status().Is(StatusCode::kNotFound)) {
      // The other copy serves when the original's OSD fails.
      read = cluster_->Read(original.WithFlag(CopyFlag::kReplica), span.offset, span.length);
    }
    if (read.status().Is(StatusCode::kNotFound)) continue;  // a hole
    if (!read.ok()) return read.status();
    out.replace(span.buffer_offset, read->data().size(), read->data());
  }
  return out;
}

Status FileIo::Write(uint64_t fno, uint64_t offset, std::string_view data, bool sync) {
  const uint64_t object_size = cluster_->map().object_size;
  for (const ObjectSpan& span : SplitIntoObjects(offset, data.size(), object_size)) {
    const Oid original{fnso_, fno, span.index, ObjectType::kData, CopyFlag::kOriginal};
    ObjectWrite how;
    how.offset = span.offset;
    how.sync = sync;
    Result<wire::ObjectMeta> written =
        cluster_->WriteBothCopies(original, data.substr(span.buffer_offset, span.length), how);
    if (!written.ok()) return written.status();
  }
  return Status::Ok();
}

}  // namespace orthofs
