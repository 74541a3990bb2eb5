#include "geometry/bvh.hpp"

#include <algorithm>

namespace hp {

namespace {
double box_distance2(const Aabb& b, const Vec3d& p) {
    double d = 0;
    for (int a = 0; a < 3; ++a) {
        double v = p[a] < b.min[a] ? b.min[a] - p[a] : (p[a] > b.max[a] ? p[a] - b.max[a] : 0.0);
        d += v * v;
    }
    return d;
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
    nodes_.reserve(2 * n / 2 + 1);
    struct Task {
        std::uint32_t node, begin, end;
    };
    nodes_.push_back({});
    std::vector<Task> stack{{0, 0, static_cast<std::uint32_t>(n)}};
    while (!stack.empty()) {
        Task task = stack.back();
        stack.pop_back();
        Aabb box, cbox;
        for (std::uint32_t i = task.begin; i < task.end; ++i) {
            box.extend(tbox[order_[i]]);
            cbox.extend(centroid[order_[i]]);
        }
        nodes_[task.node].box = box;
        if (task.end - task.begin <= 4) {
            nodes_[task.node].first = task.begin;
            nodes_[task.node].count = task.end - task.begin;
            continue;
        }
        Vec3d size = cbox.size();
        int axis = size.x >= size.y && size.x >= size.z ? 0 : (size.y >= size.z ? 1 : 2);
        std::uint32_t mid = task.begin + (task.end - task.begin) / 2;
        std::nth_element(order_.begin() + task.begin, order_.begin() + mid, order_.begin() + task.end,
                         [&](std::uint32_t x, std::uint32_t y) {
                             double cx = centroid[x][axis], cy = centroid[y][axis];
                             return cx < cy || (cx == cy && x < y);
                         });
        std::uint32_t left = static_cast<std::uint32_t>(nodes_.size());
        nodes_.push_back({});
        nodes_.push_back({});
        nodes_[task.node].first = left;
        nodes_[task.node].count = 0;
        stack.push_back({left + 1, mid, task.end});
        stack.push_back({left, task.begin, mid});
    }
}

MeshHit TriangleBvh::closest(const Vec3d& p, double max_distance2) const {
    MeshHit best;
    double best_d2 = max_distance2;
    if (nodes_.empty()) return best;
    std::uint32_t stack[128];
    int top = 0;
    stack[top++] = 0;
    while (top > 0) {
        const Node& node = nodes_[stack[--top]];
        if (box_distance2(node.box, p) >= best_d2 && best.triangle != UINT32_MAX) continue;
        if (box_distance2(node.box, p) > best_d2) continue;
        if (node.count > 0) {
            for (std::uint32_t i = node.first; i < node.first + node.count; ++i) {
                const auto& t = mesh_.triangles[order_[i]];
                ClosestPoint c = closest_point_on_triangle(p, mesh_.vertices[t[0]], mesh_.vertices[t[1]], mesh_.vertices[t[2]]);
                if (c.distance2 < best_d2 || (best.triangle == UINT32_MAX && c.distance2 <= best_d2)) {
                    best_d2 = c.distance2;
                    best.triangle = order_[i];
                    best.closest = c;
                }
            }
            continue;
        }
        std::uint32_t l = node.first, r = node.first + 1;
        double dl = box_distance2(nodes_[l].box, p), dr = box_distance2(nodes_[r].box, p);
        // Push the farther child first so the nearer one is searched first.
        if (dl <= dr) {
            stack[top++] = r;
            stack[top++] = l;
        } else {
            stack[top++] = l;
            stack[top++] = r;
        }
    }
    return best;
}

}  // namespace hp
