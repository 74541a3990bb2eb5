#pragma once
// lib/octree — octrees over a voxelmap's voxels and the implicit sphere trees over them
// (Ruffaldi, Morris, Barbagli, Salisbury, Bergamasco, "Voxel-Based Haptic Rendering Using Implicit
// Sphere Trees", section 3; docs/octree.md).
//
// Storage is what the paper stores: one 8-bit child-occupancy mask per node, plus the root's level,
// the root cube's origin and the voxel size for the whole tree. Masks are kept breadth-first (the
// root, then every node of the next level, ...), each level in Morton order, so a node's children
// are found by counting the set bits of the masks before it (first_child, derived on load, not
// stored). Child bit b holds the child at offset (b & 1, (b >> 1) & 1, (b >> 2) & 1) in half-node
// units. Level 0 is a voxel (no mask); a node of level l covers 2^l voxels per side.
//
// Spheres are never stored: a node's sphere is computed during the descent from its cube (centre
// and side, from its parent's) and, with the side optimization, the table of tight spheres
// (tight_spheres(): the exact minimal ball of the occupied children's cubes for each of the 255
// masks, computed once at start-up, as an offset from the node centre and a radius, both in node
// sides). ist.hpp descends two of them simultaneously.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "math/vec.hpp"

namespace hp::octree {

inline constexpr int kMaxLevels = 21;  // 21 bits per axis in a 63-bit Morton code

// The circumsphere's radius of a cube of side 1.
inline constexpr double kCubeRadius = 0.86602540378443864676;  // sqrt(3) / 2

struct TightSphere {
    Vec3d offset;        // centre minus the node centre, in node sides
    double scale = 0;    // radius in node sides; kCubeRadius when no smaller ball bounds the children
};

// The 256 entries (entry 0, the empty mask, has scale 0): entry m is the minimal ball of the
// corner points of the child cubes set in m (Welzl's algorithm, spheretree/miniball.hpp), computed
// on first use and shared. Entries whose radius equals the full node's within 1e-12 are stored
// as exactly the full node's sphere (offset 0, scale kCubeRadius).
const std::array<TightSphere, 256>& tight_spheres();

// How many of the 255 non-empty masks have a ball smaller than the full node's sphere, for each
// quantity one may bound (docs/octree.md compares them with the paper's 85): the child cubes
// (what tight_spheres() holds), the child cubes' circumspheres, the child centres.
struct TableCounts {
    int cubes = 0, child_spheres = 0, child_centres = 0;
    int distinct_cube_radii = 0;  // distinct radii among the smaller cube balls
};
TableCounts table_counts();

struct Octree {
    int levels = 0;               // L: the root's level; the root cube holds 2^L voxels per side
    Vec3d origin;                 // world min corner of the root cube (= voxel (0,0,0)'s)
    double voxel_size = 0;        // s, world units
    bool surface_only = false;    // built from the surface voxels only (layer 0)
    std::vector<std::uint8_t> masks;  // breadth-first, one per node of levels L..1, none zero

    // Derived by finalize() (not stored in files):
    std::vector<std::uint32_t> first_child;  // per node: its first child's node index (level > 1) or voxel ordinal (level 1)
    std::vector<std::uint32_t> level_begin;  // L + 1 entries: first node index of depth d (level L - d); [L] = nodes()
    std::size_t voxels = 0;                  // voxels (leaves) in total

    std::size_t nodes() const { return masks.size(); }
    int level_of(std::uint32_t node) const;  // levels - depth
    double side(int level) const { return voxel_size * static_cast<double>(std::uint64_t{1} << level); }
};

// Checks the masks against the tree's shape and fills the derived arrays. Returns "" when the tree
// is consistent, else what is wrong (a zero mask, node counts that do not add up, levels out of
// 1..kMaxLevels, a voxel size that is not finite and > 0, a voxel outside 2^L): the file reader
// turns it into exit 3.
std::string finalize(Octree& tree);

// Builds the octree of the given voxels (integer grid coordinates, 0 <= c < 2^kMaxLevels; duplicates
// are merged) of a grid whose voxel (0,0,0) has its min corner at `origin`. The root's level L is
// the smallest with 2^L >= every coordinate + 1 (at least 1). Throws hp::Error(bad_input) when
// there is no voxel. O(n log n).
Octree build(std::vector<std::array<int, 3>> voxels, Vec3d origin, double voxel_size, bool surface_only);

// Every voxel's integer coordinates, in voxel-ordinal order (the order of the leaves).
std::vector<std::array<int, 3>> voxel_coords(const Octree& tree);

// Per level (L..1, then 0 = voxels): the node count, for summaries.
std::vector<std::size_t> nodes_per_level(const Octree& tree);

// Spheres of one level as the descent computes them (body frame; side = the side optimization):
// for `level` >= 1 the nodes of that level, for level 0 every voxel's circumsphere.
struct NodeSphere {
    Vec3d center;
    double radius = 0;
};
std::vector<NodeSphere> level_spheres(const Octree& tree, int level, bool side = true);

}  // namespace hp::octree
