// The FUSE callbacks of orthofs-mount: the OrthoFS file system on the
// low-level libfuse3 API (structured after libfuse's passthrough_ll.c). Inode number = fno.
//
// Consistency across clients is close-to-open, as NFS: open re-reads the inode and drops
// cached bytes of files another client changed; writes go to the client's write-back cache
// (client/file_io.h); close (flush) writes them back to both copies and publishes the new size
// and mtime; fsync also makes them durable on the OSDs.
#include "mount/fuse_ops.h"

#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <linux/capability.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <stop_token>
#include <thread>

#include "client/cluster_space.h"
#include "client/file_io.h"
#include "client/lock_manager.h"
#include "client/namespace.h"
#include "client/open_files.h"
#include "common/await_all.h"
#include "common/cached_versions.h"
#include "common/kernel_dentries.h"
#include "common/kernel_sizes.h"
#include "common/shared_bytes.h"
#include "mount/fuse_killpriv.h"
#include "mount/fuse_lock_ops.h"
#include "mount/fuse_replies.h"
#include "mount/fuse_requests.h"
#include "mount/mount_args.h"
#include "mount/mount_fs.h"
#include "mount/mount_metrics.h"
#include "rpc/grpc_logging.h"
#include "rpc/map_file.h"
#include "rpc/metrics_server.h"
#include "rpc/process_tuning.h"
#include "rpc/tcp_congestion.h"
#include "rpc/tls.h"
namespace orthofs {
namespace {

constexpr double kAttrTimeout = OpenFiles::kAttrTimeout;

// ---- operations ----

void OpInit(void* userdata, fuse_conn_info* conn) {
  // --local-locks: the kernel keeps fcntl and flock locks itself, within this mount.
  if (static_cast<OrthoFs*>(userdata)->local_locks()) {
    conn->want &= ~(FUSE_CAP_POSIX_LOCKS | FUSE_CAP_FLOCK_LOCKS);
  }
  // Large requests: one FUSE write can carry several objects.
  conn->max_write = 1 << 20;
  // Sequential readers get whole windows of objects per request, read in parallel.
  conn->max_readahead = 1 << 20;
  if (conn->capable & FUSE_CAP_ASYNC_READ) conn->want |= FUSE_CAP_ASYNC_READ;
  // The kernel switches between readdir and readdirplus by itself (plus after a lookup burst).
  if (conn->capable & FUSE_CAP_READDIRPLUS) conn->want |= FUSE_CAP_READDIRPLUS;
  if (conn->capable & FUSE_CAP_READDIRPLUS_AUTO) conn->want |= FUSE_CAP_READDIRPLUS_AUTO;
  // No kernel writeback cache: with it Linux trusts its own cached size of a regular file
  // forever and ignores the size another client published, which breaks close-to-open.
  conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
  // No automatic invalidation (libfuse's default): with it Linux asks for the attributes
  // before every read that follows a write of the file (it forgets them at each write), so a
  // read-modify-write loop paid a getattr round trip per block (bonnie++'s rewrite, database
  // pages). Close-to-open does not need it: an open of a file another client changed drops the
  // kernel's pages and attributes (OpOpen), and a read reaching past the size the kernel knows
  // still asks for the attributes, which is how it learns a size another client published.
  conn->want &= ~FUSE_CAP_AUTO_INVAL_DATA;
  // One request at a time for a direct write larger than a request: the pieces of an
  // asynchronous O_APPEND write would otherwise reach the mount's threads at once, each placed
  // at the end as it finds it (OpWrite), in any order.
  conn->want &= ~FUSE_CAP_ASYNC_DIO;
  // No atomic O_TRUNC (libfuse's default): with it Linux sends the truncating open without
  // holding the inode's lock, so `: > log` ran beside another descriptor's writes, dropped
  // the bytes they had just put in the cache and then saw the size raised past them again
  // (zeros in the file). Without it the kernel truncates with a setattr, under the lock.
  conn->want &= ~FUSE_CAP_ATOMIC_O_TRUNC;
}

// Unmount (fusermount3 -u, SIGTERM): write back before the process goes, and hand back every
// lock this client holds (no open file is left to hold one).
void OpDestroy(void* userdata) {
  auto* fs = static_cast<OrthoFs*>(userdata);
  fs->files().FlushEverything();
  fs->locks().ReleaseAll();
}

void OpLookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  bool name_absent = false;
  Result<InodeRef> r = Fs(req)->ns().Lookup(parent, name, &name_absent);
  if (name_absent) Fs(req)->NameGone(parent, name);
  if (name_absent && Fs(req)->negative_timeout() > 0) {
    // --negative-timeout: the kernel remembers the name's absence (inode 0) and asks again
    // only after that long; this client's own create, link or rename of it replaces that.
    fuse_entry_param e{};
    e.entry_timeout = Fs(req)->negative_timeout();
    return (void)fuse_reply_entry(req, &e);
  }
  if (!r.ok()) return ReplyError(req, r.status(), "lookup");
  Fs(req)->ReplyEntry(req, parent, name, *r);
}

void OpGetattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) {
  OrthoFs* fs = Fs(req);
  struct stat st;
  double timeout = kAttrTimeout;
  if (std::optional<InodeRef> recent = fs->files().RecentAttributes(ino, &timeout)) {
    fs->FillStat(*recent, &st);
    return (void)fuse_reply_attr(req, &st, timeout);
  }
  // An INODE this client wrote less than kAttrTimeout ago (a directory it just made an entry in,
  // attributes it just set; the Namespace keeps them 1 s): what the kernel would have cached,
  // had it not dropped it. Not when an open since saw a newer version (another client's
  // change; a newer read drops it in the Namespace).
  if (auto written = fs->ns().RecentlyWritten(ino)) {
    const double age =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - written->second).count();
    const std::optional<InodeRef> seen = fs->files().SeenWhileOpen(ino);
    if (age < kAttrTimeout && (!seen || seen->version <= written->first.version)) {
      fs->FillStat(written->first, &st);
      return (void)fuse_reply_attr(req, &st, kAttrTimeout - age);
    }
  }
  const uint64_t changes = fs->ns().inode_changes();
  const auto read_at = std::chrono::steady_clock::now();
  Result<InodeRef> r = fs->ns().GetInode(ino);
  if (r.ok()) fs->files().AttributesRead(*r, changes, read_at);
  if (!r.ok() && ClusterClient::IsOsdFailure(r.status())) {
    // Both OSDs of the INODE are down: an open file keeps the attributes it was opened with
    // (plus this client's writes), so fstat and reads past the size the kernel holds (which
    // ask for attributes) go on.
    if (std::optional<InodeRef> seen = fs->files().SeenWhileOpen(ino)) {
      spdlog::debug("getattr {}: {}; answering as of open", ino, r.status().ToString());
      r = std::move(*seen);
    }
  }
  if (!r.ok()) return ReplyInodeError(req, ino, r.status(), "getattr");
  fs->FillStat(*r, &st);
  fuse_reply_attr(req, &st, kAttrTimeout);
}

