#pragma once
// lib/spheretree — point-sphere trees by bottom-up clustering (paper 000, section 2.1.2, Fig. 2).
//
// In: the points of a pointshell (world units). Out: a tree of clusters. Level 1 is the root,
// the deepest level holds the leaves; every level is a coarser sampling of the whole surface.
//
// Clustering of one level (the paper's procedure, with its open choices fixed here):
//  1. Start at a point chosen by the seed (SplitMix64, so the same on every platform). Form a
//     cluster of it and its K-1 nearest unclustered points (k-d tree, nanoflann; distance ties go
//     to the lower index); the K-th nearest unclustered point starts the next cluster. When no
//     unclustered point is left, or fewer than K, the next start is the unclustered point of lowest
//     index.
//  2. The parent point of a cluster is the member nearest the cluster's mean (ties: the first
//     member). Members farther than the threshold from the parent are tagged; the mean and the
//     parent are recomputed from the untagged members, and again until no member is tagged.
//  3. When the level is done, each tagged point (in index order) joins the cluster whose parent
//     point is nearest to it, if that parent is within the threshold; else it becomes a cluster of
//     its own (one point, its own parent).
//  4. The parent points form the next level; repeat until one cluster (the root) remains.
//     A level with at most K points becomes the root.
// Threshold: per level, T x the level's typical cluster extent, where T is TreeOptions::threshold
// (default 2) and the extent is the median distance from a point of the level to its K-th nearest
// other point. Relative, because the spacing grows by about sqrt(K) per level (on a surface): one
// distance in world units would tag nothing near the root or everything near the leaves. So by
// default a point is tagged when it is more than twice as far from its parent as the K-th
// neighbour of a typical point is from it. T = 0 turns tagging off (the plain greedy clustering).
// A level must shrink at least halfway from n to n/K points; if tagging leaves more clusters than
// n (1 + 1/K) / 2, the level is clustered again without tagging. This bounds the number of levels
// by log(N) / log(2K / (K + 1)); typically it is close to log_K(N).
//
// Spheres: every cluster gets the minimal enclosing ball of all points below it (its own points
// and all its descendants' points, not the child spheres).
//
// Cluster ids follow a breadth-first order from the root (id 0), so the children of a cluster
// have consecutive ids and each level is a contiguous range. Deterministic for a seed whatever
// the thread count (the clustering is sequential; spheres are computed in parallel per cluster).
// Cost: O(N log N) for the k-d queries, O(N x levels) for the spheres.
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
