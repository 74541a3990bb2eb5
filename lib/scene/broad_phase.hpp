#pragma once
// lib/scene/broad_phase — which static parts a moving ball may touch: a bounding volume
// hierarchy over boxes, built once, asked once per frame.
//
// In: one world box per static part (lib/scene/scene_query: the box where the part's V can be
// positive). Out, per query ball (centre, radius): the indices of the boxes whose closed
// distance to the centre is at most the radius, ascending. A box that only touches the ball is
// kept, so a caller that pads its boxes conservatively never loses a pair.
// Build: median split on the longest axis of the boxes' centres, leaves of up to 2 boxes,
// O(n log n); the nodes are one flat array in depth-first order. Query: O(log n + hits) for
// scattered boxes; no allocation once `out` has grown. Deterministic; const queries may run
// concurrently.
#include <cstdint>
#include <vector>

#include "math/vec.hpp"

namespace hp::scene {

class BroadPhase {
public:
    BroadPhase() = default;
    // Empty boxes are never reported (a part that can have no contact).
    explicit BroadPhase(const std::vector<Aabb>& boxes);

    // Clears `out`, then appends the indices of the boxes within `radius` of `center`, ascending.
    void query(const Vec3d& center, double radius, std::vector<std::uint32_t>& out) const;
    // The same by testing every box (the reference of the tests).
    void query_brute(const Vec3d& center, double radius, std::vector<std::uint32_t>& out) const;

    std::size_t size() const { return boxes_.size(); }
    const Aabb& box(std::size_t i) const { return boxes_[i]; }

private:
    struct Node {
        Aabb box;
        std::uint32_t first = 0;  // leaf: first entry of `order_`; inner: the right child (left is next)
        std::uint32_t count = 0;  // leaf: entries; 0 for an inner node
    };
    std::vector<Aabb> boxes_;
    std::vector<std::uint32_t> order_;  // box indices, leaves' ranges
    std::vector<Node> nodes_;

    std::uint32_t build(std::uint32_t begin, std::uint32_t end);
};

// Squared distance from `p` to the closed box `b` (0 inside).
double squared_distance(const Aabb& b, const Vec3d& p);

}  // namespace hp::scene
