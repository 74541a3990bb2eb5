#include "scene/broad_phase.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

#include "math/float_round.hpp"

namespace hp::scene {

double squared_distance(const Aabb& b, const Vec3d& p) {
    double d2 = 0;
    for (int a = 0; a < 3; ++a) {
        const double below = b.min[a] - p[a], above = p[a] - b.max[a];
        const double d = std::max({below, above, 0.0});
        d2 += d * d;
    }
    return d2;
}

BroadPhase::BroadPhase(const std::vector<Aabb>& boxes) : boxes_(boxes) {
    for (std::uint32_t i = 0; i < boxes_.size(); ++i)
        if (!boxes_[i].empty()) order_.push_back(i);
    if (order_.empty()) return;
    nodes_.reserve(order_.size() / 2 + 1);
    build(0, static_cast<std::uint32_t>(order_.size()));
    leaf_boxes_.reserve(order_.size());
    for (std::uint32_t i : order_) leaf_boxes_.push_back(boxes_[i]);
}

// Orders [begin, end) of `order_` about its median on the longest axis of the boxes' centres and
// returns the median's position.
std::uint32_t BroadPhase::split(std::uint32_t begin, std::uint32_t end) {
    Aabb centers;
    for (std::uint32_t i = begin; i < end; ++i) centers.extend(boxes_[order_[i]].center());
    const Vec3d size = centers.size();
    const int axis = size.x >= size.y && size.x >= size.z ? 0 : (size.y >= size.z ? 1 : 2);
    const std::uint32_t mid = begin + (end - begin) / 2;
    // Ties by index: the same tree on every run.
    std::nth_element(order_.begin() + begin, order_.begin() + mid, order_.begin() + end, [&](std::uint32_t a, std::uint32_t b) {
        const double ca = boxes_[a].center()[axis], cb = boxes_[b].center()[axis];
        return ca < cb || (ca == cb && a < b);
    });
    return mid;
}

std::uint32_t BroadPhase::build(std::uint32_t begin, std::uint32_t end) {
    constexpr std::uint32_t kLeaf = 4;  // boxes per leaf at most
    const auto id = static_cast<std::uint32_t>(nodes_.size());
    nodes_.emplace_back();
    // Up to 4 ranges: the halves, each halved again when it is more than a leaf.
    std::uint32_t bounds[5] = {begin, end, end, end, end};
    int ranges = 1;
    if (end - begin > kLeaf) {
        const std::uint32_t mid = split(begin, end);
        ranges = 0;
        for (const auto& [b, e] : {std::pair{begin, mid}, std::pair{mid, end}}) {
            bounds[ranges++] = b;
            if (e - b > kLeaf) bounds[ranges++] = split(b, e);
        }
        bounds[ranges] = end;
    }
    for (int c = 0; c < 4; ++c) {
        Node& n = nodes_[id];  // (re-read: building a child grows nodes_)
        n.count[c] = kNone;
        n.first[c] = 0;
        for (int a = 0; a < 3; ++a) n.min[a][c] = n.max[a][c] = 0;
        if (c >= ranges) continue;
        const std::uint32_t b = bounds[c], e = bounds[c + 1];
        Aabb box;
        for (std::uint32_t i = b; i < e; ++i) box.extend(boxes_[order_[i]]);
        for (int a = 0; a < 3; ++a) {
            n.min[a][c] = float_below(box.min[a]);
            n.max[a][c] = float_above(box.max[a]);
        }
        if (e - b <= kLeaf) {
            n.first[c] = b;
            n.count[c] = static_cast<std::uint8_t>(e - b);
        } else {
            n.count[c] = kInner;
            const std::uint32_t child = build(b, e);
            nodes_[id].first[c] = child;
        }
    }
    return id;
}

void BroadPhase::query(const Vec3d& center, double radius, std::vector<std::uint32_t>& out) const {
    out.clear();
    if (nodes_.empty()) return;
    const double r2 = radius * radius;
    std::uint32_t stack[64];
    int top = 0;
    stack[top++] = 0;
    while (top > 0) {
        const Node& n = nodes_[stack[--top]];
        for (int c = 0; c < 4; ++c) {
            if (n.count[c] == kNone) continue;
            // The distance to a box that holds the child's boxes: never more than to any of them
            // (the float bounds are exact as doubles, and rounding is monotone).
            double d2 = 0;
            for (int a = 0; a < 3; ++a) {
                const double d = std::max({static_cast<double>(n.min[a][c]) - center[a], center[a] - static_cast<double>(n.max[a][c]), 0.0});
                d2 += d * d;
            }
            if (d2 > r2) continue;
            if (n.count[c] == kInner) {
                assert(top < 64);  // 3 siblings pending per level at most, and log4(n) + 1 levels
                __builtin_prefetch(&nodes_[n.first[c]]);
                __builtin_prefetch(reinterpret_cast<const char*>(&nodes_[n.first[c]]) + 64);
                stack[top++] = n.first[c];
                continue;
            }
            for (std::uint32_t i = n.first[c]; i < n.first[c] + n.count[c]; ++i)
                if (squared_distance(leaf_boxes_[i], center) <= r2) out.push_back(order_[i]);
        }
    }
    std::sort(out.begin(), out.end());
}

void BroadPhase::query_brute(const Vec3d& center, double radius, std::vector<std::uint32_t>& out) const {
    out.clear();
    for (std::uint32_t i = 0; i < boxes_.size(); ++i)
        if (!boxes_[i].empty() && squared_distance(boxes_[i], center) <= radius * radius) out.push_back(i);
}

}  // namespace hp::scene
