// Narrow-band distances (distance/distance.hpp, compute_distance_band), brick by brick: one BVH
// query at the centre c of a brick's band voxels gives d_c; every band voxel v of the brick then
// lies within d_c + |v - c| <= d_c + h of the mesh (h: the half diagonal of the voxels' box), so
// its closest triangle lies within R = d_c + 2h of c. The triangles within R of c (found through
// the BVH, exact point-triangle distances) are the brick's candidates, sorted by their distance to
// c; a voxel scans them in that order, starting from its predecessor's closest triangle, skips a
// candidate whose box is farther than the best distance so far, and stops at the first whose
// distance to c, less |v - c|, exceeds it. The result is the minimum of the same point-triangle
// distances the BVH query takes its minimum over, so the same value, bit for bit.
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
#include "distance/distance.hpp"
#include "geometry/bvh.hpp"
#include "geometry/pseudo_normals.hpp"

namespace hp {

namespace {

// A brick's candidate triangles, sorted by distance to the brick's centre (then by slot).
struct Candidates {
    std::vector<double> to_centre;
    std::vector<std::uint32_t> slot;
    std::vector<Aabb> box;
    std::vector<std::uint32_t> order;
    std::vector<std::pair<double, std::uint32_t>> sorted;

    void gather(const TriangleBvh& bvh, const Vec3d& c, double reach) {
        sorted.clear();
        const double reach2 = reach * reach;
        const auto& nodes = bvh.nodes();
        std::uint32_t stack[TriangleBvh::kMaxDepth + 2];
        int top = 0;
        stack[top++] = 0;
        while (top > 0) {
            const auto& node = nodes[stack[--top]];
            if (box_distance2(node.box, c) > reach2) continue;
            if (!node.leaf()) {
                stack[top++] = node.first;
                stack[top++] = node.first + 1;
                continue;
            }
            for (std::uint32_t s = node.first; s < node.first + node.count; ++s) {
                const auto& t = bvh.corners_at(s);
                const double d2 = closest_point_on_triangle(c, t[0], t[1], t[2]).distance2;
                if (d2 <= reach2) sorted.emplace_back(std::sqrt(d2), s);
            }
        }
        std::sort(sorted.begin(), sorted.end());
        to_centre.resize(sorted.size());
        slot.resize(sorted.size());
        box.resize(sorted.size());
        for (std::size_t n = 0; n < sorted.size(); ++n) {
            to_centre[n] = sorted[n].first;
            slot[n] = sorted[n].second;
            const auto& t = bvh.corners_at(sorted[n].second);
            Aabb b;
            for (const auto& p : t) b.extend(p);
            box[n] = b;
        }
    }
};

}  // namespace

template <class V, class L>
BandDistanceFieldOf<V> compute_distance_band_as(const TriMesh& mesh, const BrickField<L>& layers, int band,
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
    f.bricks.assign(layers.bricks.size(), V(0));
    const V vfar = static_cast<V>(far);
    for (std::size_t b = 0; b < f.block_count(); ++b) {
        const int t = layers.tile[b];
        f.tile[b] = t > 0 ? vfar : (t < 0 ? -vfar : V(0));
        const double tv = t > 0 ? far : (t < 0 ? -far : 0.0);
        out.min = std::min(out.min, tv), out.max = std::max(out.max, tv);
        if (layers.index[b] == BrickField<L>::kTile && std::abs(t) < band)
            fail_input("", "the voxelmap has a constant block of layer " + std::to_string(t) + " inside the band of " +
                               std::to_string(band) + " voxels; make it with haptic-voxelize --band " + std::to_string(band));
    }
    const TriangleBvh bvh(mesh);
    const PseudoNormals normals(mesh);
    double volume = 0;
    for (const auto& t : mesh.triangles)
        volume += dot(mesh.vertices[t[0]], cross(mesh.vertices[t[1]], mesh.vertices[t[2]]));
    const double orient = volume < 0 ? -1.0 : 1.0;
    auto t0 = Clock::now();
    const std::size_t blocks = f.block_count();
    std::atomic<std::size_t> exact{0};
    tbb::combinable<std::pair<double, double>> range([] { return std::pair{0.0, 0.0}; });
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, blocks, 16), [&](const tbb::blocked_range<std::size_t>& r) {
        std::size_t n = 0;
        auto& [vmin, vmax] = range.local();
        Candidates cand;
        std::array<std::vector<std::uint16_t>, 8> voxels;  // per 4^3 sub-block
        std::vector<std::pair<double, std::uint32_t>> sub;
        for (std::size_t b = r.begin(); b != r.end(); ++b) {
            const L* lay = layers.brick(b);
            if (!lay) continue;
            V* out_v = f.brick(b);
            const auto bc = f.block_coords(b);
            const int x0 = bc[0] * kBrickDim, y0 = bc[1] * kBrickDim, z0 = bc[2] * kBrickDim;
            // Values beyond the band; the band voxels by 4^3 sub-block, and the boxes (voxel indices)
            // of the brick's and of each sub-block's band voxels.
            for (auto& v : voxels) v.clear();
            int lo[9][3], hi[9][3];
            for (int q = 0; q < 9; ++q)
                for (int a = 0; a < 3; ++a) lo[q][a] = kBrickDim, hi[q][a] = -1;
            for (int dz = 0; dz < kBrickDim; ++dz)
                for (int dy = 0; dy < kBrickDim; ++dy)
                    for (int dx = 0; dx < kBrickDim; ++dx) {
                        const std::size_t o = static_cast<std::size_t>(dx | (dy << 3) | (dz << 6));
                        const int layer = lay[o];
                        if (std::abs(layer) >= band || !grid.contains(x0 + dx, y0 + dy, z0 + dz)) {
                            out_v[o] = layer > 0 ? vfar : (layer < 0 ? -vfar : V(0));
                            const double v = layer > 0 ? far : (layer < 0 ? -far : 0.0);
                            vmin = std::min(vmin, v), vmax = std::max(vmax, v);
                            continue;
                        }
                        const int q = (dx >> 2) | ((dy >> 2) << 1) | ((dz >> 2) << 2);
                        voxels[static_cast<std::size_t>(q)].push_back(static_cast<std::uint16_t>(o));
                        const int d[3] = {dx, dy, dz};
                        for (int qq : {q, 8})
                            for (int a = 0; a < 3; ++a) lo[qq][a] = std::min(lo[qq][a], d[a]), hi[qq][a] = std::max(hi[qq][a], d[a]);
                    }
            if (hi[8][0] < 0) continue;
            auto box_of = [&](int q, Vec3d& centre) {
                const Vec3d a = grid.center(x0 + lo[q][0], y0 + lo[q][1], z0 + lo[q][2]);
                const Vec3d z = grid.center(x0 + hi[q][0], y0 + hi[q][1], z0 + hi[q][2]);
                centre = (a + z) * 0.5;
                return 0.5 * length(z - a);
            };
            Vec3d c;
            const double h = box_of(8, c);
            const MeshHit hc = bvh.closest(c);
            // A margin far above the rounding of these sums keeps every possible closest triangle.
            const double slack = 1e-9 * (vs + std::sqrt(hc.closest.distance2));
            cand.gather(bvh, c, std::sqrt(hc.closest.distance2) + 2 * h + slack);
            const std::size_t m = cand.slot.size();
            for (int q = 0; q < 8; ++q) {
                if (voxels[static_cast<std::size_t>(q)].empty()) continue;
                // The sub-block's candidates: the brick's within d' + 2 h' of its centre c', where
                // d' is the distance from c' to the nearest of them (the mesh's nearest lies among
                // them: c' is within h of c), sorted by distance to c'.
                Vec3d cq;
                const double hq = box_of(q, cq);
                sub.clear();
                double dq = INFINITY;
                for (std::size_t e = 0; e < m; ++e) {
                    const auto& t = bvh.corners_at(cand.slot[e]);
                    const double d = std::sqrt(closest_point_on_triangle(cq, t[0], t[1], t[2]).distance2);
                    sub.emplace_back(d, static_cast<std::uint32_t>(e));
                    dq = std::min(dq, d);
                }
                const double reach = dq + 2 * hq + slack;
                sub.erase(std::remove_if(sub.begin(), sub.end(), [&](const auto& e) { return e.first > reach; }), sub.end());
                std::sort(sub.begin(), sub.end());
                const std::size_t ms = sub.size();
                std::size_t seed = 0;  // the previous voxel's closest candidate (index into sub)
                for (std::uint16_t o : voxels[static_cast<std::size_t>(q)]) {
                    const int i = x0 + (o & 7), j = y0 + ((o >> 3) & 7), k = z0 + (o >> 6);
                    const Vec3d x = grid.center(i, j, k);
                    const double rx = length(x - cq);
                    const auto& ts = bvh.corners_at(cand.slot[sub[seed].second]);
                    double best2 = closest_point_on_triangle(x, ts[0], ts[1], ts[2]).distance2;
                    std::size_t best = seed;
                    double best_d = std::sqrt(best2);
                    for (std::size_t e = 0; e < ms; ++e) {
                        if (sub[e].first - rx > best_d + slack) break;  // this and all later are farther
                        const std::uint32_t ce = sub[e].second;
                        if (e == seed || box_distance2(cand.box[ce], x) > best2 * (1 + 1e-12)) continue;
                        const auto& t = bvh.corners_at(cand.slot[ce]);
                        const double d2 = closest_point_on_triangle(x, t[0], t[1], t[2]).distance2;
                        if (d2 < best2) best2 = d2, best = e, best_d = std::sqrt(d2);
                    }
                    seed = best;
                    const int layer = lay[o];
                    double sign = layer > 0 ? 1.0 : -1.0;
                    const std::uint32_t slot = cand.slot[sub[best].second];
                    if (layer == 0) {
                        const auto& t = bvh.corners_at(slot);
                        const ClosestPoint cp = closest_point_on_triangle(x, t[0], t[1], t[2]);
                        const Vec3d nrm = normals.at(bvh.triangle_at(slot), cp) * orient;
                        sign = dot(x - cp.point, nrm) > 0 ? -1.0 : 1.0;
                    }
                    out_v[o] = static_cast<V>(sign * best_d);
                    vmin = std::min(vmin, sign * best_d), vmax = std::max(vmax, sign * best_d);
                    ++n;
                }
            }
        }
        exact.fetch_add(n, std::memory_order_relaxed);
    });
    range.combine_each([&](const std::pair<double, double>& m) { out.min = std::min(out.min, m.first), out.max = std::max(out.max, m.second); });
    out.exact_voxels = exact.load();
    out.seconds_exact = seconds_since(t0);
    progress.report("distance", 1.0);
    return out;
}

template BandDistanceFieldOf<double> compute_distance_band_as<double, std::int32_t>(const TriMesh&, const BrickField<std::int32_t>&,
                                                                                    int, const Progress&);
template BandDistanceFieldOf<double> compute_distance_band_as<double, std::int16_t>(const TriMesh&, const BrickField<std::int16_t>&,
                                                                                    int, const Progress&);
template BandDistanceFieldOf<float> compute_distance_band_as<float, std::int16_t>(const TriMesh&, const BrickField<std::int16_t>&,
                                                                                  int, const Progress&);

BandDistanceField compute_distance_band(const TriMesh& mesh, const BrickField<std::int32_t>& layers, int band,
                                        const Progress& progress) {
    return compute_distance_band_as<double>(mesh, layers, band, progress);
}

}  // namespace hp
