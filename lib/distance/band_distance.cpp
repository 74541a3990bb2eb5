// Narrow-band distances (distance/distance.hpp, compute_distance_band), brick by brick: the band
// voxels' nearest triangles come from BrickNearest (distance/brick_nearest.hpp: one BVH query per
// brick, sorted candidate triangles per brick and per 4^3 sub-block, a per-voxel scan with
// cut-offs), the minimum of the same point-triangle distances the BVH query takes its minimum
// over, so the same value, bit for bit.
// Threads: TBB over blocks; every block's values depend only on the block.
#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <numeric>

#include <tbb/blocked_range.h>
#include <tbb/combinable.h>
#include <tbb/parallel_for.h>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "distance/brick_nearest.hpp"
#include "distance/distance.hpp"
#include "geometry/bvh.hpp"

namespace hp {

namespace {

// The body of compute_distance_band_as; with `consumed` (the layers themselves), each run of blocks'
// layer bricks goes back to the system once the run is done.
template <class V, class L>
BandDistanceFieldOf<V> band_distance(const TriMesh& mesh, const BrickField<L>& layers, BrickField<L>* consumed, int band,
                                     const Progress& progress) {
    if (mesh.triangles.empty()) fail_input("", "the mesh has no triangles");
    if (band < 1) fail_usage("the band must be at least 1 voxel");
    const GridSpec& grid = layers.grid;
    const double vs = grid.voxel_size;
    const double far = band * vs;
    BandDistanceFieldOf<V> out;
    BrickField<V>& f = out.values;
    f.reset(grid, 0);
    f.index = layers.index;
    // The values' pages fault in as the runs below write them (on all threads).
    f.size_bricks_lazily(layers.brick_count());
    // +-B voxel sizes by the layer's side (0 on a zero layer), rounded once to V.
    auto far_value = [far](int layer) { return layer > 0 ? far : (layer < 0 ? -far : 0.0); };
    for (std::size_t b = 0; b < f.block_count(); ++b) {
        const double tv = far_value(layers.tile[b]);
        f.tile[b] = static_cast<V>(tv);
        out.min = std::min(out.min, tv), out.max = std::max(out.max, tv);
    }
    require_band_bricks(layers, band);
    const TriangleBvh bvh(mesh);
    const NearestSign signs(mesh);
    const NearestIndex index(bvh, grid, false);
    auto t0 = Clock::now();
    const std::size_t blocks = f.block_count();
    std::atomic<std::size_t> exact{0};
    tbb::combinable<std::pair<double, double>> range([] { return std::pair{0.0, 0.0}; });
    // Runs of blocks in order, about 1/32 of them each; keep_from[c]: the smallest brick number of
    // the blocks after run c, below which the layers may go back once run c is done.
    const std::size_t run = std::max<std::size_t>(16384, blocks / 32);
    const std::size_t runs = (blocks + run - 1) / run;
    std::vector<std::size_t> keep_from(runs, layers.brick_count());
    if (consumed) {
        std::size_t after = layers.brick_count();
        for (std::size_t b = blocks; b-- > 0;) {
            if ((b + 1) % run == 0 && (b + 1) / run < runs) keep_from[(b + 1) / run - 1] = after;
            if (layers.index[b] != BrickField<L>::kTile) after = std::min<std::size_t>(after, layers.index[b]);
        }
    }
    auto body = [&](const tbb::blocked_range<std::size_t>& r) {
        std::size_t n = 0;
        auto& [vmin, vmax] = range.local();
        BrickNearest nearest(index);
        for (std::size_t b = r.begin(); b != r.end(); ++b) {
            const L* lay = layers.brick(b);
            if (!lay) continue;
            V* out_v = f.brick(b);
            const auto bc = f.block_coords(b);
            const int x0 = bc[0] * kBrickDim, y0 = bc[1] * kBrickDim, z0 = bc[2] * kBrickDim;
            // Values beyond the band; the band voxels go to the nearest-triangle scan.
            nearest.begin(x0, y0, z0);
            for (int dz = 0; dz < kBrickDim; ++dz)
                for (int dy = 0; dy < kBrickDim; ++dy)
                    for (int dx = 0; dx < kBrickDim; ++dx) {
                        const std::size_t o = static_cast<std::size_t>(dx | (dy << 3) | (dz << 6));
                        const int layer = lay[o];
                        if (std::abs(layer) >= band || !grid.contains(x0 + dx, y0 + dy, z0 + dz)) {
                            const double v = far_value(layer);
                            out_v[o] = static_cast<V>(v);
                            vmin = std::min(vmin, v), vmax = std::max(vmax, v);
                            continue;
                        }
                        nearest.add(dx, dy, dz);
                    }
            for (const BrickNearest::Hit& hit : nearest.run()) {
                const std::uint16_t o = hit.offset;
                const int layer = lay[o];
                const double sign = signs(layer, bvh.triangle_at(hit.slot), hit.closest,
                                          grid.center(x0 + (o & 7), y0 + ((o >> 3) & 7), z0 + (o >> 6)));
                out_v[o] = static_cast<V>(sign * hit.distance);
                vmin = std::min(vmin, sign * hit.distance), vmax = std::max(vmax, sign * hit.distance);
                ++n;
            }
        }
        exact.fetch_add(n, std::memory_order_relaxed);
    };
    for (std::size_t c = 0; c < runs; ++c) {
        tbb::parallel_for(tbb::blocked_range<std::size_t>(c * run, std::min(blocks, (c + 1) * run), 16), body);
        if (consumed) consumed->release_bricks_before(keep_from[c]);
    }
    range.combine_each([&](const std::pair<double, double>& m) { out.min = std::min(out.min, m.first), out.max = std::max(out.max, m.second); });
    out.exact_voxels = exact.load();
    out.seconds_exact = seconds_since(t0);
    progress.report("distance", 1.0);
    return out;
}

}  // namespace

template <class V, class L>
BandDistanceFieldOf<V> compute_distance_band_as(const TriMesh& mesh, const BrickField<L>& layers, int band,
                                                const Progress& progress) {
    return band_distance<V>(mesh, layers, static_cast<BrickField<L>*>(nullptr), band, progress);
}

template <class V, class L>
BandDistanceFieldOf<V> compute_distance_band_as(const TriMesh& mesh, BrickField<L>&& layers, int band, const Progress& progress) {
    BandDistanceFieldOf<V> out = band_distance<V>(mesh, layers, &layers, band, progress);
    layers = {};
    return out;
}

template BandDistanceFieldOf<double> compute_distance_band_as<double, std::int32_t>(const TriMesh&, const BrickField<std::int32_t>&,
                                                                                    int, const Progress&);
template BandDistanceFieldOf<double> compute_distance_band_as<double, std::int16_t>(const TriMesh&, const BrickField<std::int16_t>&,
                                                                                    int, const Progress&);
template BandDistanceFieldOf<float> compute_distance_band_as<float, std::int16_t>(const TriMesh&, const BrickField<std::int16_t>&,
                                                                                  int, const Progress&);
template BandDistanceFieldOf<float> compute_distance_band_as<float, std::int16_t>(const TriMesh&, BrickField<std::int16_t>&&, int,
                                                                                  const Progress&);
template BandDistanceFieldOf<double> compute_distance_band_as<double, std::int16_t>(const TriMesh&, BrickField<std::int16_t>&&, int,
                                                                                    const Progress&);

BandDistanceField compute_distance_band(const TriMesh& mesh, const BrickField<std::int32_t>& layers, int band,
                                        const Progress& progress) {
    return compute_distance_band_as<double>(mesh, layers, band, progress);
}

}  // namespace hp
