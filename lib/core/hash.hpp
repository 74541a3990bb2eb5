#pragma once
// Content hashes for provenance (source mesh hash, input/parameter hashes) and payload checksums.
//
// hash64: 64-bit FNV-1a over bytes, printed as 16 lowercase hex digits. Not cryptographic; it
// identifies content for provenance and detects accidental damage. crc32: CRC-32 (IEEE 802.3,
// reflected, poly 0xEDB88320; zlib's), the payload checksum of the project's binary container;
// `crc` continues a running value (crc32(b, crc32(a)) is the CRC of a then b).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace hp {

std::uint64_t hash64(const void* data, std::size_t size, std::uint64_t seed = 0xcbf29ce484222325ULL);
inline std::uint64_t hash64(std::string_view s) { return hash64(s.data(), s.size()); }
std::string hex64(std::uint64_t value);

std::uint32_t crc32(const void* data, std::size_t size, std::uint32_t crc = 0);

}  // namespace hp
