#include "scene/broad_phase.hpp"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

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
    nodes_.reserve(order_.size() / 8 + 1);
    leaves_.reserve(order_.size() / 2 + 1);
    build(0, static_cast<std::uint32_t>(order_.size()));
    order_ = {};
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
    constexpr std::uint32_t kLeafBoxes = 4;  // boxes per leaf at most
    const auto id = static_cast<std::uint32_t>(nodes_.size());
    nodes_.emplace_back();
    // Up to 4 ranges: the halves, each halved again when it is more than a leaf.
    std::uint32_t bounds[5] = {begin, end, end, end, end};
    int ranges = 1;
    if (end - begin > kLeafBoxes) {
        const std::uint32_t mid = split(begin, end);
        ranges = 0;
        for (const auto& [b, e] : {std::pair{begin, mid}, std::pair{mid, end}}) {
            bounds[ranges++] = b;
            if (e - b > kLeafBoxes) bounds[ranges++] = split(b, e);
        }
        bounds[ranges] = end;
    }
    for (int c = 0; c < 4; ++c) {
        Node& n = nodes_[id];  // (re-read: building a child grows nodes_)
        n.kind[c] = kNone;
        n.first[c] = 0;
        for (int a = 0; a < 3; ++a) {  // an absent child: an empty box, which no ball meets
            n.min[a][c] = std::numeric_limits<float>::infinity();
            n.max[a][c] = -std::numeric_limits<float>::infinity();
        }
        if (c >= ranges) continue;
        const std::uint32_t b = bounds[c], e = bounds[c + 1];
        Aabb box;
        for (std::uint32_t i = b; i < e; ++i) box.extend(boxes_[order_[i]]);
        for (int a = 0; a < 3; ++a) {
            n.min[a][c] = float_below(box.min[a]);
            n.max[a][c] = float_above(box.max[a]);
        }
        if (e - b <= kLeafBoxes) {
            n.first[c] = static_cast<std::uint32_t>(leaves_.size());
            n.kind[c] = kLeaf;
            Leaf& leaf = leaves_.emplace_back();
            for (std::uint32_t k = 0; k < 4; ++k) {
                const bool used = b + k < e;
                leaf.box[k] = used ? order_[b + k] : kNoBox;
                for (int a = 0; a < 3; ++a) {
                    leaf.min[a][k] = used ? boxes_[order_[b + k]].min[a] : std::numeric_limits<double>::infinity();
                    leaf.max[a][k] = used ? boxes_[order_[b + k]].max[a] : -std::numeric_limits<double>::infinity();
                }
            }
        } else {
            n.kind[c] = kInner;
            const std::uint32_t child = build(b, e);
            nodes_[id].first[c] = child;
        }
    }
    return id;
}

namespace {

// Two lanes of doubles (one packed SSE2 operation on x86-64); the 4 children or slots are two pairs.
using Pair = double __attribute__((vector_size(16)));
using PairMask = long long __attribute__((vector_size(16)));
using FloatQuad = float __attribute__((vector_size(16)));
using FloatPair = float __attribute__((vector_size(8)));

// Bit c set when the squared distance from p to box c of 4 (given axis by axis, lanes lo / hi per
// axis) is at most r2. Per lane, in the order and with the roundings of squared_distance, so that
// both decide alike.
inline unsigned within(const Pair (&lo)[3][2], const Pair (&hi)[3][2], const Vec3d& p, double r2) {
    const Pair zero = {0, 0}, r = {r2, r2};
    Pair d2[2] = {zero, zero};
    for (int a = 0; a < 3; ++a) {
        const Pair pa = {p[a], p[a]};
        for (int h = 0; h < 2; ++h) {
            const Pair below = lo[a][h] - pa, above = pa - hi[a][h];
            Pair d = below > above ? below : above;
            d = d < zero ? zero : d;  // (a NaN stays NaN and fails the test, as in squared_distance)
            d2[h] += d * d;
        }
    }
    const PairMask m0 = d2[0] <= r, m1 = d2[1] <= r;
    return (m0[0] ? 1u : 0u) | (m0[1] ? 2u : 0u) | (m1[0] ? 4u : 0u) | (m1[1] ? 8u : 0u);
}

inline void load(const double (&v)[4], Pair (&out)[2]) { std::memcpy(out, v, sizeof out); }
inline void load(const float (&v)[4], Pair (&out)[2]) {
    FloatQuad q;
    std::memcpy(&q, v, sizeof q);
    out[0] = __builtin_convertvector(FloatPair{q[0], q[1]}, Pair);
    out[1] = __builtin_convertvector(FloatPair{q[2], q[3]}, Pair);
}

template <class Box>
unsigned within(const Box& box, const Vec3d& p, double r2) {
    Pair lo[3][2], hi[3][2];
    for (int a = 0; a < 3; ++a) {
        load(box.min[a], lo[a]);
        load(box.max[a], hi[a]);
    }
    return within(lo, hi, p, r2);
}

}  // namespace

void BroadPhase::query(const Vec3d& center, double radius, std::vector<std::uint32_t>& out) const {
    out.clear();
    if (nodes_.empty()) return;
    const double r2 = radius * radius;
    std::uint32_t stack[64];
    int top = 0;
    stack[top++] = 0;
    while (top > 0) {
        const Node& n = nodes_[stack[--top]];
        // The distance to a box that holds the child's boxes: never more than to any of them (the
        // float bounds are exact as doubles, and rounding is monotone).
        for (unsigned hits = within(n, center, r2); hits != 0; hits &= hits - 1) {
            const int c = std::countr_zero(hits);
            if (n.kind[c] == kInner) {
                assert(top < 64);  // 3 siblings pending per level at most, and log4(n) + 1 levels
                __builtin_prefetch(&nodes_[n.first[c]]);
                __builtin_prefetch(reinterpret_cast<const char*>(&nodes_[n.first[c]]) + 64);
                stack[top++] = n.first[c];
            } else if (n.kind[c] == kLeaf) {
                const Leaf& leaf = leaves_[n.first[c]];
                for (unsigned in = within(leaf, center, r2); in != 0; in &= in - 1) out.push_back(leaf.box[std::countr_zero(in)]);
            }
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
