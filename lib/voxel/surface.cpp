// Phase 1 of the voxelizer: surface voxels.
// In: the mesh and the working grid (every cell kUnknown). Out: cell = 0 for every voxel whose
// closed cube overlaps a triangle (13-axis SAT, geometry/sat.hpp); other cells untouched.
// Cost: one SAT test per voxel of each triangle's bounding box. Threads: TBB over triangles; the
// union of the marks does not depend on the schedule (relaxed atomic stores of 0).
#include <algorithm>
#include <atomic>
#include <cmath>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "geometry/sat.hpp"
#include "voxel/work.hpp"

namespace hp::voxel_detail {

void mark_surface(const TriMesh& mesh, Work& w, const Progress& progress) {
    const GridSpec& g = w.grid;
    const double s = g.voxel_size;
    const Vec3d half{s / 2, s / 2, s / 2};
    const std::size_t n = mesh.triangles.size();
    auto range = [&](double lo, double hi, int axis, int& a, int& b) {
        // Voxels whose closed extent [o + i s, o + (i+1) s] meets [lo, hi].
        a = std::max(0, static_cast<int>(std::ceil((lo - g.origin[axis]) / s)) - 1);
        b = std::min(g.dims[axis] - 1, static_cast<int>(std::floor((hi - g.origin[axis]) / s)));
    };
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 256), [&](const tbb::blocked_range<std::size_t>& r) {
        for (std::size_t t = r.begin(); t != r.end(); ++t) {
            const auto& tri = mesh.triangles[t];
            const Vec3d& a = mesh.vertices[tri[0]];
            const Vec3d& b = mesh.vertices[tri[1]];
            const Vec3d& c = mesh.vertices[tri[2]];
            Vec3d lo = cwise_min(a, cwise_min(b, c)), hi = cwise_max(a, cwise_max(b, c));
            int i0, i1, j0, j1, k0, k1;
            range(lo.x, hi.x, 0, i0, i1);
            range(lo.y, hi.y, 1, j0, j1);
            range(lo.z, hi.z, 2, k0, k1);
            for (int k = k0; k <= k1; ++k)
                for (int j = j0; j <= j1; ++j)
                    for (int i = i0; i <= i1; ++i) {
                        std::uint16_t& cell = w.at(static_cast<std::size_t>(i), static_cast<std::size_t>(j), static_cast<std::size_t>(k));
                        if (std::atomic_ref<std::uint16_t>(cell).load(std::memory_order_relaxed) == 0) continue;
                        if (triangle_box_overlap(g.center(i, j, k), half, a, b, c))
                            std::atomic_ref<std::uint16_t>(cell).store(0, std::memory_order_relaxed);
                    }
        }
    });
    progress.report("surface", 1.0);
}

}  // namespace hp::voxel_detail
