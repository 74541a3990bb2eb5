#pragma once
// lib/distance — signed distance fields over a layered voxelmap (paper 000 sections 2.1.1, 2.2).
//
// In: the mesh, the voxelmap's grid and layer values (lib/voxel). Out: per voxel the signed
// distance from its centre to the mesh, inside positive, world units, and optionally the unit
// gradient of that distance.
//
// Method and error bound:
//  - exact band: every voxel within 3 voxels of the surface (Chebyshev distance to a surface
//    voxel <= 3, i.e. |layer| <= 3 in a 26-neighbourhood map, |layer| <= 9 in a 6-neighbourhood
//    one) gets the exact closest point on the mesh from a BVH query: error = rounding only.
//  - further out: closest-point propagation, then one exact evaluation. Every voxel holds a
//    point on the mesh (float, voxel units) and the triangle it lies on; band voxels hold their
//    exact closest point. Raster passes (forward, backward, in turn, until nothing changes, at
//    most 4) give each voxel outside the band the nearest of the points held by its 13
//    neighbours that precede it in the pass (cheap: a point distance, vectorized over the 12
//    neighbours in earlier rows). At the end each such voxel gets the exact distance from its
//    centre to the triangle of its point (closest_point_on_triangle, double). The value is
//    therefore the exact distance to *some* triangle, an upper bound of the true distance; it
//    misses the true closest triangle only where no propagated point on that triangle comes
//    nearer than the points on others. There is no a-priori bound on that error; measured
//    against the exact distance (BVH) at every voxel of the grid beyond the band: at most 0.34
//    voxel on fandisk at 0.0165 (102 of 14.2 million voxels above 0.25), 0.34 on rocker-arm at
//    0.0033 (49 of 3.7 million above 0.25), 0.495 on the bunny at 0.0005 (2626 of 22 million
//    above 0.25; the worst 41 voxels deep): under the 0.5-voxel target, with almost no margin on
//    the bunny. More passes shrink it (8 passes: 0.14 on fandisk) at ~0.15 s CPU per pass there.
//    bench_distance's random samples see smaller maxima (0.07 / 0.03 / 0.22).
//    A pass runs pipelined over slices (a thread starts a row once the previous slice has done
//    the rows it reads), so its result is the sequential one for any number of threads.
//  - sign: from the voxelmap (layer > 0 inside, < 0 outside), so open meshes keep the voxelmap's
//    classification. Surface voxels (layer 0): from the angle-weighted pseudo-normal at the
//    closest feature (outside when dot(centre - closest, normal) > 0), with the normals flipped
//    for inward-wound meshes (negative signed volume).
//  - gradient: the unit vector from the voxel centre towards increasing V: (q - p)/|q - p| for
//    outside voxels, (p - q)/|p - q| inside, minus the pseudo-normal on the surface itself.
// Cost: BVH queries for the band; per other voxel 13 point distances per pass and one exact
// point-triangle test. Memory while working: 21 bytes per voxel (point, squared distance,
// triangle, band flag) besides the output.
#include <cstdint>
#include <vector>

#include "core/progress.hpp"
#include "mesh/mesh.hpp"
#include "voxel/grid.hpp"

namespace hp {

struct DistanceOptions {
    int connectivity = 26;  // of the voxelmap's layers (decides the exact band in layers)
    bool gradient = false;
};

struct DistanceField {
    GridSpec grid;
    std::vector<double> values;     // x fastest, inside positive
    std::vector<float> gradient;    // 3 per voxel when requested
    std::size_t exact_voxels = 0;   // computed by BVH queries
    int propagation_passes = 0;     // raster passes run (closest-point propagation)
    double seconds_exact = 0, seconds_propagate = 0;
};

// `layers`: the voxelmap's values over `grid` (x fastest).
DistanceField compute_distance(const TriMesh& mesh, const GridSpec& grid, const std::vector<std::int32_t>& layers,
                               const DistanceOptions& options, const Progress& progress = {});

}  // namespace hp
