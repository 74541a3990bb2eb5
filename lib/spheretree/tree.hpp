#pragma once
// lib/spheretree — point-sphere trees by bottom-up clustering (Sagardia et al. 2014, section
// 2.1.2, Fig. 2).
//
// In: the points of a pointshell (world units). Out: a tree of clusters; level 1 is the root, the
// deepest level holds the leaves, every level is a coarser sampling of the whole surface. Each
// level clusters a point and its K-1 nearest unclustered points, from a seeded start; members
// farther than the threshold (T x the level's median distance to the K-th neighbour) from the
// parent point are tagged and re-assigned; the parent points form the next level. Every cluster's
// sphere is the minimal enclosing ball of all points below it. Cluster ids are breadth-first from
// the root (id 0); children have consecutive ids.
// Cost: O(N log N) k-d queries, O(N x levels) for the spheres. Threads: clustering sequential,
// spheres parallel (TBB): deterministic for a seed whatever the thread count.
// The procedure and its choices: docs/spheretree.md.
#include <cstdint>
#include <span>
#include <vector>

#include "core/progress.hpp"
#include "math/vec.hpp"
#include "spheretree/miniball.hpp"

namespace hp {

struct TreeCluster {
    int level = 0;                        // 1 = root
    Ball sphere;                          // minimal ball of all points below this cluster
    std::vector<std::uint32_t> points;    // point indices, the parent point first
    std::vector<std::uint32_t> children;  // cluster ids (consecutive)
    std::int32_t parent = -1;             // cluster id, -1 for the root
};

struct TreeOptions {
    int k = 4;                 // points per cluster, >= 2
    std::uint64_t seed = 1;    // start point of the clustering of each level
    double threshold = 2;      // tagging threshold in multiples of the level's typical cluster
                               // extent (see above); 0 = no tagging
};

struct PointSphereTree {
    int k = 0;
    int levels = 0;
    std::vector<double> thresholds;    // tagging distance used per level in world units (0: none),
                                       // index 0 = level 1 (the root: always 0)
    std::vector<TreeCluster> clusters;  // breadth-first from the root
};

// Per-level figures of a tree (what haptic-spheretree and haptic-dump print).
struct TreeLevelStats {
    int level = 0;              // 1 = root
    std::size_t clusters = 0;
    std::size_t leaves = 0;     // clusters without children on this level
    std::size_t points = 0;     // members of this level's clusters (parent points included)
    double radius_min = 0, radius_median = 0, radius_mean = 0, radius_max = 0;
    double threshold = 0;       // tagging distance used to form this level's clusters (0: none)
};
// One entry per level, root first. O(clusters log clusters).
std::vector<TreeLevelStats> level_statistics(const PointSphereTree& tree);

// Builds the tree. Throws hp::Error(bad_input) when `points` is empty and hp::Error(usage) when
// k < 2 or the threshold is negative or not finite.
PointSphereTree build_point_sphere_tree(std::span<const Vec3d> points, const TreeOptions& options,
                                        const Progress& progress = {});

}  // namespace hp
