// Phase 1 of the voxelizer: surface voxels.
// In: the mesh and the working grid (every cell kUnknown). Out: cell = 0 for every voxel whose
// closed cube overlaps a triangle (13-axis SAT, geometry/sat.hpp); other cells untouched.
// Cost: one SAT test per voxel of each triangle's bounding box near its plane (surface.hpp).
// Threads: TBB over triangles; the union of the marks does not depend on the schedule (relaxed
// atomic stores of 0).
#include <algorithm>
#include <atomic>
#include <cmath>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "voxel/surface.hpp"
#include "voxel/work.hpp"

namespace hp::voxel_detail {

void mark_surface(const TriMesh& mesh, Work& w, const Progress& progress) {
    const std::size_t n = mesh.triangles.size();
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 256), [&](const tbb::blocked_range<std::size_t>& r) {
        for (std::size_t t = r.begin(); t != r.end(); ++t) {
            const auto& tri = mesh.triangles[t];
            const auto cell = [&](int i, int j, int k) -> std::uint16_t& {
                return w.at(static_cast<std::size_t>(i), static_cast<std::size_t>(j), static_cast<std::size_t>(k));
            };
            for_each_surface_voxel(
                w.grid, mesh.vertices[tri[0]], mesh.vertices[tri[1]], mesh.vertices[tri[2]],
                [&](int i, int j, int k) { return std::atomic_ref<std::uint16_t>(cell(i, j, k)).load(std::memory_order_relaxed) == 0; },
                [&](int i, int j, int k) { std::atomic_ref<std::uint16_t>(cell(i, j, k)).store(0, std::memory_order_relaxed); });
        }
    });
    progress.report("surface", 1.0);
}

}  // namespace hp::voxel_detail
