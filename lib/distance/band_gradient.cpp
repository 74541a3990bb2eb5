// Narrow-band gradients (distance/distance.hpp, compute_gradient_band): for every band voxel the
// unit gradient compute_distance gives there, by the same formula (NearestSign) from the same
// closest point: the nearest triangles come brick by brick (distance/brick_nearest.hpp) with ties
// resolved as the BVH query resolves them, which is how the dense field's exact band finds them.
// Threads: TBB over blocks; every block's values depend only on the block.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <string>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "distance/brick_nearest.hpp"
#include "distance/distance.hpp"
#include "geometry/bvh.hpp"

namespace hp {

template <class L>
BandGradientField compute_gradient_band(const TriMesh& mesh, const BrickField<L>& layers, int band, const Progress& progress) {
    if (mesh.triangles.empty()) fail_input("", "the mesh has no triangles");
    if (band < 1) fail_usage("the band must be at least 1 voxel");
    const GridSpec& grid = layers.grid;
    const double vs = grid.voxel_size;
    BandGradientField out;
    BrickField<Vec3f>& f = out.values;
    const Vec3f zero{0.0f, 0.0f, 0.0f};
    f.reset(grid, zero);
    f.index = layers.index;
    f.bricks.assign(layers.bricks.size(), zero);
    require_band_bricks(layers, band);
    const TriangleBvh bvh(mesh);
    const NearestSign signs(mesh);
    const NearestIndex index(bvh, grid, true);  // ties as the BVH query's, so as the dense field's
    const auto t0 = Clock::now();
    std::atomic<std::size_t> exact{0};
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, f.block_count(), 16), [&](const tbb::blocked_range<std::size_t>& r) {
        std::size_t n = 0;
        BrickNearest nearest(index);
        for (std::size_t b = r.begin(); b != r.end(); ++b) {
            const L* lay = layers.brick(b);
            if (!lay) continue;
            Vec3f* out_g = f.brick(b);
            const auto bc = f.block_coords(b);
            const int x0 = bc[0] * kBrickDim, y0 = bc[1] * kBrickDim, z0 = bc[2] * kBrickDim;
            nearest.begin(x0, y0, z0);
            for (int dz = 0; dz < kBrickDim; ++dz)
                for (int dy = 0; dy < kBrickDim; ++dy)
                    for (int dx = 0; dx < kBrickDim; ++dx)  // beyond the band: zero
                        if (std::abs(static_cast<int>(lay[dx | (dy << 3) | (dz << 6)])) < band && grid.contains(x0 + dx, y0 + dy, z0 + dz))
                            nearest.add(dx, dy, dz);
            for (const BrickNearest::Hit& hit : nearest.run()) {
                const std::uint16_t o = hit.offset;
                const Vec3d c = grid.center(x0 + (o & 7), y0 + ((o >> 3) & 7), z0 + (o >> 6));
                const std::uint32_t tri = bvh.triangle_at(hit.slot);
                const double sign = signs(lay[o], tri, hit.closest, c);
                const Vec3d g = signs.gradient(sign, hit.distance, vs, tri, hit.closest, c);
                out_g[o] = {static_cast<float>(g.x), static_cast<float>(g.y), static_cast<float>(g.z)};
                ++n;
            }
        }
        exact.fetch_add(n, std::memory_order_relaxed);
    });
    out.exact_voxels = exact.load();
    out.seconds = seconds_since(t0);
    progress.report("gradient", 1.0);
    return out;
}

template BandGradientField compute_gradient_band<std::int16_t>(const TriMesh&, const BrickField<std::int16_t>&, int,
                                                                const Progress&);
template BandGradientField compute_gradient_band<std::int32_t>(const TriMesh&, const BrickField<std::int32_t>&, int,
                                                                const Progress&);

}  // namespace hp
