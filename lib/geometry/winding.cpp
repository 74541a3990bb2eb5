#include "geometry/winding.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace hp {

namespace {
// Signed solid angle of triangle (a, b, c) seen from p, times 1/2 (Van Oosterom & Strackee).
inline double half_solid_angle(const Vec3d& pa, const Vec3d& pb, const Vec3d& pc, const Vec3d& p) {
    const Vec3d a = pa - p, b = pb - p, c = pc - p;
    const double la = length(a), lb = length(b), lc = length(c);
    const double det = dot(a, cross(b, c));
    const double den = la * lb * lc + dot(a, b) * lc + dot(b, c) * la + dot(c, a) * lb;
    return std::atan2(det, den);
}
}  // namespace

double winding_number(const TriMesh& mesh, const Vec3d& p) {
    double total = 0;
    for (const auto& t : mesh.triangles)
        total += 2 * half_solid_angle(mesh.vertices[t[0]], mesh.vertices[t[1]], mesh.vertices[t[2]], p);
    return total / (4 * std::numbers::pi);
}

WindingTree::WindingTree(const TriMesh& mesh, double beta) : mesh_(mesh), beta_(beta) {
    const std::size_t n = mesh.triangles.size();
    order_.resize(n);
    std::vector<Vec3d> centre(n), area(n);
    std::vector<double> weight(n);
    for (std::uint32_t t = 0; t < n; ++t) {
        order_[t] = t;
        const auto& tri = mesh.triangles[t];
        const Vec3d &a = mesh.vertices[tri[0]], &b = mesh.vertices[tri[1]], &c = mesh.vertices[tri[2]];
        centre[t] = (a + b + c) * (1.0 / 3.0);
        area[t] = cross(b - a, c - a) * 0.5;
        weight[t] = length(area[t]);
    }
    // Top-down median split on the longest axis of the centroid bounds; leaves of <= 8 triangles.
    struct Task {
        std::uint32_t node, begin, end;
    };
    nodes_.reserve(n > 0 ? 2 * n / 4 + 1 : 1);
    nodes_.emplace_back();
    std::vector<Task> stack{{0, 0, static_cast<std::uint32_t>(n)}};
    while (!stack.empty()) {
        const Task task = stack.back();
        stack.pop_back();
        Node node;
        double wsum = 0;
        Vec3d wc{0, 0, 0}, plain{0, 0, 0};
        Aabb box{centre[order_[task.begin]], centre[order_[task.begin]]};
        for (std::uint32_t i = task.begin; i < task.end; ++i) {
            const std::uint32_t t = order_[i];
            node.area = node.area + area[t];
            wc = wc + centre[t] * weight[t];
            plain = plain + centre[t];
            wsum += weight[t];
            box.extend(Aabb{centre[t], centre[t]});
        }
        const double count = static_cast<double>(task.end - task.begin);
        node.centroid = wsum > 0 ? wc * (1.0 / wsum) : plain * (1.0 / count);
        for (std::uint32_t i = task.begin; i < task.end; ++i) {
            const std::uint32_t t = order_[i];
            for (std::uint32_t v : mesh.triangles[t]) node.radius = std::max(node.radius, length(mesh.vertices[v] - node.centroid));
            const Vec3d delta = centre[t] - node.centroid;
            for (int a = 0; a < 3; ++a)
                for (int b = 0; b < 3; ++b) node.moment[a][b] += area[t][a] * delta[b];
        }
        if (task.end - task.begin <= 8) {
            node.first = task.begin;
            node.count = task.end - task.begin;
        } else {
            const Vec3d size = box.size();
            const int axis = size.x >= size.y && size.x >= size.z ? 0 : (size.y >= size.z ? 1 : 2);
            const std::uint32_t mid = task.begin + (task.end - task.begin) / 2;
            std::nth_element(order_.begin() + task.begin, order_.begin() + mid, order_.begin() + task.end,
                             [&](std::uint32_t x, std::uint32_t y) {
                                 return centre[x][axis] < centre[y][axis] ||
                                        (centre[x][axis] == centre[y][axis] && x < y);
                             });
            node.first = static_cast<std::uint32_t>(nodes_.size());
            node.count = 0;
            nodes_.emplace_back();
            nodes_.emplace_back();
            stack.push_back({node.first + 1, mid, task.end});
            stack.push_back({node.first, task.begin, mid});
        }
        nodes_[task.node] = node;
    }
}

double WindingTree::operator()(const Vec3d& p) const {
    if (order_.empty()) return 0;
    double total = 0;  // sum of solid angles / 2
    std::uint32_t stack[128];
    int top = 0;
    stack[top++] = 0;
    while (top > 0) {
        const Node& node = nodes_[stack[--top]];
        const Vec3d d = node.centroid - p;
        const double r2 = dot(d, d);
        if (r2 > beta_ * beta_ * node.radius * node.radius) {
            // Dipole kernel g(x) = (x - p) / |x - p|^3 at the centroid, plus its Jacobian
            // J = I / r^3 - 3 d d^T / r^5 contracted with the first moments.
            const double r = std::sqrt(r2), inv3 = 1 / (r2 * r), inv5 = inv3 / r2;
            double jc = (node.moment[0][0] + node.moment[1][1] + node.moment[2][2]) * inv3;
            for (int a = 0; a < 3; ++a)
                for (int b = 0; b < 3; ++b) jc -= 3 * d[a] * d[b] * node.moment[a][b] * inv5;
            total += 0.5 * (dot(node.area, d) * inv3 + jc);
        } else if (node.count > 0) {
            for (std::uint32_t i = node.first; i < node.first + node.count; ++i) {
                const auto& t = mesh_.triangles[order_[i]];
                total += half_solid_angle(mesh_.vertices[t[0]], mesh_.vertices[t[1]], mesh_.vertices[t[2]], p);
            }
        } else {
            stack[top++] = node.first + 1;
            stack[top++] = node.first;
        }
    }
    return total / (2 * std::numbers::pi);
}

bool inside_by_winding(const WindingTree& tree, const TriMesh& mesh, const Vec3d& p) {
    const double w = std::abs(tree(p));
    if (std::abs(w - 0.5) > kWindingTolerance) return w > 0.5;
    return std::abs(winding_number(mesh, p)) > 0.5;
}

}  // namespace hp