Timespec ToTimespec(const struct timespec& t) {
  return Timespec{t.tv_sec, static_cast<uint32_t>(t.tv_nsec)};
}

void OpSetattr(fuse_req_t req, fuse_ino_t ino, struct stat* attr, int to_set, fuse_file_info* fi) {
  OrthoFs* fs = Fs(req);
  SetAttrRequest changes;
  if (to_set & FUSE_SET_ATTR_MODE) changes.mode = attr->st_mode;
  if (to_set & FUSE_SET_ATTR_UID) changes.uid = attr->st_uid;
  if (to_set & FUSE_SET_ATTR_GID) changes.gid = attr->st_gid;
  // A truncation by someone without CAP_FSETID, or any chown of a file (KillPrivV2).
  changes.drop_privileges = (to_set & FUSE_SET_ATTR_KILL_SUID) != 0;
  if (to_set & FUSE_SET_ATTR_SIZE) {
    // Written bytes reach the OSDs before the truncation (none lands after it), and the size
    // is published so the truncation sees the real old size.
    const uint64_t size = static_cast<uint64_t>(attr->st_size);
    Status st = fs->io().PrepareTruncate(ino);
    if (st.ok()) st = fs->files().Publish(ino);
    if (!st.ok()) return ReplyError(req, st, "setattr");
    changes.size = size;
  }
  if (to_set & FUSE_SET_ATTR_ATIME_NOW) {
    changes.atime = Now();
  } else if (to_set & FUSE_SET_ATTR_ATIME) {
    changes.atime = ToTimespec(attr->st_atim);
  }
  if (to_set & FUSE_SET_ATTR_MTIME_NOW) {
    changes.mtime = Now();
  } else if (to_set & FUSE_SET_ATTR_MTIME) {
    changes.mtime = ToTimespec(attr->st_mtim);
  }
  if (!changes.mode && !changes.uid && !changes.gid && !changes.size && !changes.atime &&
      !changes.mtime && !changes.drop_privileges) {
    return OpGetattr(req, ino, fi);  // nothing OrthoFS keeps (ctime alone): no INODE update
  }
  struct stat st;
  // Set through the descriptor of a file being written (tar -x, cp -p): with the writes' publish.
  if (std::optional<InodeRef> view = fs->files().DeferAttributes(ino, changes)) {
    fs->FillStat(*view, &st);
    return (void)fuse_reply_attr(req, &st, kAttrTimeout);
  }
  // Deferred changes go first, or they would undo this one at the publish.
  if (Status published = fs->files().PublishDeferred(ino); !published.ok()) {
    return ReplyError(req, published, "setattr");
  }
  if (changes.mtime && !changes.size) {
    // Writes not yet published would stamp their own mtime over this one at close: they are
    // published first.
    if (Status published = fs->files().Publish(ino); !published.ok()) {
      return ReplyError(req, published, "setattr");
    }
  }
  Result<InodeRef> r = fs->ns().SetAttr(ino, changes);
  if (!r.ok()) return ReplyInodeError(req, ino, r.status(), "setattr");
  fs->files().SawOwnChange(*r);
  if (changes.size) fs->files().Truncated(ino, *changes.size);
  fs->FillStat(*r, &st);
  fuse_reply_attr(req, &st, kAttrTimeout);
}

void OpReadlink(fuse_req_t req, fuse_ino_t ino) {
  Result<std::string> r = Fs(req)->ns().ReadLink(ino);
  if (!r.ok()) return ReplyInodeError(req, ino, r.status(), "readlink");
  fuse_reply_readlink(req, r->c_str());
}

void MakeNode(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, dev_t rdev) {
  Result<InodeRef> r = Fs(req)->ns().Create(parent, name, mode, rdev, CallerOf(req));
  if (!r.ok()) return ReplyError(req, r.status(), "mknod");
  Fs(req)->ReplyEntry(req, parent, name, *r);
}

