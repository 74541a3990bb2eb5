#pragma once
// lib/octree/ist — collision queries between two implicit sphere trees (Ruffaldi et al., section
// 3.2; docs/octree.md): the moving object's octree at a pose against the static object's, both
// descended simultaneously, breadth-first.
//
// The descent keeps pairs of nodes whose spheres overlap, one round per level: a pair splits the
// node of the higher level (both when their levels are equal) and tests each new pair's spheres.
// A node's sphere comes from its parent's cube (the parent's centre plus the child's offset along
// the object's axes, computed once per query and scaled per level), the table of tight spheres
// (side optimization) or the cube's circumsphere (side off). With the one-child optimization a
// pair whose new node has a single child is kept without a test (its child's test follows).
// A pair of voxels is a contact when the voxels' circumspheres overlap: |cA - cB| < rA + rB,
// r = sqrt(3)/2 s, with centres computed from the voxels' integer coordinates (the same
// arithmetic as ist-brute, so both find the same pairs); the internal tests keep a relative slack
// of 1e-9 so that rounding never prunes a pair the voxel test would accept.
// A tight sphere (radius R) holds the children's cubes but not always their voxels' circumspheres,
// which reach beyond the cubes' corners; so that the descent stays exact, a node's test radius is
// min(sqrt(R^2 - 3 s^2 / 4) + sqrt(3)/2 s, the cube's circumradius): every voxel centre inside the
// ball is within sqrt(R^2 - 3 s^2 / 4) of its centre (docs/octree.md).
// Early stops (time-critical): at a node level, or after the first round that leaves at least a
// given number of pairs; the pairs left are then the contacts (node pairs, `level` > 0).
// Work per round: each object's nodes of the round are kept in an array, each with its test sphere
// (and, for a voxel, its voxel centre) computed once when it enters the round; a node's children
// are made once per round, whichever pairs it is in, and a pair is two places in those arrays.
// The contacts, their order and the counts in IstStats are those of one test per pair as above.
// Allocation: scratch is kept between calls; after the first calls grow it, a query does not allocate.
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "math/vec.hpp"
#include "octree/octree.hpp"

namespace hp::octree {

struct IstOptions {
    bool one_child = true;         // replace a new node with one child by that child, untested
    bool side = true;              // spheres from the table of tight spheres (else the cubes' circumspheres)
    int stop_level = 0;            // stop when the pairs' nodes are at this level or below (0: voxels)
    std::size_t max_contacts = 0;  // stop after the first round that leaves at least this many pairs (0: never)
};

// The moving object's placement: world point = R p + t (R as rows).
struct Placement {
    std::array<Vec3d, 3> rows{Vec3d{1, 0, 0}, Vec3d{0, 1, 0}, Vec3d{0, 0, 1}};
    Vec3d translation;
};

struct IstContact {
    std::uint32_t moving = 0, fixed = 0;  // voxel ordinals (level 0) or node indices (coarse contacts)
    int level = 0;                        // 0: a voxel pair; > 0: the larger level of a coarse node pair
    Vec3d moving_center, fixed_center;    // sphere centres, static frame
    double radius_sum = 0;                // rA + rB
    double depth = 0;                     // rA + rB - |cA - cB| > 0: the spheres' overlap (paper 3.3.1)
};

struct IstStats {
    std::size_t sphere_tests = 0;  // node-pair tests
    std::size_t voxel_tests = 0;   // voxel-pair tests
    std::size_t skipped = 0;       // nodes the one-child optimization replaced by their child (tests saved)
    std::size_t rounds = 0;
    int level_reached = 0;         // the finest pair level reached (a pair's level: the larger of its nodes')
    bool interrupted = false;      // stopped early with node pairs left (coarse contacts)
};

struct IstFrames;  // the per-query axes and offsets of both objects (ist.cpp)

class IstQuery {
public:
    // `moving` and `fixed` must outlive the query.
    IstQuery(const Octree& moving, const Octree& fixed, const IstOptions& options);
    IstQuery(IstQuery&&) noexcept;
    ~IstQuery();
    // The contacts at this placement, in the order found; valid until the next call.
    const std::vector<IstContact>& operator()(const Placement& placement);
    const IstStats& stats() const { return stats_; }
    const IstOptions& options() const { return options_; }
    // The contact count of the next queries' early stop (0: never): a scene's share of its frame's.
    void set_max_contacts(std::size_t n) { options_.max_contacts = n; }

    // A node of one round of the descent with what its tests need, computed once when the node
    // enters the round (not once per pair it is in).
    struct Node {
        Vec3d center;              // the cube's centre, static frame (children's centres follow from it)
        Vec3d sphere;              // the test sphere's centre (level 0: the cube's centre)
        Vec3d voxel;               // level 0: the voxel test's centre (voxel_center); else unused
        double radius = 0;         // the test sphere's radius
        std::int32_t x = 0, y = 0, z = 0;
        std::uint32_t index = 0;   // node index (level >= 1) or voxel ordinal (level 0)
        std::uint32_t carried = 0; // this node's place in the next round when kept unsplit (kNone: not yet)
        std::uint32_t first = 0;   // its children's first place in the next round (kNone: not yet split)
        std::int8_t level = 0;
        std::uint8_t mask = 0;     // level >= 1: the child mask
        std::uint8_t skips = 0;    // single-child nodes the one-child optimization passed to reach it
        std::uint8_t children = 0; // how many children it has in the next round, once split
        std::int8_t child_level = 0;   // once split: the lowest level among its children
        std::uint8_t child_skips = 0;  // once split: the one-child steps of its children, summed
    };
    struct Pair {
        std::uint32_t a, b;  // places in the round's node arrays
    };

private:
    const Octree& a_;
    const Octree& b_;
    IstOptions options_;
    std::vector<double> radii_a_, radii_b_;  // per level and mask: the radius each node's test uses
    std::vector<Node> a_cur_, a_next_, b_cur_, b_next_;  // the round's nodes of each object, and the next round's
    std::vector<Pair> cur_, next_;
    std::vector<IstContact> contacts_;
    IstStats stats_;
    std::unique_ptr<IstFrames> frames_;
};

// The world centre of voxel (i, j, k) of `tree` placed by `p` (the one formula ist and ist-brute use).
Vec3d voxel_center(const Octree& tree, const Placement& p, int i, int j, int k);

// ist-brute: every pair of a moving voxel and a static voxel whose circumspheres overlap, each
// pair tested directly with the voxel test of the descent. Static voxels are looked up by their
// coordinates in a hash map built once; each moving voxel tests every static voxel in the box of
// static voxels its reach (rA + rB) can touch. Contacts sorted by (moving, fixed).
class BruteQuery {
public:
    BruteQuery(const Octree& moving, const Octree& fixed);
    const std::vector<IstContact>& operator()(const Placement& placement);
    std::size_t voxel_tests() const { return tests_; }

private:
    const Octree& a_;
    const Octree& b_;
    std::vector<std::array<int, 3>> a_coords_, b_coords_;
    std::unordered_map<std::uint64_t, std::uint32_t> b_index_;
    std::vector<IstContact> contacts_;
    std::size_t tests_ = 0;
};

}  // namespace hp::octree
