#include "geometry/bvh.hpp"

#include <algorithm>

namespace hp {

namespace {
constexpr std::uint32_t kLeafSize = 4;
constexpr int kBins = 16;
constexpr int kSahDepth = 30;  // deeper: median splits, so depth <= 30 + log2(2^32 / 4) < kMaxDepth

double half_area(const Aabb& b) {
    if (b.empty()) return 0;
    const Vec3d s = b.size();
    return s.x * s.y + s.y * s.z + s.z * s.x;
}
}  // namespace

TriangleBvh::TriangleBvh(const TriMesh& mesh) : mesh_(mesh) {
    const std::size_t n = mesh.triangles.size();
    order_.resize(n);
    std::vector<Vec3d> centroid(n);
    std::vector<Aabb> tbox(n);
    for (std::size_t t = 0; t < n; ++t) {
        order_[t] = static_cast<std::uint32_t>(t);
        for (std::uint32_t v : mesh.triangles[t]) tbox[t].extend(mesh.vertices[v]);
        centroid[t] = tbox[t].center();
    }
    if (n == 0) return;
    nodes_.reserve(2 * n);
    struct Task {
        std::uint32_t node, begin, end;
        int depth;
    };
    nodes_.push_back({});
    std::vector<Task> stack{{0, 0, static_cast<std::uint32_t>(n), 1}};
    while (!stack.empty()) {
        const Task task = stack.back();
        stack.pop_back();
        depth_ = std::max(depth_, task.depth);
        Aabb box, cbox;
        for (std::uint32_t i = task.begin; i < task.end; ++i) {
            box.extend(tbox[order_[i]]);
            cbox.extend(centroid[order_[i]]);
        }
        nodes_[task.node].box = box;
        const std::uint32_t count = task.end - task.begin;
        if (count <= kLeafSize) {
            nodes_[task.node].first = task.begin;
            nodes_[task.node].count = count;
            continue;
        }
        const Vec3d extent = cbox.size();
        std::uint32_t mid = 0;
        if (task.depth < kSahDepth && std::max({extent.x, extent.y, extent.z}) > 0) {
            // Binned SAH: cost of a split after bin b = area(left) * n(left) + area(right) * n(right).
            double best_cost = std::numeric_limits<double>::infinity();
            int best_axis = -1, best_bin = 0;
            for (int axis = 0; axis < 3; ++axis) {
                if (!(extent[axis] > 0)) continue;
                const double scale = kBins / extent[axis];
                Aabb bin_box[kBins];
                std::uint32_t bin_count[kBins] = {};
                for (std::uint32_t i = task.begin; i < task.end; ++i) {
                    const std::uint32_t t = order_[i];
                    const int b = std::min(kBins - 1, static_cast<int>((centroid[t][axis] - cbox.min[axis]) * scale));
                    ++bin_count[b];
                    bin_box[b].extend(tbox[t]);
                }
                double right_cost[kBins] = {};
                Aabb acc;
                std::uint32_t acc_n = 0;
                for (int b = kBins - 1; b > 0; --b) {
                    acc.extend(bin_box[b]);
                    acc_n += bin_count[b];
                    right_cost[b] = half_area(acc) * acc_n;
                }
                acc = Aabb{};
                acc_n = 0;
                for (int b = 0; b + 1 < kBins; ++b) {
                    acc.extend(bin_box[b]);
                    acc_n += bin_count[b];
                    if (acc_n == 0 || acc_n == count) continue;
                    const double cost = half_area(acc) * acc_n + right_cost[b + 1];
                    if (cost < best_cost) best_cost = cost, best_axis = axis, best_bin = b;
                }
            }
            if (best_axis >= 0) {
                const double scale = kBins / extent[best_axis];
                auto* split = std::partition(order_.data() + task.begin, order_.data() + task.end, [&](std::uint32_t t) {
                    return std::min(kBins - 1, static_cast<int>((centroid[t][best_axis] - cbox.min[best_axis]) * scale)) <= best_bin;
                });
                mid = static_cast<std::uint32_t>(split - order_.data());
            }
        }
        if (mid <= task.begin || mid >= task.end) {
            // Median split on the longest centroid axis, total order (centroid, index).
            const int axis = extent.x >= extent.y && extent.x >= extent.z ? 0 : (extent.y >= extent.z ? 1 : 2);
            mid = task.begin + count / 2;
            std::nth_element(order_.begin() + task.begin, order_.begin() + mid, order_.begin() + task.end,
                             [&](std::uint32_t x, std::uint32_t y) {
                                 const double cx = centroid[x][axis], cy = centroid[y][axis];
                                 return cx < cy || (cx == cy && x < y);
                             });
        }
        const auto left = static_cast<std::uint32_t>(nodes_.size());
        nodes_.push_back({});
        nodes_.push_back({});
        nodes_[task.node].first = left;
        nodes_[task.node].count = 0;
        stack.push_back({left + 1, mid, task.end, task.depth + 1});
        stack.push_back({left, task.begin, mid, task.depth + 1});
    }
    corners_.resize(n);
    for (std::size_t s = 0; s < n; ++s) {
        const auto& t = mesh.triangles[order_[s]];
        corners_[s] = {mesh.vertices[t[0]], mesh.vertices[t[1]], mesh.vertices[t[2]]};
    }
}

MeshHit TriangleBvh::closest(const Vec3d& p, double max_distance2) const {
    MeshHit best;
    if (nodes_.empty()) return best;
    double best_d2 = max_distance2;
    bool found = false;
    struct Entry {
        std::uint32_t node;
        double d2;
    };
    Entry stack[kMaxDepth + 2];
    int top = 0;
    stack[top++] = {0, box_distance2(nodes_[0].box, p)};
    while (top > 0) {
        const Entry e = stack[--top];
        if (e.d2 > best_d2 || (found && e.d2 >= best_d2)) continue;
        const Node& node = nodes_[e.node];
        if (node.leaf()) {
            for (std::uint32_t s = node.first; s < node.first + node.count; ++s) {
                const auto& c = corners_[s];
                const ClosestPoint cp = closest_point_on_triangle(p, c[0], c[1], c[2]);
                if (cp.distance2 < best_d2 || (!found && cp.distance2 <= best_d2)) {
                    best_d2 = cp.distance2;
                    best.triangle = order_[s];
                    best.closest = cp;
                    found = true;
                }
            }
            continue;
        }
        const std::uint32_t l = node.first, r = node.first + 1;
        const double dl = box_distance2(nodes_[l].box, p), dr = box_distance2(nodes_[r].box, p);
        // Push the farther child first so that the nearer one is searched first.
        if (dl <= dr) {
            stack[top++] = {r, dr};
            stack[top++] = {l, dl};
        } else {
            stack[top++] = {l, dl};
            stack[top++] = {r, dr};
        }
    }
    return best;
}

TriangleBvh::SlotRanges TriangleBvh::slot_ranges() const {
    // Children come after their parent in the node array, so a reverse sweep sees them first.
    SlotRanges r{std::vector<std::uint32_t>(nodes_.size()), std::vector<std::uint32_t>(nodes_.size())};
    for (std::size_t n = nodes_.size(); n-- > 0;) {
        if (nodes_[n].leaf()) {
            r.begin[n] = nodes_[n].first;
            r.end[n] = nodes_[n].first + nodes_[n].count;
        } else {
            r.begin[n] = r.begin[nodes_[n].first];
            r.end[n] = r.end[nodes_[n].first + 1];
        }
    }
    return r;
}

}  // namespace hp
