#pragma once
// lib/pipeline/memory_model — what a voxelmap and the distance field after it will need in memory,
// estimated before any work, and the choice of dense or band that follows (docs/voxelize.md,
// "Dense or band").
//
// Dense: 40 bytes per voxel (the distance stage's working arrays, its double values, the int32
// layers and the writer's float copy), plus 16 with a gradient (its float array and the writer's
// tree: 15.3 measured on the bunny at 14 million voxels). Band: 16 bytes per estimated band voxel
// (voxel/band.hpp band_voxel_estimate; the distance stage's peak: int16 layers, the values, the
// writer's two trees; 11.3 measured on the bunny with the float encoding, 15 with double), plus 4
// with a gradient (2.7 measured on the bunny at 0.0002, band 8, both encodings: its bricks go to the
// writer's tree as the values' are freed), plus 16 per 8^3 block and 12 per x row.
//
// The voxelize stage chooses the mode and refuses (usage error, exit 2) a grid that would not fit,
// counting the gradient when a later distance stage of its pipeline computes one; the distance
// stage refuses its own field (with or without gradient) the same way, before reading the layers.
#include <array>
#include <optional>
#include <string>

#include "math/vec.hpp"
#include "mesh/mesh.hpp"

namespace hp::pipeline {

// The machine's physical memory in bytes (8 GB when it cannot be read).
double physical_memory();

// The mesh's surface area (world units squared).
double mesh_area(const TriMesh& mesh);

// Voxels along each axis of grid_around(box, s, pad) (as doubles: no overflow).
std::array<double, 3> dims_for(const Aabb& box, double s, int pad);

// Bytes of a dense field over `dims`, and of a band field of `band` voxels over them (mesh area
// `area`, voxel size s), with or without a gradient grid.
double dense_bytes(const std::array<double, 3>& dims, bool gradient);
double band_bytes(const std::array<double, 3>& dims, double area, double s, int band, bool gradient);

constexpr double kMaxDenseVoxels = 2147483648.0;  // 2^31: the dense arrays' index limit
constexpr int kAutoBand = 8;                      // the band chosen when a dense grid would not fit

struct FieldMode {
    int band = 0;        // 0 = dense
    std::string reason;  // one line for the summary
};

// What the voxelize stage (and its pipeline's distance stage) will make of a grid over `box` with
// voxel size s and `pad`: dense when `requested` is 0, or unset and the dense estimate is within
// half of `memory`; else the requested band (kAutoBand when unset). Throws a usage error naming the
// voxel size (and the band) that would fit when the chosen mode needs more than 90 % of `memory`
// (or, dense, more than 2^31 voxels), or the grid has more than kMaxGridDim voxels along an axis.
// `gradient`: a distance stage with a gradient follows (in a pipeline).
FieldMode choose_field_mode(const Aabb& box, double area, double s, int pad, std::optional<int> requested,
                            bool gradient, double memory);

// The distance stage's own check before any work: a field over a voxelmap of voxel size s over
// `box` with `pad` (band 0 = dense) with or without a gradient. Throws a usage error when it needs
// more than 90 % of `memory`, naming what would fit: a band (`band_option`), no gradient
// (`gradient_option`), or a voxelmap with a larger voxel size.
void check_distance_fits(const Aabb& box, double area, double s, int pad, int band, bool gradient, double memory,
                         const std::string& band_option, const std::string& gradient_option);

}  // namespace hp::pipeline
