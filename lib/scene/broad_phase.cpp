#include "scene/broad_phase.hpp"

#include <algorithm>
#include <cassert>

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
    nodes_.reserve(2 * order_.size());
    build(0, static_cast<std::uint32_t>(order_.size()));
}

std::uint32_t BroadPhase::build(std::uint32_t begin, std::uint32_t end) {
    const auto id = static_cast<std::uint32_t>(nodes_.size());
    nodes_.push_back({});
    Aabb box, centers;
    for (std::uint32_t i = begin; i < end; ++i) {
        box.extend(boxes_[order_[i]]);
        centers.extend(boxes_[order_[i]].center());
    }
    nodes_[id].box = box;
    if (end - begin <= 2) {
        nodes_[id].first = begin;
        nodes_[id].count = end - begin;
        return id;
    }
    const Vec3d size = centers.size();
    const int axis = size.x >= size.y && size.x >= size.z ? 0 : (size.y >= size.z ? 1 : 2);
    const std::uint32_t mid = begin + (end - begin) / 2;
    // Ties by index: the same tree on every run.
    std::nth_element(order_.begin() + begin, order_.begin() + mid, order_.begin() + end, [&](std::uint32_t a, std::uint32_t b) {
        const double ca = boxes_[a].center()[axis], cb = boxes_[b].center()[axis];
        return ca < cb || (ca == cb && a < b);
    });
    build(begin, mid);
    nodes_[id].first = build(mid, end);
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
        if (squared_distance(n.box, center) > r2) continue;
        if (n.count > 0) {
            for (std::uint32_t i = n.first; i < n.first + n.count; ++i)
                if (squared_distance(boxes_[order_[i]], center) <= r2) out.push_back(order_[i]);
            continue;
        }
        assert(top + 2 <= 64);  // depth <= log2(n) + 1 with median splits
        const std::uint32_t self = static_cast<std::uint32_t>(&n - nodes_.data());
        stack[top++] = n.first;
        stack[top++] = self + 1;
    }
    std::sort(out.begin(), out.end());
}

void BroadPhase::query_brute(const Vec3d& center, double radius, std::vector<std::uint32_t>& out) const {
    out.clear();
    for (std::uint32_t i = 0; i < boxes_.size(); ++i)
        if (!boxes_[i].empty() && squared_distance(boxes_[i], center) <= radius * radius) out.push_back(i);
}

}  // namespace hp::scene
