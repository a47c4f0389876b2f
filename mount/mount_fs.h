// OrthoFs: the state of one mount, shared by the FUSE callbacks (mount/fuse_ops.cc) and
// main (mount/mount_main.cc): the client library's parts, the open-file session engine
// (client/open_files.h), and what only FUSE needs.
#pragma once

#include <fuse_lowlevel.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "client/cluster_client.h"
#include "client/file_io.h"
#include "client/lock_manager.h"
#include "client/namespace.h"
#include "client/open_files.h"
#include "common/kernel_dentries.h"
#include "mount/fuse_killpriv.h"
#include "mount/fuse_requests.h"
#include "mount/mount_metrics.h"

namespace orthofs {

// The mount's state: the client library's parts, the open-file session engine (OpenFiles), and
// what only FUSE needs (the session for kernel notifications, the directory names the kernel
// holds, KillPrivV2, request counts). Thread-safe, as FUSE calls it from many threads.
class OrthoFs : public KernelCache {
 public:
  OrthoFs(std::unique_ptr<ClusterClient> cluster, uint32_t fnso, const FileIoOptions& io_options,
          const LockManagerOptions& lock_options)
      : cluster_(std::move(cluster)),
        ns_(cluster_.get(), fnso),
        io_(cluster_.get(), fnso, io_options),
        locks_(cluster_.get(), fnso, lock_options,
               [this](uint64_t fno) { return !files_.OpenHere(fno); }),
        files_(&ns_, &io_, &locks_, this) {
    ns_.EnableDeferredDirectoryTimes();
  }

  Namespace& ns() { return ns_; }
  FileIo& io() { return io_; }
  LockManager& locks() { return locks_; }
  OpenFiles& files() { return files_; }
  double negative_timeout() const { return negative_timeout_; }
  bool local_locks() const { return local_locks_; }
  void set_local_locks(bool local) { local_locks_ = local; }
  void set_negative_timeout(double seconds) { negative_timeout_ = seconds; }
  // The FUSE session is ending (unmount, SIGTERM).
  bool Exiting() const { return session_ != nullptr && fuse_session_exited(session_) != 0; }
  KillPrivV2& killpriv() { return killpriv_; }
  void set_session(fuse_session* session) { session_ = session; }

  // KernelCache. Attributes only (offset -1): after an open found the file changed, its next
  // stat and a read past the size the kernel holds ask again; invalidating pages there could
  // wait on writes the open holds up, and it takes none of the inode's locks, which a write
  // being served holds.
  void ForgetAttributes(uint64_t fno) override { Invalidate(fno, -1); }
  // Pages too, synchronously, so that no later open keeps pages the kernel would have dropped
  // only when the opener ran again.
  void ForgetPages(uint64_t fno) override { Invalidate(fno, 0); }

  // orthofs-mount --metrics.
  std::string RenderMetrics(uint32_t fnso, uint64_t cache_bytes, int64_t tls_not_after) {
    return RenderMountMetrics(fnso, cache_bytes, tls_not_after, killpriv_.negotiated(), io_.stats(),
                              *cluster_, requests_, ns_.conflicts(), locks_.stats(),
                              files_.release_counts());
  }
  FuseRequestCounts& requests() { return requests_; }

  // This client's unpublished writes and deferred attribute changes included.
  void FillStat(const InodeRef& ref, struct stat* st) {
    const Inode inode = files_.InodeToTell(ref);
    std::memset(st, 0, sizeof *st);
    st->st_ino = ref.fno;
    st->st_mode = inode.mode;
    st->st_nlink = inode.nlink;
    st->st_uid = inode.uid;
    st->st_gid = inode.gid;
    st->st_size = static_cast<off_t>(inode.size);
    st->st_rdev = inode.rdev;
    st->st_blksize = ns_.object_size();
    st->st_blocks = static_cast<blkcnt_t>((st->st_size + 511) / 512);
    st->st_atim = {inode.atime.sec, inode.atime.nsec};
    st->st_mtim = {inode.mtime.sec, inode.mtime.nsec};
    st->st_ctim = {inode.ctime.sec, inode.ctime.nsec};
  }

  // An entry for `name` in `parent` (lookup, mkdir...): the kernel caches the name.
  void ReplyEntry(fuse_req_t req, uint64_t parent, std::string_view name, const InodeRef& ref) {
    ToldName(parent, name, ref.fno, ref.inode.mode);
    ReplyEntry(req, ref);
  }

  void ReplyEntry(fuse_req_t req, const InodeRef& ref) {
    fuse_entry_param e{};
    e.ino = ref.fno;
    e.attr_timeout = OpenFiles::kAttrTimeout;
    e.entry_timeout = OpenFiles::kAttrTimeout;
    FillStat(ref, &e.attr);
    fuse_reply_entry(req, &e);
  }

  // Which directory the kernel holds under a name (KernelDentries): kept for directories only,
  // whose rmdir or rename through a stale name would leave the kernel a live one marked dead.
  void ToldName(uint64_t parent, std::string_view name, uint64_t fno, uint32_t mode) {
    std::lock_guard lock(dentries_mu_);
    if (S_ISDIR(mode)) {
      kernel_dentries_.Told(parent, name, fno);
    } else {
      kernel_dentries_.Forget(parent, name);
    }
  }

  std::optional<uint64_t> HeldName(uint64_t parent, std::string_view name) {
    std::lock_guard lock(dentries_mu_);
    return kernel_dentries_.Held(parent, name);
  }

  // The kernel holds no directory under the name any more (removed, moved, or a file's now).
  void NameGone(uint64_t parent, std::string_view name) {
    std::lock_guard lock(dentries_mu_);
    kernel_dentries_.Forget(parent, name);
  }

 private:
  void Invalidate(uint64_t fno, off_t offset) {
    if (session_ == nullptr) return;
    const int rc = fuse_lowlevel_notify_inval_inode(session_, fno, offset, 0);
    if (rc != 0 && rc != -ENOENT) {
      spdlog::warn("file {}: cannot invalidate the kernel's {}: {}", fno,
                   offset < 0 ? "attributes" : "cache", std::strerror(-rc));
    }
  }

  std::unique_ptr<ClusterClient> cluster_;
  Namespace ns_;
  FileIo io_;
  LockManager locks_;
  OpenFiles files_;
  double negative_timeout_ = 0;      // --negative-timeout; set before the session starts
  bool local_locks_ = false;         // --local-locks; set before the session starts
  fuse_session* session_ = nullptr;  // for notifications to the kernel
  FuseRequestCounts requests_;       // --metrics
  KillPrivV2 killpriv_;              // who drops set-ID bits: the kernel or the mount
  std::mutex dentries_mu_;
  KernelDentries kernel_dentries_;  // the directories the kernel holds by name
};

// The mount's state behind a request.
inline OrthoFs* Fs(fuse_req_t req) { return static_cast<OrthoFs*>(fuse_req_userdata(req)); }

}  // namespace orthofs