void OpMknod(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, dev_t rdev) {
  if (!S_ISREG(mode) && !S_ISFIFO(mode) && !S_ISCHR(mode) && !S_ISBLK(mode) && !S_ISSOCK(mode)) {
    return (void)fuse_reply_err(req, EINVAL);
  }
  MakeNode(req, parent, name, mode, rdev);
}

void OpMkdir(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode) {
  MakeNode(req, parent, name, S_IFDIR | (mode & 07777), 0);
}

void OpSymlink(fuse_req_t req, const char* target, fuse_ino_t parent, const char* name) {
  Result<InodeRef> r = Fs(req)->ns().Symlink(parent, name, target, CallerOf(req));
  if (!r.ok()) return ReplyError(req, r.status(), "symlink");
  Fs(req)->ReplyEntry(req, parent, name, *r);
}

void OpLink(fuse_req_t req, fuse_ino_t ino, fuse_ino_t parent, const char* name) {
  Result<InodeRef> r = Fs(req)->ns().Link(ino, parent, name);
  if (!r.ok()) return ReplyError(req, r.status(), "link");
  Fs(req)->ReplyEntry(req, parent, name, *r);
}

void OpUnlink(fuse_req_t req, fuse_ino_t parent, const char* name) {
  OrthoFs* fs = Fs(req);
  Result<Unlinked> r = fs->ns().Unlink(parent, name, [fs](uint64_t fno) {
    return !fs->files().OpenHere(fno);  // freed at once (in the background), as LastLinkGone does
  });
  if (!r.ok()) return ReplyError(req, r.status(), "unlink");
  if (r->last_link) {
    if (Status st = fs->files().LastLinkGone(*r); !st.ok()) {
      spdlog::warn("unlink: freeing inode {}: {}", r->fno, st.ToString());
    }
  }
  fuse_reply_err(req, 0);
}

// fsync(2) of a directory: its entries are committed already; the times its unlinks changed
// may still be pending (Namespace::EnableDeferredDirectoryTimes).
void OpFsyncdir(fuse_req_t req, fuse_ino_t ino, int, fuse_file_info*) {
  Status st = Fs(req)->ns().FlushDirectoryTimes(ino);
  if (!st.ok()) return ReplyError(req, st, "fsyncdir");
  fuse_reply_err(req, 0);
}

void OpRmdir(fuse_req_t req, fuse_ino_t parent, const char* name) {
  OrthoFs* fs = Fs(req);
  // ESTALE when the name names another directory than the kernel holds under it (renamed
  // away and made anew by another client): the kernel looks it up again and retries.
  Status st = fs->ns().Rmdir(parent, name, fs->HeldName(parent, name));
  if (st.ok() || st.Is(StatusCode::kStale)) fs->NameGone(parent, name);
  fuse_reply_err(req, ErrnoFor(st));
}

void OpRename(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_ino_t newparent,
              const char* newname, unsigned int flags) {
  if (flags & ~RENAME_NOREPLACE) return (void)fuse_reply_err(req, EINVAL);  // no EXCHANGE
  OrthoFs* fs = Fs(req);
  Unlinked source_gone;
  // A directory the kernel holds under the old name must be the one renamed (see OpRmdir).
  const std::optional<uint64_t> held = fs->HeldName(parent, name);
  // So must a directory it holds under the new name be the one replaced, which it marks dead.
  // Linux looks a rename's target up afresh, but another client may move that directory away
  // between that lookup and this rename.
  const std::optional<uint64_t> held_target = fs->HeldName(newparent, newname);
  Result<Unlinked> r =
      fs->ns().Rename(parent, name, newparent, newname,
                      (flags & RENAME_NOREPLACE) ? RenameMode::kNoReplace : RenameMode::kReplace,
                      &source_gone, held, held_target);
  if (source_gone.last_link) (void)Fs(req)->files().LastLinkGone(source_gone);
  if (r.ok() || r.status().Is(StatusCode::kStale)) {
    fs->NameGone(parent, name);
    fs->NameGone(newparent, newname);
  }
  if (r.ok() && held) fs->ToldName(newparent, newname, *held, S_IFDIR);
  if (!r.ok()) return ReplyError(req, r.status(), "rename");
  if (r->last_link) (void)Fs(req)->files().LastLinkGone(*r);
  fuse_reply_err(req, 0);
}

// Marks a file descriptor whose bytes do not go through the kernel's page cache (fi->fh, as the
// mount decided at open; a write's flags alone could come from a later fcntl).
constexpr uint64_t kBypassesPageCache = 1;

void BypassPageCache(fuse_file_info* fi) {
  fi->direct_io = 1;
  fi->fh |= kBypassesPageCache;
}

// O_APPEND writes go where this client knows the end of the file is (OpWrite). Linux would
// put them at the size it cached, which can be older than the open: another client's appends
// published at its close, which this open read from the INODE, while the kernel learns a size
// only when it asks for attributes (its write path does not). So the kernel must not cache
// what it believes it wrote, at an offset that may be wrong: such descriptors bypass the page
// cache (each write is a request to the mount either way).
void BypassPageCacheForAppends(fuse_file_info* fi) {
  if (fi->flags & O_APPEND) BypassPageCache(fi);
}

