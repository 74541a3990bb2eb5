#pragma once
// lib/pointshell — uniformly sampled surface points with inward normals (paper 000 section 2.1.2).
//
// In: the mesh (world units) and the layered voxelmap it was voxelized into (grid + layer per
// voxel, lib/voxel), optionally the signed distance field over the same grid (lib/distance,
// inside positive). Out: points on the mesh, one unit inward normal and the source triangle each.
//
// Sampling (the paper's procedure, with its open choices fixed here):
//  - candidates of triangle t: the centres of the surface voxels (layer 0) among the voxels of
//    t's bounding box (every voxel whose closed cube meets the box: a flat, axis-aligned
//    triangle's box has no thickness and may contain no centre at all), each projected onto t
//    (exact closest point on the triangle);
//  - t's candidates are visited nearest first (squared distance from the voxel centre to t, ties
//    by voxel index), so the voxels t passes through come before far voxels whose centres land
//    on t's edges; a candidate is kept when it is at least alpha * s from every point kept so far
//    for t and for its neighbours (the triangles sharing a vertex with t, which includes those
//    sharing an edge);
//  - order and parallelism: triangles are coloured greedily in index order so that no two
//    neighbours share a colour; colours are processed one after the other (in parallel within a
//    colour, since the triangles of one colour never look at each other's points). "Already
//    kept" therefore means "kept by a neighbour of a lower colour", a rule that does not depend
//    on the schedule: the output is the same for every thread count. Points are stored by
//    triangle index, then in the order they were kept.
//
// Normals (inward, unit):
//  - gradient: the gradient of the distance field (central differences of the trilinear sampler
//    of lib/query/field.hpp, step s), or without a distance field of the layered map (layer * s,
//    step 1.5 s). Where that gradient is weak (|g| < 0.25, e.g. on a thin sheet where the field
//    peaks) or points out of the surface (g . n_in <= 0, e.g. across a wall thinner than the
//    step), the point takes its surface normal instead; those points are counted.
//  - surface: the angle-weighted pseudo-normal (lib/geometry/pseudo_normals.hpp) of the feature
//    the point lies on (face, edge or vertex), so points on edges and vertices get the
//    angle-weighted average of the faces around them.
//  Orientation comes from the field, not from the winding: per connected component of the mesh
//  (by shared vertices), the area-weighted sum of dot(winding normal, field gradient) at the
//  triangle centroids says whether the winding normals point in (field increases along them) or
//  out; inverted meshes get inward normals too. A component with a zero sum (no inside, e.g. a
//  single open sheet) keeps the winding convention (counter-clockwise seen from outside).
//
// Cost: O(surface voxels in the triangles' boxes x (points kept in the neighbourhood)) for the
// sampling, O(triangles) for the colouring and the orientation vote. Memory: the inputs plus a
// few words per triangle and per point.
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/progress.hpp"
#include "mesh/mesh.hpp"
#include "pointshell/points.hpp"
#include "voxel/grid.hpp"

namespace hp {

enum class ShellNormals { gradient, surface };
const char* shell_normals_name(ShellNormals n);  // "gradient", "surface"

struct PointshellOptions {
    double alpha = 1.4142135623730951;  // minimum spacing in voxel sizes (paper: about sqrt 2)
    ShellNormals normals = ShellNormals::gradient;
};

// The voxel data the sampling reads: `layers` over `grid` (x fastest, 0 = surface voxel) and,
// when the input is a distance file, `distance` over the same grid (inside positive, world units).
struct ShellField {
    GridSpec grid;
    std::vector<std::int32_t> layers;
    std::vector<double> distance;  // empty: gradient normals come from the layers
};

struct PointshellResult {
    Pointshell shell;
    std::size_t candidates = 0;          // projected voxel centres visited (with repeats across triangles)
    std::size_t colours = 0;             // colour classes of the triangle graph
    std::string normal_source;           // "distance gradient", "layer gradient" or "surface"
    std::size_t surface_fallbacks = 0;   // gradient mode: points that took the surface normal
    std::size_t dropped_no_normal = 0;   // candidates skipped because no normal is defined there
    std::size_t inverted_components = 0; // components whose winding normals point inward
    std::size_t components = 0;
    // Angle between each point's normal and the inward normal of its source triangle's plane.
    double deviation_median_deg = 0, deviation_p95_deg = 0, deviation_max_deg = 0;
};

// Samples the pointshell (`field` is taken by value: move it in to save a copy). Preconditions: layers.size() == grid.count(), distance empty or of the
// same size, alpha > 0. Throws hp::Error(bad_input) when the field has no surface voxel or its
// arrays do not match the grid, hp::Error(usage) when alpha <= 0.
PointshellResult sample_pointshell(const TriMesh& mesh, ShellField field, const PointshellOptions& options,
                                   const Progress& progress = {});

// Nearest-neighbour spacing of a point set (k-d tree, nanoflann): the distance from each point to
// the nearest other point; min and median over the points. Zero for fewer than two points.
struct SpacingStats {
    double min = 0, median = 0, max = 0;
};
SpacingStats nearest_neighbour_spacing(std::span<const Vec3d> points);

// Coverage: `samples` points drawn uniformly (by area) on the mesh with a fixed seed; for each the
// distance to the nearest shell point. Reports the largest and the 99th percentile.
struct CoverageStats {
    std::size_t samples = 0;
    double max = 0, p99 = 0;
};
CoverageStats sampled_coverage(const TriMesh& mesh, std::span<const Vec3d> points, std::size_t samples = 200000,
                               std::uint64_t seed = 1);

}  // namespace hp

namespace hp {

// The statistics block of a run, shared by haptic-pointshell and the pipeline's pointshell stage
// (printed in --json and recorded in the file's metadata): points, spacing {min, median, max,
// alpha_s}, coverage {samples, max, p99, gap}, normal_deviation_deg {median, p95, max}.
// gap: the sampled coverage exceeds 1.5 alpha*s. The greedy rule keeps every candidate within
// alpha*s of a point, so a gap means the field lacks surface voxels along part of the mesh.
nlohmann::json shell_statistics_json(const PointshellResult& r, const SpacingStats& spacing,
                                     const CoverageStats& coverage, double alpha_s);

}  // namespace hp

namespace hp::vdb {
struct FileInfo;
}

namespace hp {

// Reads the sampling input from a voxelmap file (grid "layers") or a distance file ("distance" in
// any encoding, scaled ones divided by their scale factor, plus its copy of "layers"), and its
// metadata into `info`. Throws hp::Error(bad_input) naming the file when it is neither.
ShellField read_shell_field(const std::filesystem::path& path, vdb::FileInfo& info);

}  // namespace hp
