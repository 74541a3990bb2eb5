#pragma once
// lib/spheretree — point-sphere trees by bottom-up clustering (paper 000, section 2.1.2, Fig. 2).
//
// In: the points of a pointshell (world units). Out: a tree of clusters. Level 1 is the root,
// the deepest level holds the leaves; every level is a coarser sampling of the whole surface.
//
// Clustering of one level (the paper's procedure, with its open choices fixed here):
//  1. Start at a point chosen by the seed (SplitMix64, so the same on every platform). Form a
//     cluster of it and its K-1 nearest unclustered points (k-d tree, nanoflann); the K-th
//     nearest unclustered point starts the next cluster. When no unclustered point is left
//     near, the next start is the unclustered point of lowest index.
//  2. The parent point of a cluster is the member nearest the cluster's mean. Members farther
//     than the threshold T from the parent are tagged; the mean and the parent are recomputed
//     from the untagged members, and again until no member is tagged.
//  3. Tagged points join the cluster of the nearest parent point of the level if it is within T,
//     else they become a cluster of their own (one point, its own parent).
//  4. The parent points form the next level; repeat until one cluster (the root) remains.
//     A level with at most K points becomes the root.
// Threshold: --threshold T in world units, or 0 (default) for "auto": per level, 2 x the median
// distance from a point of that level to its K-th nearest neighbour (the typical extent of a
// cluster of K neighbours), so the rule scales with each level's spacing. If a level would not
// shrink (every point tagged alone), it is clustered again without the threshold.
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
#include "geometry/vec.hpp"
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
    double threshold = 0;      // world units; 0 = auto (see above)
};

struct PointSphereTree {
    int k = 0;
    int levels = 0;
    std::vector<double> thresholds;    // threshold used per level, index 0 = level 1 (root)
    std::vector<TreeCluster> clusters;  // breadth-first from the root
};

// Builds the tree. Throws hp::Error(bad_input) when `points` is empty and hp::Error(usage) when
// k < 2 or threshold < 0.
PointSphereTree build_point_sphere_tree(std::span<const Vec3d> points, const TreeOptions& options,
                                        const Progress& progress = {});

}  // namespace hp
