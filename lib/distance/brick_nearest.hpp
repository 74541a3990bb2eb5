#pragma once
// Exact nearest triangles for the voxels of one 8^3 brick (internal to lib/distance; used by the
// dense field's exact band, distance.cpp, and by the narrow band, band_distance.cpp). Method: one
// BVH query at the centre c of the brick's chosen voxels gives d_c; every chosen voxel v lies within
// d_c + |v - c| <= d_c + h of the mesh (h: the half diagonal of the voxels' box), so its closest
// triangle lies within R = d_c + 2h of c. The triangles within R of c (found through the BVH, exact
// point-triangle distances) are the brick's candidates, sorted by their distance to c; each 4^3
// sub-block keeps those within d' + 2h' of its own centre, sorted likewise. A voxel v takes the
// prefix of that list that can hold its nearest triangle (distance to the centre, less |v - centre|,
// at most the first one's plus |v - centre|), float lower bounds of their distances to v (8 at a
// time; an AVX2 clone of run() is chosen at run time), the exact distance to the one with the
// least bound, then to every other whose bound does not exceed the best exact distance so far.
// The result is the minimum of the same point-triangle distances the BVH query takes its minimum
// over, so the same value, bit for bit.
// Ties (several triangles at the same minimal squared distance; all of them are computed exactly):
// with `bvh_ties`, the triangle the BVH query (TriangleBvh::closest, any bound) returns, i.e. the
// first of them in its depth-first nearer-child-first order for that voxel; without, the previous
// voxel's nearest (in the order added, within the sub-block) if it is among them, else the first in
// the sub-block's sorted list.
// Thread use: one BrickNearest per thread over a shared NearestIndex.
#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/cpu.hpp"
#include "geometry/bvh.hpp"
#include "geometry/pseudo_normals.hpp"
#include "mesh/mesh.hpp"
#include "voxel/brick.hpp"
#include "voxel/grid.hpp"

namespace hp {

struct NearestIndex {
    NearestIndex(const TriangleBvh& bvh, const GridSpec& grid, bool bvh_ties);
    const TriangleBvh& bvh;
    const GridSpec& grid;
    bool bvh_ties;
    TriangleBvh::SlotRanges slots;  // per BVH node: the slots of its leaves (bvh_ties only)
    // True when the BVH query at x meets slot a before slot b (a != b).
    bool before(const Vec3d& x, std::uint32_t a, std::uint32_t b) const;
};

// The fields' signs (inside positive) and unit gradients at a voxel's nearest triangle, shared by
// the dense field, the narrow band and the band's gradients so that all three agree bit for bit.
class NearestSign {
public:
    explicit NearestSign(const TriMesh& mesh);
    // The layer's sign; on a surface voxel (layer 0) the angle-weighted pseudo-normal's at the closest
    // point cp on `triangle` (outward by the mesh's orientation), for the voxel centre c.
    double operator()(int layer, std::uint32_t triangle, const ClosestPoint& cp, const Vec3d& c) const {
        if (layer != 0) return layer > 0 ? 1.0 : -1.0;
        return dot(c - cp.point, normals_.at(triangle, cp) * orient_) > 0 ? -1.0 : 1.0;
    }
    // Towards increasing signed distance (deeper inside) at c, whose distance to cp is d and whose
    // sign is `sign`; on the surface itself (d below 1e-12 voxel sizes) the inward pseudo-normal.
    Vec3d gradient(double sign, double d, double voxel_size, std::uint32_t triangle, const ClosestPoint& cp,
                   const Vec3d& c) const {
        return d > 1e-12 * voxel_size ? (cp.point - c) * (-sign / d) : normals_.at(triangle, cp) * (-orient_);
    }

private:
    PseudoNormals normals_;
    double orient_;  // -1 for an inward-wound mesh (negative signed volume): flips the pseudo-normals
};

// Refuses (exit 3) a band voxelmap with a constant block inside the band: it was not made with
// haptic-voxelize --band `band`.
template <class L>
void require_band_bricks(const BrickField<L>& layers, int band);

class BrickNearest {
public:
    struct Hit {
        std::uint16_t offset;  // dx | dy << 3 | dz << 6
        std::uint32_t slot;    // BVH leaf slot of the nearest triangle
        double distance;
        ClosestPoint closest;  // on that triangle
    };
    // wide_bounds: float bounds 8 lanes at once (fast on AVX2 CPUs, the default there) or in halves
    // of 4 (the default elsewhere); both give the same hits, and tests run both.
    explicit BrickNearest(const NearestIndex& index, bool wide_bounds = cpu_has_avx2()) : ix_(index), wide_(wide_bounds) {}
    void begin(int x0, int y0, int z0);  // a new brick, voxel (x0, y0, z0) at its corner
    void add(int dx, int dy, int dz);    // a voxel of it to compute
    // The added voxels' nearest triangles and distances (by sub-block, in the order added).
    const std::vector<Hit>& run();

    // Float data of one candidate triangle, relative to the brick's centre (brick_nearest.cpp),
    // stored for kLanes candidates at a time: field k of candidate kLanes g + n is f[k][n] of group g.
    static constexpr int kFields = 29;
    static constexpr int kLanes = 8;
    struct Group {
        alignas(32) float f[kFields][kLanes];
    };

private:
    void boxes();  // lo_, hi_ from voxels_
    void gather(const Vec3d& c, double reach);
    void pack(const Vec3d& c, double reach_p);
    const NearestIndex& ix_;
    bool wide_;
    int x0_ = 0, y0_ = 0, z0_ = 0;
    std::array<std::vector<std::uint16_t>, 8> voxels_;  // per 4^3 sub-block
    int lo_[9][3], hi_[9][3];                           // voxel boxes: sub-blocks 0..7, brick 8
    // The brick's candidates, sorted by distance to its centre (then by slot).
    std::vector<std::pair<double, std::uint32_t>> sorted_;
    std::vector<std::uint32_t> slot_;
    std::vector<std::array<float, kFields>> cand_;  // per candidate, in sorted_ order
    std::vector<Group> brick_groups_;               // the same, kLanes candidates per group
    std::vector<Group> sub_groups_;                 // a sub-block's candidates, in sub_ order
    std::vector<float> low_;                        // lower bounds of squared distances, per candidate
    std::vector<double> exact_;                     // a sub-block centre's exact distances (-1: not computed)
    std::vector<std::pair<double, std::uint32_t>> sub_;
    std::vector<double> sub_d_;  // sub_'s distances, contiguous
    std::vector<Hit> hits_;
    // Per voxel of the sub-block being run: its prefix's bounds (rows of whole groups), centre,
    // least-bound candidate, prefix length, and the exact closest point on that candidate.
    std::vector<float> rows_;
    std::vector<Vec3d> at_;
    std::vector<std::uint32_t> least_, prefix_;
    std::vector<ClosestPoint> first_;
};

}  // namespace hp
