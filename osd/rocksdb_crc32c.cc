// Debian builds RocksDB portable (without -msse4.2), and RocksDB 7 picks its CRC32C at compile
// time: a table-driven loop. It checksums every byte of every write-ahead log record, i.e.
// every object written, and was 9 % of all CPU time during a 1 MiB write benchmark (perf:
// rocksdb::crc32c::ExtendImpl<Slow_CRC32>). The OSD library links with
// -Wl,--wrap=<rocksdb::crc32c::Extend>, so RocksDB's calls from its other object files land
// here, on common/crc32c.h's SSE4.2 path: same function, same values (rocksdb_crc32c_test
// compares with RocksDB's own on random data), 1.4 % of the CPU time of the same benchmark.
#include "osd/rocksdb_crc32c.h"

#include <cstddef>
#include <cstdint>

#include "common/crc32c.h"

// RocksDB's internal (util/crc32c.h) function, declared as RocksDB defines it.
namespace rocksdb::crc32c {
uint32_t Extend(uint32_t init_crc, const char* data, size_t n);
}  // namespace rocksdb::crc32c

namespace {
thread_local bool ours_called = false;  // RocksDbCrc32cIsOurs's probe
}  // namespace

extern "C" uint32_t __wrap__ZN7rocksdb6crc32c6ExtendEjPKcm(uint32_t init_crc, const char* data,
                                                           size_t n) {
  ours_called = true;
  return orthofs::Crc32cExtend(init_crc, data, n);
}

namespace orthofs {

bool RocksDbCrc32cIsOurs() {
  // With the wrap in effect, this call of RocksDB's function is bound to ours too. (Comparing
  // the two addresses would not do: the compiler folds that to false.)
  ours_called = false;
  const char byte = 0;
  rocksdb::crc32c::Extend(0, &byte, 1);
  return ours_called;
}

}  // namespace orthofs