void OpOpen(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  // Close-to-open: the size comes from the INODE object, not from what we cached; a publish of
  // this client's writes under way (a release's) is waited for first.
  Fs(req)->files().AwaitPublish(ino);
  const uint64_t changes = Fs(req)->ns().inode_changes();
  const auto read_at = std::chrono::steady_clock::now();
  Result<InodeRef> r = Fs(req)->ns().GetInode(ino);
  if (!r.ok()) return ReplyInodeError(req, ino, r.status(), "open");
  if (r->inode.IsDirectory()) return (void)fuse_reply_err(req, EISDIR);
  if (r->inode.nlink == 0 && !Fs(req)->files().UnlinkedHereWhileOpen(ino)) {
    // Unlinked or replaced by another client, which frees it now or at its own last close: the
    // kernel opened a name it cached before that (this mount may hold the file open too).
    // ESTALE makes it look the name up again (LOOKUP_REVAL) and open what the name is now, or
    // answer ENOENT.
    spdlog::debug("open {}: unlinked by another client; the kernel looks again", ino);
    return (void)fuse_reply_err(req, ESTALE);
  }
  const InodeRef opened = *r;  // O_TRUNC comes as a setattr (OpInit: no atomic O_TRUNC)
  // Close-to-open: the kernel's page cache of the file survives the open only if nobody
  // changed the file since this client last looked; then a re-read costs no request at all.
  // A file never opened here has no pages to drop, and dropping them after the reply would
  // race the reader filling them.
  const CachedVersions::Cached cached = Fs(req)->files().Opened(opened);
  // The getattr the kernel sends after an open that made it forget the attributes is answered
  // from this read, as the kernel would have from its own cache (OpGetattr).
  Fs(req)->files().AttributesRead(opened, changes, read_at);
  const bool unchanged = cached == CachedVersions::Cached::kValid;
  if (!unchanged) Fs(req)->ForgetAttributes(ino);
  fi->keep_cache = unchanged ? 1 : 0;
  // Shrunk since the kernel last heard its size: read without the page cache, whose
  // read-ahead could leave the kernel a size past the real end (common/kernel_sizes.h).
  if (Fs(req)->files().KernelMayHoldLargerSize(ino)) {
    spdlog::debug("open {}: shrunk by another client; bypassing the page cache", ino);
    BypassPageCache(fi);
  }
  BypassPageCacheForAppends(fi);
  OrthoFs* fs = Fs(req);
  fuse_reply_open(req, fi);  // req is gone after this
  if (cached == CachedVersions::Cached::kStale) fs->files().Revalidated(ino);
}

void OpCreate(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode,
              fuse_file_info* fi) {
  Result<InodeRef> r =
      Fs(req)->ns().Create(parent, name, S_IFREG | (mode & 07777), 0, CallerOf(req));
  if (r.status().Is(StatusCode::kAlreadyExists) && (fi->flags & O_EXCL) == 0) {
    // Without O_EXCL an existing file is opened, not refused. Linux sent a create because it
    // took the name for missing: a negative entry (--negative-timeout), or another client
    // created it since the lookup. ESTALE makes Linux walk the path again with a fresh lookup
    // (LOOKUP_REVAL) and open what it finds, checking permissions as for any open.
    spdlog::debug("create {} in {}: made meanwhile elsewhere; the kernel looks again", name,
                  parent);
    return (void)fuse_reply_err(req, ESTALE);
  }
  if (!r.ok()) return ReplyError(req, r.status(), "create");
  Fs(req)->NameGone(parent, name);  // a file's now, in the kernel too
  Fs(req)->files().Opened(*r, /*created=*/true);
  BypassPageCacheForAppends(fi);
  fuse_entry_param e{};
  e.ino = r->fno;
  e.attr_timeout = kAttrTimeout;
  e.entry_timeout = kAttrTimeout;
  Fs(req)->FillStat(*r, &e.attr);
  fuse_reply_create(req, &e, fi);
}

// A read's bytes handed to the kernel from where they are (the client cache's objects, zeros):
// its one copy of them is the only one. (Copying them into one reply buffer first cost the
// mount a zero fill and a copy of every byte read.)
void ReplyWithPieces(fuse_req_t req, const SharedBytes& bytes) {
  const std::vector<std::string_view>& pieces = bytes.pieces().pieces();
  // writev takes at most UIO_MAXIOV (1024) pieces, libfuse's header among them; a read of many
  // small objects' pieces is joined first.
  constexpr size_t kMaxPieces = 1000;
  if (pieces.empty() || pieces.size() > kMaxPieces) {
    const std::string joined = bytes.Join();
    return (void)fuse_reply_buf(req, joined.data(), joined.size());
  }
  std::vector<iovec> iov;
  iov.reserve(pieces.size());
  for (std::string_view piece : pieces) {
    iov.push_back(iovec{const_cast<char*>(piece.data()), piece.size()});
  }
  fuse_reply_iov(req, iov.data(), static_cast<int>(iov.size()));
}

void OpRead(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi) {
  const bool for_page_cache = (fi->flags & O_DIRECT) == 0 && (fi->fh & kBypassesPageCache) == 0;
  Result<SharedBytes> data =
      Fs(req)->files().Read(ino, static_cast<uint64_t>(off), size, for_page_cache);
  if (!data.ok()) return ReplyError(req, data.status(), "read");
  ReplyWithPieces(req, *data);
}

