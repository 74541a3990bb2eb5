#pragma once
// lib/pointshell — uniformly sampled surface points with inward normals (Sagardia et al. 2014,
// section 2.1.2).
//
// In: the mesh (world units) and the layered voxelmap it was voxelized into, optionally the signed
// distance field over the same grid (inside positive). Out: points on the mesh, any two at least
// alpha voxel sizes apart, one unit inward normal and the source triangle each, stored by
// triangle index. Normals: the field's gradient (falling back to the
// surface normal where it is weak or points out) or the angle-weighted surface pseudo-normal;
// oriented by the field's inside, so inverted meshes get inward normals too.
// Cost: O(surface voxels in the triangles' boxes x points kept nearby). Threads: TBB makes the
// candidates; they are kept or rejected on one thread in a fixed order (colour class of the
// triangle graph, then triangle index): the same output for every thread count.
// The procedure and its choices: docs/pointshell.md.
#include <array>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/progress.hpp"
#include "mesh/mesh.hpp"
#include "pointshell/points.hpp"
#include "voxel/grid.hpp"

namespace hp {

enum class ShellNormals { gradient, surface };
// The normals as haptic-pointshell --normals and the pipeline spell them, in the enum's order.
inline constexpr std::array<std::string_view, 2> kShellNormalsNames{"gradient", "surface"};
const char* shell_normals_name(ShellNormals n);
// Parses one of kShellNormalsNames; throws hp::Error(usage) otherwise.
ShellNormals parse_shell_normals(const std::string& name);

struct PointshellOptions {
    double alpha = 1.4142135623730951;  // minimum spacing in voxel sizes (Sagardia et al. 2014: about sqrt 2)
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
