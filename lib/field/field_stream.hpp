#pragma once
// lib/field/field_stream — a dense field's sampler made while it is written out (a prepared
// sampler file, formats/sampler.hpp), never held whole.
//
// In: one signed distance per voxel (x fastest), as DistanceSampler's dense constructors take
// them. Out: the samples in bricks of 4^3, handed to a sink in their order one z layer of bricks
// (4 voxel planes) at a time, and the rest of the layout (the bound pyramid, the scalars): bit for
// bit DistanceSampler(grid, values).layout(). The pyramid's level 0 is read from the field itself
// while its planes are in cache (rows of cells in vector lanes), not from the bricks.
// Cost: one pass over the values (a second for double values, to find whether all are floats);
// memory: one layer of bricks and the pyramid (about a fifth of the samples' bytes).
// Threads: one (the layers are handed out in order).
#include <cstddef>
#include <functional>
#include <span>
#include <vector>

#include "field/field.hpp"

namespace hp {

struct StreamedSampler {
    GridSpec grid;
    bool float_samples = true;  // samples as float (else double), as DistanceSampler chooses
    std::size_t samples = 0;    // samples handed out (the bricks' slots, those beyond the grid 0)
    double lipschitz = 1, max_value = 0;
    std::vector<DistanceSampler::PyramidEntry> pyramid;
    // The layout without its samples (samples_f and samples_d empty), reading `pyramid`.
    DistanceSampler::Layout layout() const;
};

// `bricks(data, bytes)`: the next samples in the layout's order (float or double as
// float_samples says); each call's bytes are valid only during the call.
using BrickSink = std::function<void(const void* data, std::size_t bytes)>;

StreamedSampler stream_dense_sampler(const GridSpec& grid, std::span<const float> values, const BrickSink& bricks);
StreamedSampler stream_dense_sampler(const GridSpec& grid, std::span<const double> values, const BrickSink& bricks);

}  // namespace hp