void OpWrite(fuse_req_t req, fuse_ino_t ino, const char* buf, size_t size, off_t off,
             fuse_file_info* fi) {
  OrthoFs* fs = Fs(req);
  uint64_t offset = static_cast<uint64_t>(off);
  // At the end as of the open plus this client's writes (BypassPageCacheForAppends). Linux
  // holds the inode's lock across an appending write, so this client's appends come one at a
  // time.
  if ((fi->flags & O_APPEND) && (fi->fh & kBypassesPageCache)) {
    offset = fs->files().OpenSize(ino).value_or(offset);
  }
  if (FlagsOfRequestBeingServed().drop_privileges) {
    if (Status st = fs->files().DropPrivilegesBeforeWrite(ino); !st.ok()) {
      return ReplyInodeError(req, ino, st, "write");  // gone: removed by another client
    }
  }
  Status st = fs->files().BeforeExtending(ino, offset + size);
  if (st.ok()) st = fs->io().Write(ino, offset, std::string_view(buf, size));
  if (!st.ok()) return ReplyError(req, st, "write");
  fs->files().Wrote(ino, offset + size);
  if ((fi->flags & O_SYNC) || (fi->flags & O_DSYNC)) {
    // Synchronous I/O: durable on both copies before the write returns.
    st = fs->files().FlushFile(ino);
    if (st.ok()) st = fs->ns().cluster()->SyncAll();
    if (!st.ok()) return ReplyError(req, st, "write");
  }
  fuse_reply_write(req, size);
}

void OpFlush(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  // close(2): what this client wrote becomes visible to every client that opens the file next.
  Status st = Fs(req)->files().FlushFile(ino);
  // close(2) drops the process's fcntl locks on the file (POSIX), whichever descriptor they
  // were taken through, after the write-back: the next holder reads what this one wrote. A
  // failed release is retried by the lock manager.
  (void)Fs(req)->locks().ReleaseOwner(ino, fi->lock_owner, LockKind::kPosix);
  if (!st.ok()) return ReplyError(req, st, "flush");
  fuse_reply_err(req, 0);
}

void OpRelease(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  // The open file's last descriptor went: its flock goes with it.
  Status st = Fs(req)->files().Closed(
      ino, fi->flock_release ? std::optional<uint64_t>(fi->lock_owner) : std::nullopt);
  if (!st.ok()) spdlog::warn("release {}: {}", ino, st.ToString());
  fuse_reply_err(req, 0);
}

void OpFsync(fuse_req_t req, fuse_ino_t ino, int, fuse_file_info*) {
  // Write back the file's dirty objects (both copies) and publish the size, then make every
  // OSD's WAL durable, so both copies survive a power loss.
  Status st = Fs(req)->files().FlushFile(ino);
  if (st.ok()) st = Fs(req)->ns().cluster()->SyncAll();
  if (!st.ok()) return ReplyError(req, st, "fsync");
  fuse_reply_err(req, 0);
}

// A directory handle holds a snapshot of its entries, so offsets stay stable while paging.
struct DirHandle {
  std::vector<DirEntry> entries;
  bool listed = false;  // a readdir went out: one from offset 0 again is a rewind
};

// The directory's entries as a handle lists them: "." and ".." first. ".." gets the root's
// number: readdir callers skip d_ino 0, and the kernel resolves ".." itself, so the value only
// needs to be a valid inode.
Result<std::vector<DirEntry>> Listing(OrthoFs* fs, fuse_ino_t dir) {
  Result<std::vector<DirEntry>> entries = fs->ns().ReadDir(dir);
  if (!entries.ok()) return entries.status();
  entries->insert(entries->begin(),
                  {DirEntry{".", dir, S_IFDIR}, DirEntry{"..", kRootFno, S_IFDIR}});
  return entries;
}

// rewinddir, or a seek to 0, after a listing: POSIX wants the entries as they are now, so the
// snapshot is read again. False when that failed (the error is answered).
bool RereadOnRewind(fuse_req_t req, fuse_ino_t dir, off_t off, DirHandle* handle) {
  if (off != 0 || !std::exchange(handle->listed, true)) return true;
  Result<std::vector<DirEntry>> entries = Listing(Fs(req), dir);
  if (!entries.ok()) {
    ReplyInodeError(req, dir, entries.status(), "readdir");
    return false;
  }
  handle->entries = std::move(*entries);
  return true;
}

void OpOpendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  Result<InodeRef> dir = Fs(req)->ns().GetInode(ino);
  if (!dir.ok()) return ReplyInodeError(req, ino, dir.status(), "opendir");
  if (!dir->inode.IsDirectory()) return (void)fuse_reply_err(req, ENOTDIR);
  Result<std::vector<DirEntry>> entries = Listing(Fs(req), ino);
  if (!entries.ok()) return ReplyError(req, entries.status(), "opendir");
  fi->fh = reinterpret_cast<uint64_t>(new DirHandle{std::move(*entries)});
  fuse_reply_open(req, fi);
}

void OpReaddir(fuse_req_t req, fuse_ino_t dir, size_t size, off_t off, fuse_file_info* fi) {
  auto* handle = reinterpret_cast<DirHandle*>(fi->fh);
  if (!RereadOnRewind(req, dir, off, handle)) return;
  std::string buf(size, '\0');
  size_t used = 0;
  for (size_t i = static_cast<size_t>(off); i < handle->entries.size(); ++i) {
    const DirEntry& e = handle->entries[i];
    struct stat st {};
    st.st_ino = e.fno;
    st.st_mode = e.type;
    size_t need = fuse_add_direntry(req, buf.data() + used, size - used, e.name.c_str(), &st,
                                    static_cast<off_t>(i + 1));
    if (need > size - used) break;
    used += need;
  }
  fuse_reply_buf(req, buf.data(), used);
}

