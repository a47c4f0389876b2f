#include "client/fuse_killpriv.h"

#include <linux/fuse.h>

#include <cstring>

namespace orthofs {
namespace {

thread_local KernelRequestFlags current_request;

bool HeaderOf(const void* request, size_t size, fuse_in_header* header) {
  if (size < sizeof *header) return false;
  std::memcpy(header, request, sizeof *header);
  return true;
}

// The request's `Field` at `offset` past the header, if the request is that long.
template <typename Field>
bool ArgumentAt(const void* request, size_t size, size_t offset, Field* field) {
  const size_t at = sizeof(fuse_in_header) + offset;
  if (size < at + sizeof(Field)) return false;
  std::memcpy(field, static_cast<const char*>(request) + at, sizeof(Field));
  return true;
}

// Where each request that may modify a file for someone without CAP_FSETID carries the flag.
struct DropPrivilegesFlag {
  uint32_t opcode;
  size_t offset;  // of a 32-bit field in the arguments
  uint32_t bit;
};
constexpr DropPrivilegesFlag kDropPrivilegesFlags[] = {
    {FUSE_WRITE, offsetof(fuse_write_in, write_flags), FUSE_WRITE_KILL_SUIDGID},
    {FUSE_SETATTR, offsetof(fuse_setattr_in, valid), FATTR_KILL_SUIDGID},
    {FUSE_OPEN, offsetof(fuse_open_in, open_flags), FUSE_OPEN_KILL_SUIDGID},
    {FUSE_CREATE, offsetof(fuse_create_in, open_flags), FUSE_OPEN_KILL_SUIDGID},
};

}  // namespace

KernelRequestFlags FlagsOfRequest(const void* request, size_t size) {
  KernelRequestFlags flags;
  fuse_in_header header;
  if (!HeaderOf(request, size, &header)) return flags;
  for (const DropPrivilegesFlag& f : kDropPrivilegesFlags) {
    uint32_t bits = 0;
    if (header.opcode == f.opcode && ArgumentAt(request, size, f.offset, &bits)) {
      flags.drop_privileges = (bits & f.bit) != 0;
    }
  }
  return flags;
}

void KillPrivV2::RequestRead(const void* request, size_t size) {
  current_request = FlagsOfRequest(request, size);
  fuse_in_header header;
  if (!HeaderOf(request, size, &header) || header.opcode != FUSE_INIT) return;
  uint32_t offered = 0;
  if (!ArgumentAt(request, size, offsetof(fuse_init_in, flags), &offered)) return;
  offered_.store((offered & FUSE_HANDLE_KILLPRIV_V2) != 0, std::memory_order_release);
  init_unique_.store(header.unique, std::memory_order_release);
  init_read_.store(true, std::memory_order_release);
}

void KillPrivV2::ReplyWriting(iovec* iov, int count) {
  if (!init_read_.load(std::memory_order_acquire) || negotiated() || count < 2) return;
  if (iov[0].iov_len < sizeof(fuse_out_header)) return;
  fuse_out_header out;
  std::memcpy(&out, iov[0].iov_base, sizeof out);
  if (out.unique != init_unique_.load(std::memory_order_acquire) || out.error != 0) return;
  if (!offered_.load(std::memory_order_acquire)) return;
  constexpr size_t kFlagsAt = offsetof(fuse_init_out, flags);
  if (iov[1].iov_len < kFlagsAt + sizeof(uint32_t)) return;
  char* flags_at = static_cast<char*>(iov[1].iov_base) + kFlagsAt;
  uint32_t flags;
  std::memcpy(&flags, flags_at, sizeof flags);
  flags |= FUSE_HANDLE_KILLPRIV_V2;
  std::memcpy(flags_at, &flags, sizeof flags);
  negotiated_.store(true, std::memory_order_release);
}

KernelRequestFlags KillPrivV2::CurrentRequest() { return current_request; }

}  // namespace orthofs
