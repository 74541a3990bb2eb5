#pragma once
// lib/exact — the walks over two ExactMesh trees shared by the sweeps (sweep.cpp) and the static
// queries (proximity.cpp), with the boxes they test. Internal to the exact module.
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "exact/exact.hpp"
#include "geometry/bvh.hpp"

namespace hp::exact::detail {

inline Aabb triangle_box(const Vec3d& a, const Vec3d& b, const Vec3d& c) {
    Aabb box;
    box.extend(a);
    box.extend(b);
    box.extend(c);
    return box;
}

// The box of `box` moved by `pose` (the box around the rotated box).
inline Aabb rotate_box(const RigidPose& pose, const Aabb& box) {
    const Vec3d c = pose.apply(box.center()), e = box.size() * 0.5;
    Vec3d h;
    for (int i = 0; i < 3; ++i)
        h[i] = std::fabs(pose.rows[static_cast<std::size_t>(i)].x) * e.x + std::fabs(pose.rows[static_cast<std::size_t>(i)].y) * e.y +
               std::fabs(pose.rows[static_cast<std::size_t>(i)].z) * e.z;
    return {c - h, c + h};
}

inline bool overlap(const Aabb& a, const Aabb& b) {
    return a.min.x <= b.max.x && b.min.x <= a.max.x && a.min.y <= b.max.y && b.min.y <= a.max.y && a.min.z <= b.max.z &&
           b.min.z <= a.max.z;
}

// Walks the pairs of the two trees' nodes, the larger box split first. box_of(moving node's box)
// places a moving box in the world (posed, or swept over a motion); skip(fixed box, that box)
// prunes a pair; leaves(fixed leaf, moving leaf) handles two leaves and returns true to stop.
template <class BoxOf, class Skip, class Leaves>
void walk_node_pairs(const ExactMesh& fixed, const ExactMesh& moving, BoxOf&& box_of, Skip&& skip, Leaves&& leaves) {
    if (fixed.nodes().empty() || moving.nodes().empty()) return;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> stack{{0, 0}};
    while (!stack.empty()) {
        const auto [fi, mi] = stack.back();
        stack.pop_back();
        const auto& fn = fixed.nodes()[fi];
        const auto& mn = moving.nodes()[mi];
        const Aabb mbox = box_of(mn.box);
        if (skip(fn.box, mbox)) continue;
        if (!fn.leaf() && (mn.leaf() || fn.box.diagonal() >= mbox.diagonal())) {
            stack.push_back({fn.first, mi});
            stack.push_back({fn.first + 1, mi});
            continue;
        }
        if (!mn.leaf()) {
            stack.push_back({fi, mn.first});
            stack.push_back({fi, mn.first + 1});
            continue;
        }
        if (leaves(fn, mn)) return;
    }
}

}  // namespace hp::exact::detail
