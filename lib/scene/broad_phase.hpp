#pragma once
// lib/scene/broad_phase — which static parts a moving ball may touch: a bounding volume
// hierarchy over boxes, built once, asked once per frame.
//
// In: one world box per static part (lib/scene/scene_query: the box where the part's V can be
// positive). Out, per query ball (centre, radius): the indices of the boxes whose closed
// distance to the centre is at most the radius, ascending. A box that only touches the ball is
// kept, so a caller that pads its boxes conservatively never loses a pair.
// Build: median splits on the longest axis of the boxes' centres, two levels per node (a node has
// up to 4 children), leaves of up to 4 boxes, O(n log n); the nodes are one flat array in
// depth-first order. Query: O(log n + hits) for scattered boxes; no allocation once `out` has
// grown. Deterministic; const queries may run concurrently.
// Memory: a query runs between pair queries that sweep megabytes of samples, so it meets the
// hierarchy in main memory, where each level costs a dependent cache miss: 4 children per node
// halves the levels of a binary tree, a node is two cache lines (its children's boxes in floats
// rounded outwards, so pruning is conservative), and a leaf is four: its boxes, exact (doubles),
// and their indices.
// Both keep their 4 boxes axis by axis, so that a node's or a leaf's 4 tests are a few vector
// operations (in a scene of 1,000 boxes a query that finds 4 tests about 45 boxes).
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
    static constexpr std::uint8_t kInner = 0, kLeaf = 1, kNone = 255;  // Node::kind of a child
    static constexpr std::uint32_t kNoBox = 0xffffffffu;                 // Leaf::box of an unused slot
    struct alignas(64) Node {
        float min[3][4], max[3][4];  // per axis, per child: holds every box below it (rounded outwards)
        std::uint32_t first[4];      // the child's node (kInner) or leaf (kLeaf)
        std::uint8_t kind[4];        // kInner, kLeaf, kNone
    };
    struct alignas(64) Leaf {
        double min[3][4], max[3][4];  // per axis, per slot: the boxes (an unused slot: empty, +inf / -inf)
        std::uint32_t box[4];         // per slot: the box's index, or kNoBox
    };
    std::vector<Aabb> boxes_;
    std::vector<std::uint32_t> order_;  // box indices, leaves' ranges (building only)
    std::vector<Node> nodes_;
    std::vector<Leaf> leaves_;

    std::uint32_t split(std::uint32_t begin, std::uint32_t end);
    std::uint32_t build(std::uint32_t begin, std::uint32_t end);
};

// Squared distance from `p` to the closed box `b` (0 inside).
double squared_distance(const Aabb& b, const Vec3d& p);

}  // namespace hp::scene
