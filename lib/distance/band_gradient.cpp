// Narrow-band gradients (distance/distance.hpp, compute_gradient_band): for every band voxel the
// unit gradient compute_distance gives there, by the same formula from the same closest point.
// The closest point is the BVH's (TriangleBvh::closest): the first triangle at the minimum
// distance in its fixed traversal order, whatever upper bound seeds the search, so the triangle
// (and on ties the point) that the dense code finds for the voxel. The bound here is the dense
// code's (sqrt(3) (|layer| + 1) voxel sizes, or the previous voxel's triangle when nearer); it only
// prunes. Threads: TBB over blocks; every block's values depend only on the block.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <string>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "distance/distance.hpp"
#include "geometry/bvh.hpp"
#include "geometry/pseudo_normals.hpp"

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
    for (std::size_t b = 0; b < f.block_count(); ++b)
        if (layers.index[b] == BrickField<L>::kTile && std::abs(static_cast<int>(layers.tile[b])) < band)
            fail_input("", "the voxelmap has a constant block of layer " + std::to_string(layers.tile[b]) + " inside the band of " +
                               std::to_string(band) + " voxels; make it with haptic-voxelize --band " + std::to_string(band));
    const TriangleBvh bvh(mesh);
    const PseudoNormals normals(mesh);
    double volume = 0;
    for (const auto& t : mesh.triangles)
        volume += dot(mesh.vertices[t[0]], cross(mesh.vertices[t[1]], mesh.vertices[t[2]]));
    const double orient = volume < 0 ? -1.0 : 1.0;  // inward-wound meshes: flip the pseudo-normals
    const auto t0 = Clock::now();
    std::atomic<std::size_t> exact{0};
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, f.block_count(), 16), [&](const tbb::blocked_range<std::size_t>& r) {
        std::size_t n = 0;
        for (std::size_t b = r.begin(); b != r.end(); ++b) {
            const L* lay = layers.brick(b);
            if (!lay) continue;
            Vec3f* out_g = f.brick(b);
            const auto bc = f.block_coords(b);
            const int x0 = bc[0] * kBrickDim, y0 = bc[1] * kBrickDim, z0 = bc[2] * kBrickDim;
            std::uint32_t seed = UINT32_MAX;  // the previous voxel's triangle bounds the search
            for (int o = 0; o < kBrickVoxels; ++o) {
                const int i = x0 + (o & 7), j = y0 + ((o >> 3) & 7), k = z0 + (o >> 6);
                const int layer = lay[o];
                if (std::abs(layer) >= band || !grid.contains(i, j, k)) continue;  // beyond the band: zero
                const Vec3d c = grid.center(i, j, k);
                const double reach = std::sqrt(3.0) * (std::abs(layer) + 1) * vs;
                double bound = reach * reach * (1 + 1e-9);
                if (seed != UINT32_MAX) {
                    const auto& t = mesh.triangles[seed];
                    bound = std::min(bound, closest_point_on_triangle(c, mesh.vertices[t[0]], mesh.vertices[t[1]],
                                                                      mesh.vertices[t[2]]).distance2);
                }
                MeshHit hit = bvh.closest(c, bound);
                if (hit.triangle == UINT32_MAX) hit = bvh.closest(c);
                seed = hit.triangle;
                // As compute_distance: the sign from the layer, on the surface from the pseudo-normal.
                double sign = layer > 0 ? 1.0 : -1.0;
                if (layer == 0) {
                    const Vec3d nrm = normals.at(hit.triangle, hit.closest) * orient;
                    sign = dot(c - hit.closest.point, nrm) > 0 ? -1.0 : 1.0;
                }
                const double d = std::sqrt(hit.closest.distance2);
                const auto& t = mesh.triangles[hit.triangle];
                const ClosestPoint cp = closest_point_on_triangle(c, mesh.vertices[t[0]], mesh.vertices[t[1]], mesh.vertices[t[2]]);
                const Vec3d g = d > 1e-12 * vs ? (cp.point - c) * (-sign / d) : normals.at(hit.triangle, cp) * (-orient);
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