// readdir with attributes (the kernel asks for it, e.g. for ls -l), saving a lookup per entry.
void OpReaddirplus(fuse_req_t req, fuse_ino_t dir, size_t size, off_t off, fuse_file_info* fi) {
  auto* handle = reinterpret_cast<DirHandle*>(fi->fh);
  if (!RereadOnRewind(req, dir, off, handle)) return;
  OrthoFs* fs = Fs(req);
  // The entries this reply has room for, then their attributes read together: a call per OSD
  // instead of a round trip per entry.
  const size_t begin = std::min(static_cast<size_t>(off), handle->entries.size());
  size_t end = begin;
  std::vector<uint64_t> fnos;
  for (size_t room = size; end < handle->entries.size(); ++end) {
    const DirEntry& e = handle->entries[end];
    const size_t need = fuse_add_direntry_plus(req, nullptr, 0, e.name.c_str(), nullptr, 0);
    if (need > room) break;
    room -= need;
    if (e.name != "." && e.name != "..") fnos.push_back(e.fno);
  }
  std::vector<Result<InodeRef>> inodes = fs->ns().GetInodes(fnos);
  std::string buf(size, '\0');
  size_t used = 0;
  for (size_t i = begin, next_inode = 0; i < end; ++i) {
    const DirEntry& e = handle->entries[i];
    fuse_entry_param entry{};
    entry.attr.st_ino = e.fno;
    entry.attr.st_mode = e.type;
    if (e.name != "." && e.name != "..") {
      // An entry removed since opendir goes out without attributes (ino 0: no lookup).
      const Result<InodeRef>& inode = inodes[next_inode++];
      if (inode.ok()) {
        fs->ToldName(dir, e.name, e.fno, inode->inode.mode);
        entry.ino = e.fno;
        entry.attr_timeout = kAttrTimeout;
        entry.entry_timeout = kAttrTimeout;
        fs->FillStat(*inode, &entry.attr);
      }
    }
    used += fuse_add_direntry_plus(req, buf.data() + used, size - used, e.name.c_str(), &entry,
                                   static_cast<off_t>(i + 1));
  }
  fuse_reply_buf(req, buf.data(), used);
}

void OpReleasedir(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
  delete reinterpret_cast<DirHandle*>(fi->fh);
  fuse_reply_err(req, 0);
}

// The OSDs' space as users see it: every byte is stored twice, so each counts half. A down OSD
// contributes nothing. The files unlinked here are freed first: `df` after `rm -rf` counts them.
void OpStatfs(fuse_req_t req, fuse_ino_t) {
  OrthoFs* fs = Fs(req);
  fs->files().AwaitReleases();
  const ClusterSpace space = SpaceOf(fs->ns().cluster());
  const uint64_t block = fs->ns().object_size();
  struct statvfs sv {};
  sv.f_bsize = block;
  sv.f_frsize = block;
  // Usable space (client/cluster_space.h): two copies, reserves, the fullest OSD by its share.
  sv.f_blocks = space.usable.capacity_bytes / block;
  sv.f_bfree = space.usable.available_bytes / block;
  sv.f_bavail = sv.f_bfree;
  sv.f_files = space.objects + sv.f_bfree;
  sv.f_ffree = sv.f_bfree;
  sv.f_favail = sv.f_bfree;
  sv.f_namemax = kMaxNameLength;
  fuse_reply_statfs(req, &sv);
}

// fallocate(2). Plain allocation cannot reserve space on the OSDs (nothing central to reserve
// it with, and unwritten objects are never stored): it refuses with ENOSPC what the OSDs cannot
// hold now and otherwise only raises the size, like ftruncate. PUNCH_HOLE and ZERO_RANGE zero
// the range on the OSDs (Namespace::ZeroData): objects inside it are deleted, so a punched
// hole frees its space. Moving bytes (COLLAPSE_RANGE, INSERT_RANGE) would rewrite every object
// behind the range: EOPNOTSUPP, as on most network file systems.
void OpFallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len, fuse_file_info*) {
  constexpr int kSupported = FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE;
  constexpr int kZeroing = FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE;
  // Linux checks these before asking (and answers EOPNOTSUPP for the modes itself); a
  // malformed request still gets no further.
  if ((mode & ~kSupported) != 0) return (void)fuse_reply_err(req, EOPNOTSUPP);
  if ((mode & kZeroing) == kZeroing || off < 0 || len <= 0) {
    return (void)fuse_reply_err(req, EINVAL);
  }
  if (len > std::numeric_limits<off_t>::max() - off) return (void)fuse_reply_err(req, EFBIG);
  OrthoFs* fs = Fs(req);
  // Linux clears set-ID bits at every fallocate, as at a write, but does not flag the request.
  if (fs->files().MayHavePrivilegesToDrop(ino) && !CallerHas(req, CAP_FSETID)) {
    if (Status st = fs->files().DropPrivilegesBeforeWrite(ino); !st.ok()) {
      return ReplyError(req, st, "fallocate");
    }
  }
  const uint64_t offset = static_cast<uint64_t>(off);
  const uint64_t end = offset + static_cast<uint64_t>(len);
  const bool keep_size = (mode & FALLOC_FL_KEEP_SIZE) != 0;
  if ((mode & kZeroing) != 0) {
    // This client's writes reach the OSDs first, so none lands after the zeroing (a refused
    // write-back fails the fallocate, as it fails a close); what it cached of the file goes
    // after (the generation bump also stops fetches under way).
    if (Status st = fs->files().FlushFile(ino, /*reports=*/false); !st.ok()) {
      return ReplyError(req, st, "fallocate");
    }
    Status st = fs->ns().ZeroData(ino, offset, end);
    fs->io().ForgetClean(ino);
    // A new mtime (and the size, unless kept) on the INODE, also after a failure part-way:
    // other clients' next open sees the change and drops what they cached (close-to-open).
    fs->files().Wrote(ino, st.ok() && !keep_size ? end : 0);
    if (Status published = fs->files().Publish(ino); st.ok()) st = published;
    if (!st.ok()) {
      fs->files().DistrustCachedBytes(ino);  // the kernel's pages of the range too
      return ReplyError(req, st, "fallocate");
    }
    return (void)fuse_reply_err(req, 0);
  }
  // Only bytes past the end are new: a range inside the file (preallocating a database's file
  // in place) asks the OSDs nothing, however full they are.
  const uint64_t size = fs->files().OpenSize(ino).value_or(0);
  if (end <= size) return (void)fuse_reply_err(req, 0);
  const ClusterSpace space = SpaceOf(fs->ns().cluster());
  if (space.answered == 0) {
    return ReplyError(req, Status::Unavailable("no OSD reports its free space"), "fallocate");
  }
  if (end - std::max(offset, size) > space.usable.available_bytes) {
    return (void)fuse_reply_err(req, ENOSPC);
  }
  if (keep_size) return (void)fuse_reply_err(req, 0);
  if (Status st = fs->files().BeforeExtending(ino, end); !st.ok()) {
    return ReplyError(req, st, "fallocate");
  }
  fs->files().Wrote(ino, end);
  if (Status st = fs->files().Publish(ino); !st.ok()) return ReplyError(req, st, "fallocate");
  fuse_reply_err(req, 0);
}

