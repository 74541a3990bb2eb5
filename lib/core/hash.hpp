#pragma once
// Content hashes for provenance (source mesh hash, input/parameter hashes) and payload checksums.
//
// hash64: 64-bit FNV-1a over bytes, printed as 16 lowercase hex digits: the source_hash of meshes
// and the pipeline's content hashes (kept FNV so that existing files still match their inputs).
// Not cryptographic. crc32: CRC-32 (IEEE 802.3,
// reflected, poly 0xEDB88320; zlib's values), the payload checksum of the project's binary
// container, folded with carry-less multiplication where the CPU has it (about 3 to 4 times zlib's
// speed), zlib's code for the rest; `crc` continues a running value (crc32(b, crc32(a)) is the
// CRC of a then b).
// Xxh3: XXH3 of xxHash 0.8 (64- or 128-bit, seed 0), streaming, about 25 times faster than
// hash64 on large buffers: the checksum trailer and content UUID of VDB files. Not cryptographic.
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace hp {

std::uint64_t hash64(const void* data, std::size_t size, std::uint64_t seed = 0xcbf29ce484222325ULL);
inline std::uint64_t hash64(std::string_view s) { return hash64(s.data(), s.size()); }
std::string hex64(std::uint64_t value);

std::uint32_t crc32(const void* data, std::size_t size, std::uint32_t crc = 0);

class Xxh3 {
public:
    enum class Width { bits64, bits128 };
    explicit Xxh3(Width width = Width::bits64);
    ~Xxh3();
    Xxh3(const Xxh3&) = delete;
    Xxh3& operator=(const Xxh3&) = delete;

    void update(const void* data, std::size_t size);
    std::uint64_t digest64() const;                 // Width::bits64: XXH3_64bits of all bytes so far
    std::array<std::uint64_t, 2> digest128() const;  // Width::bits128: {high, low} of XXH3_128bits

private:
    struct State;
    std::unique_ptr<State> state_;
    Width width_;
};
std::uint64_t xxh3_64(const void* data, std::size_t size);

}  // namespace hp
