#pragma once
// The "scalars" record of a prepared sampler file as formats/sampler.md lays it out (112 bytes),
// for tests that assemble such files themselves.
#include <cstdint>

namespace hp_test {

struct SamplerScalars {
    std::int32_t dims[3];
    std::uint32_t flags;
    double origin[3], voxel_size, lipschitz, max_value, floor_sample;
    std::uint32_t first_tile_brick, reserved;
    std::uint64_t samples, pyramid, blocks, gaps;
};
static_assert(sizeof(SamplerScalars) == 112);

}  // namespace hp_test