// lseek(2)'s SEEK_DATA and SEEK_HOLE (Linux handles the other whences itself): holes are the
// objects no OSD stores, so cp --sparse, tar -S and qemu-img skip them instead of reading zeros.
// This client's unwritten bytes go to the OSDs first, as at a flush, so the listing sees them.
void OpLseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence, fuse_file_info*) {
  if (whence != SEEK_DATA && whence != SEEK_HOLE) return (void)fuse_reply_err(req, EINVAL);
  if (off < 0) return (void)fuse_reply_err(req, ENXIO);
  OrthoFs* fs = Fs(req);
  if (Status st = fs->files().FlushFile(ino, /*reports=*/false); !st.ok()) {
    return ReplyError(req, st, "lseek");
  }
  std::optional<uint64_t> size = fs->files().OpenSize(ino);
  if (!size) {
    Result<InodeRef> inode = fs->ns().GetInode(ino);
    if (!inode.ok()) return ReplyError(req, inode.status(), "lseek");
    size = fs->files().SizeOf(*inode);
  }
  Result<std::optional<uint64_t>> found =
      fs->ns().Seek(ino, *size, static_cast<uint64_t>(off),
                    whence == SEEK_DATA ? SeekTarget::kData : SeekTarget::kHole);
  if (!found.ok()) return ReplyError(req, found.status(), "lseek");
  if (!*found) return (void)fuse_reply_err(req, ENXIO);
  fuse_reply_lseek(req, static_cast<off_t>(**found));
}

// File capabilities. libfuse mounts nosuid by default, so the kernel ignores them on exec. OrthoFS
// does not store them, and answers at once when Linux asks before a write (to strip them; it asks
// before every write(2) unless the mount drops privileges itself, KillPrivV2).
constexpr std::string_view kCapabilityXattr = "security.capability";

// POSIX ACLs (system.posix_acl_access, system.posix_acl_default): the mount does not enforce
// them (no FUSE_CAP_POSIX_ACL), so it does not store them either, as a file system mounted
// noacl answers: cp -a and tar --acls then keep the mode bits only, instead of leaving an
// ACL that getfacl would show and nothing checks.
bool IsPosixAcl(std::string_view name) { return name.starts_with("system.posix_acl_"); }

void OpSetxattr(fuse_req_t req, fuse_ino_t ino, const char* name, const char* value, size_t size,
                int flags) {
  if (name == kCapabilityXattr || IsPosixAcl(name)) {
    return (void)fuse_reply_err(req, EOPNOTSUPP);
  }
  Namespace::XattrMode mode = Namespace::XattrMode::kAny;
  if (flags & XATTR_CREATE) mode = Namespace::XattrMode::kCreate;
  if (flags & XATTR_REPLACE) mode = Namespace::XattrMode::kReplace;
  Status st = Fs(req)->ns().SetXattr(ino, name, std::string(value, size), mode);
  fuse_reply_err(req, InodeErrno(ino, st));
}

// getxattr/listxattr protocol: size 0 asks for the length; a short buffer is ERANGE.
void ReplyXattrBytes(fuse_req_t req, const std::string& bytes, size_t size) {
  if (size == 0) return (void)fuse_reply_xattr(req, bytes.size());
  if (bytes.size() > size) return (void)fuse_reply_err(req, ERANGE);
  fuse_reply_buf(req, bytes.data(), bytes.size());
}

