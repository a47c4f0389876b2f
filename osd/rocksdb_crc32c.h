// RocksDB's CRC32C computed with the CPU's crc32 instruction (why and how: rocksdb_crc32c.cc).
#pragma once

namespace orthofs {

// True when this binary's RocksDB checksums its records with common/crc32c.h (the OSD
// library's link flags say so), false when RocksDB uses its own code.
bool RocksDbCrc32cIsOurs();

}  // namespace orthofs
