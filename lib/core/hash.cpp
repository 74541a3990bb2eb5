#include "core/hash.hpp"

#include <cstdio>

#include <zlib.h>
// Header-only xxHash (libxxhash-dev): inlined here, no library to link.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace hp {

std::uint64_t hash64(const void* data, std::size_t size, std::uint64_t h) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < size; ++i) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

std::string hex64(std::uint64_t value) {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(value));
    return buf;
}

std::uint32_t crc32(const void* data, std::size_t size, std::uint32_t crc) {
    return static_cast<std::uint32_t>(::crc32_z(crc, static_cast<const Bytef*>(data), size));
}

struct Xxh3::State {
    XXH3_state_t s;
};

Xxh3::Xxh3(Width width) : state_(std::make_unique<State>()), width_(width) {
    if (width_ == Width::bits64) XXH3_64bits_reset(&state_->s);
    else XXH3_128bits_reset(&state_->s);
}

Xxh3::~Xxh3() = default;

void Xxh3::update(const void* data, std::size_t size) {
    if (width_ == Width::bits64) XXH3_64bits_update(&state_->s, data, size);
    else XXH3_128bits_update(&state_->s, data, size);
}

std::uint64_t Xxh3::digest64() const { return XXH3_64bits_digest(&state_->s); }

std::array<std::uint64_t, 2> Xxh3::digest128() const {
    const XXH128_hash_t h = XXH3_128bits_digest(&state_->s);
    return {h.high64, h.low64};
}

std::uint64_t xxh3_64(const void* data, std::size_t size) { return XXH3_64bits(data, size); }

}  // namespace hp
