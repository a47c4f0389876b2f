// The FUSE callbacks of fcntl and flock locks, held across every client of the namespace
// (client/lock_manager.h). Unlocks write back first and locks revalidate after
// (OpenFiles::RevalidateUnderLock): lock-to-unlock consistency across clients for programs
// that share a file under locks, as databases do. Userdata: the mount's OrthoFs.
#pragma once

#include <fcntl.h>
#include <fuse_lowlevel.h>

namespace orthofs {

void OpGetlk(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi, struct flock* lock);
void OpSetlk(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi, struct flock* lock, int sleep);
void OpFlock(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi, int op);

}  // namespace orthofs