void OpGetxattr(fuse_req_t req, fuse_ino_t ino, const char* name, size_t size) {
  if (name == kCapabilityXattr) return (void)fuse_reply_err(req, ENODATA);
  if (IsPosixAcl(name)) return (void)fuse_reply_err(req, EOPNOTSUPP);
  Result<std::string> value = Fs(req)->ns().GetXattr(ino, name);
  if (!value.ok()) return ReplyInodeError(req, ino, value.status(), "getxattr");
  ReplyXattrBytes(req, *value, size);
}

void OpListxattr(fuse_req_t req, fuse_ino_t ino, size_t size) {
  Result<std::vector<std::string>> names = Fs(req)->ns().ListXattrs(ino);
  if (!names.ok()) return ReplyInodeError(req, ino, names.status(), "listxattr");
  std::string list;
  for (const auto& n : *names) list += n + '\0';
  ReplyXattrBytes(req, list, size);
}

void OpRemovexattr(fuse_req_t req, fuse_ino_t ino, const char* name) {
  fuse_reply_err(req, InodeErrno(ino, Fs(req)->ns().RemoveXattr(ino, name)));
}

// Handler counted in --metrics' FUSE requests before it runs (the rest of the signature is
// deduced from the fuse_lowlevel_ops member it is assigned to).
template <FuseOp kOp, auto kHandler, typename... Args>
void Counted(fuse_req_t req, Args... args) {
  Fs(req)->requests().Count(kOp);
  kHandler(req, args...);
}

}  // namespace

namespace {

ssize_t ReadRequest(int fd, void* buf, size_t size, void* userdata) {
  const ssize_t n = ::read(fd, buf, size);
  if (n > 0) static_cast<OrthoFs*>(userdata)->killpriv().RequestRead(buf, static_cast<size_t>(n));
  return n;
}

ssize_t WriteReply(int fd, iovec* iov, int count, void* userdata) {
  KillPrivV2& killpriv = static_cast<OrthoFs*>(userdata)->killpriv();
  if (!killpriv.negotiated()) {
    killpriv.ReplyWriting(iov, count);
    if (killpriv.negotiated()) {
      spdlog::debug("the kernel leaves dropping set-ID bits to the mount (HANDLE_KILLPRIV_V2)");
    }
  }
  return ::writev(fd, iov, count);
}

}  // namespace

const fuse_custom_io* RawTrafficIo() {
  static const fuse_custom_io kRawTraffic{WriteReply, ReadRequest, nullptr, nullptr};
  return &kRawTraffic;
}

// No copy_file_range: with FUSE_HANDLE_KILLPRIV_V2 Linux would leave dropping set-ID bits to
// that handler without flagging the request (KillPrivV2). Without it Linux falls back to plain
// writes, which are flagged.
fuse_lowlevel_ops MakeOps() {
  fuse_lowlevel_ops ops{};
  ops.init = OpInit;
  ops.destroy = OpDestroy;
  ops.lookup = Counted<FuseOp::kLookup, OpLookup>;
  ops.getattr = Counted<FuseOp::kGetattr, OpGetattr>;
  ops.setattr = Counted<FuseOp::kSetattr, OpSetattr>;
  ops.readlink = Counted<FuseOp::kReadlink, OpReadlink>;
  ops.mknod = Counted<FuseOp::kMknod, OpMknod>;
  ops.mkdir = Counted<FuseOp::kMkdir, OpMkdir>;
  ops.symlink = Counted<FuseOp::kSymlink, OpSymlink>;
  ops.link = Counted<FuseOp::kLink, OpLink>;
  ops.unlink = Counted<FuseOp::kUnlink, OpUnlink>;
  ops.rmdir = Counted<FuseOp::kRmdir, OpRmdir>;
  ops.rename = Counted<FuseOp::kRename, OpRename>;
  ops.open = Counted<FuseOp::kOpen, OpOpen>;
  ops.create = Counted<FuseOp::kCreate, OpCreate>;
  ops.read = Counted<FuseOp::kRead, OpRead>;
  ops.write = Counted<FuseOp::kWrite, OpWrite>;
  ops.flush = Counted<FuseOp::kFlush, OpFlush>;
  ops.release = Counted<FuseOp::kRelease, OpRelease>;
  ops.fsync = Counted<FuseOp::kFsync, OpFsync>;
  ops.fsyncdir = Counted<FuseOp::kFsyncdir, OpFsyncdir>;
  ops.fallocate = Counted<FuseOp::kFallocate, OpFallocate>;
  ops.lseek = Counted<FuseOp::kLseek, OpLseek>;
  ops.opendir = Counted<FuseOp::kOpendir, OpOpendir>;
  ops.readdir = Counted<FuseOp::kReaddir, OpReaddir>;
  ops.readdirplus = Counted<FuseOp::kReaddirplus, OpReaddirplus>;
  ops.releasedir = Counted<FuseOp::kReleasedir, OpReleasedir>;
  ops.statfs = Counted<FuseOp::kStatfs, OpStatfs>;
  ops.setxattr = Counted<FuseOp::kSetxattr, OpSetxattr>;
  ops.getxattr = Counted<FuseOp::kGetxattr, OpGetxattr>;
  ops.listxattr = Counted<FuseOp::kListxattr, OpListxattr>;
  ops.removexattr = Counted<FuseOp::kRemovexattr, OpRemovexattr>;
  ops.getlk = Counted<FuseOp::kGetlk, OpGetlk>;
  ops.setlk = Counted<FuseOp::kSetlk, OpSetlk>;
  ops.flock = Counted<FuseOp::kFlock, OpFlock>;
  return ops;
}

}  // namespace orthofs
