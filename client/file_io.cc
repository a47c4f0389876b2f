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
  // Every object of the range is read at once, from the OSDs that hold them.
  PendingCalls pending;
  for (const ObjectSpan& span : SplitIntoObjects(offset, length, object_size)) {
    const Oid original{fnso_, fno, span.index, ObjectType::kData, CopyFlag::kOriginal};
    pending.Add();
    auto fill = [&out, &pending, span](Result<wire::ReadResponse> r) {
      if (r.ok()) {
        out.replace(span.buffer_offset, std::min<uint64_t>(r->data().size(), span.length),
                    r->data());
        pending.Done(Status::Ok());
      } else {
        pending.Done(r.status().Is(StatusCode::kNotFound) ? Status::Ok() : r.status());  // hole
      }
    };
    cluster_->ReadAsync(original, span.offset, span.length,
                        [this, original, span, fill](Result<wire::ReadResponse> r) {
                          if (r.ok() || r.status().Is(StatusCode::kNotFound)) return fill(r);
                          // The other copy serves when the original's OSD fails.
                          cluster_->ReadAsync(original.WithFlag(CopyFlag::kReplica), span.offset,
                                              span.length, fill);
                        });
  }
  ORTHOFS_RETURN_IF_ERROR(pending.Wait());
  return out;
}

Status FileIo::Write(uint64_t fno, uint64_t offset, std::string_view data, bool sync) {
  const uint64_t object_size = cluster_->map().object_size;
  // Both copies of every object of the range are written at once.
  PendingCalls pending;
  for (const ObjectSpan& span : SplitIntoObjects(offset, data.size(), object_size)) {
    const Oid original{fnso_, fno, span.index, ObjectType::kData, CopyFlag::kOriginal};
    ObjectWrite how;
    how.offset = span.offset;
    how.sync = sync;
    cluster_->WriteBothCopiesAsync(original, data.substr(span.buffer_offset, span.length), how,
                                   &pending);
  }
  return pending.Wait();
}

}  // namespace orthofs
