#include "mount/fuse_killpriv.h"

#include <linux/fuse.h>

#include <charconv>
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

}  // namespace

KernelRequestFlags FlagsOfRequest(const void* request, size_t size) {
  KernelRequestFlags flags;
  fuse_in_header header;
  if (!HeaderOf(request, size, &header)) return flags;
  uint32_t bits = 0;
  switch (header.opcode) {
    case FUSE_WRITE:  // any write by someone without CAP_FSETID
      if (ArgumentAt(request, size, offsetof(fuse_write_in, write_flags), &bits)) {
        flags.drop_privileges = (bits & FUSE_WRITE_KILL_SUIDGID) != 0;
      }
      break;
    case FUSE_OPEN:  // O_TRUNC by someone without CAP_FSETID
      if (ArgumentAt(request, size, offsetof(fuse_open_in, open_flags), &bits)) {
        flags.drop_privileges = (bits & FUSE_OPEN_KILL_SUIDGID) != 0;
      }
      break;
    default:  // libfuse passes a setattr's flag on itself; a CREATE makes a new file
      break;
  }
  return flags;
}

void KillPrivV2::RequestRead(const void* request, size_t size) {
  current_request = FlagsOfRequest(request, size);
  fuse_in_header header;
  if (!HeaderOf(request, size, &header) || header.opcode != FUSE_INIT) return;
  // A kernel of another major version gets libfuse's counter-proposal, not a negotiation.
  uint32_t major = 0;
  uint32_t offered = 0;
  if (!ArgumentAt(request, size, offsetof(fuse_init_in, major), &major) || major != 7) return;
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
  // Before the reply is written: were that to fail, the session would end anyway.
  negotiated_.store(true, std::memory_order_release);
}

KernelRequestFlags FlagsOfRequestBeingServed() { return current_request; }

bool HasEffectiveCapability(std::string_view proc_status, int capability) {
  constexpr std::string_view kField = "\nCapEff:";
  const size_t at = proc_status.find(kField);
  if (at == std::string_view::npos || capability < 0 || capability >= 64) return false;
  std::string_view value = proc_status.substr(at + kField.size());
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  uint64_t mask = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), mask, 16);
  if (error != std::errc() || end == value.data()) return false;
  return (mask >> capability) & 1;
}

bool IsInitialUserNamespace(std::string_view uid_map) {
  uint64_t fields[3];
  for (uint64_t& field : fields) {
    while (!uid_map.empty() && (uid_map.front() == ' ' || uid_map.front() == '\t')) {
      uid_map.remove_prefix(1);
    }
    const auto [end, error] =
        std::from_chars(uid_map.data(), uid_map.data() + uid_map.size(), field);
    if (error != std::errc() || end == uid_map.data()) return false;
    uid_map.remove_prefix(static_cast<size_t>(end - uid_map.data()));
  }
  while (!uid_map.empty() && (uid_map.front() == ' ' || uid_map.front() == '\t')) {
    uid_map.remove_prefix(1);
  }
  // One line only: a namespace with more than one range is not the initial one.
  const bool one_line = uid_map.empty() || uid_map == "\n";
  return one_line && fields[0] == 0 && fields[1] == 0 && fields[2] == 4294967295u;
}

}  // namespace orthofs
