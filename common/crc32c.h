// CRC-32C (Castagnoli), in the form RocksDB, iSCSI and ext4 use: pre- and post-inverted, so a
// checksum extends over more bytes: Crc32cExtend(Crc32cExtend(0, a), b) == CRC of a then b.
#pragma once

#include <cstddef>
#include <cstdint>

namespace orthofs {

// With the SSE4.2 crc32 instruction when the CPU has it (8 bytes per instruction), the table
// otherwise.
uint32_t Crc32cExtend(uint32_t crc, const char* data, size_t n);
// Byte at a time through a table: the reference the hardware path is tested against.
uint32_t Crc32cExtendPortable(uint32_t crc, const char* data, size_t n);
bool Crc32cUsesHardware();

}  // namespace orthofs
