#pragma once
// lib/field — the bound pyramid's steps that do not need a sampler (field.hpp, "Pyramid of
// per-block bounds"): shared by DistanceSampler's constructors and by the dense sampler built while
// it is written (field_stream.hpp).
#include <array>
#include <cstddef>
#include <vector>

#include "field/field.hpp"

namespace hp::detail {

// Level 0's blocks `bd`, each the empty bound (slope 0, largest sample -inf) that cells merge into.
std::vector<DistanceSampler::BlockBound> empty_level0(const std::array<int, 3>& bd);
// The field's slope bound from the largest slope of its cells (DistanceSampler::lipschitz()).
double slope_bound(double inside);
// The entries of the pyramid whose level 0 has `bd` blocks per axis (every level up to one block).
std::size_t pyramid_entries(std::array<int, 3> bd);
// Every level's entries from level 0's blocks, level after level, into `pyramid`
// (pyramid_entries(bd) of them).
void build_pyramid(std::vector<DistanceSampler::BlockBound> level, std::array<int, 3> bd, DistanceSampler::PyramidEntry* pyramid);

}  // namespace hp::detail
