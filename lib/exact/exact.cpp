#include "exact/exact.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <unordered_map>

#include "exact/predicates.hpp"
#include "exact/tree_walk.hpp"
#include "geometry/closest_point.hpp"

namespace hp::exact {

using detail::triangle_box;

RigidPose pose_from_quaternion(const std::array<double, 4>& q, const Vec3d& position) {
    const double n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    const double w = q[0] / n, x = q[1] / n, y = q[2] / n, z = q[3] / n;
    RigidPose p;
    p.rows[0] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)};
    p.rows[1] = {2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)};
    p.rows[2] = {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)};
    p.t = position;
    return p;
}

Vec3d rotate_about(const Vec3d& p, const Vec3d& origin, const Vec3d& axis, double angle) {
    const Vec3d v = p - origin;
    const Vec3d par = axis * dot(v, axis), perp = v - par;
    return origin + par + perp * std::cos(angle) + cross(axis, v) * std::sin(angle);
}

const char* feature_name(Feature f) {
    switch (f) {
    case Feature::none: return "none";
    case Feature::vertex_face: return "vertex-face";
    case Feature::face_vertex: return "face-vertex";
    case Feature::edge_edge: return "edge-edge";
    }
    return "?";
}

namespace {

struct EdgeBuild {
    std::vector<ExactMesh::Edge> edges;
    std::vector<std::array<std::uint32_t, 3>> tri_edges;
    std::vector<std::uint8_t> vertex_internal;
    EdgeStats stats;
};

Vec3d unit_normal(const TriMesh& m, std::uint32_t t) {
    const auto& f = m.triangles[t];
    return normalized(cross(m.vertices[f[1]] - m.vertices[f[0]], m.vertices[f[2]] - m.vertices[f[0]]));
}

EdgeBuild build_edges(const TriMesh& mesh) {
    EdgeBuild out;
    struct Use {
        std::uint32_t tri;
        int k;  // the triangle's edge k: corners k -> k+1
        bool forward;  // traverses v0 -> v1 (v0 < v1)
    };
    std::unordered_map<std::uint64_t, std::uint32_t> index;
    std::vector<std::vector<Use>> uses;
    out.tri_edges.resize(mesh.triangles.size());
    for (std::uint32_t t = 0; t < mesh.triangles.size(); ++t)
        for (int k = 0; k < 3; ++k) {
            const std::uint32_t a = mesh.triangles[t][static_cast<std::size_t>(k)], b = mesh.triangles[t][static_cast<std::size_t>((k + 1) % 3)];
            const std::uint32_t lo = std::min(a, b), hi = std::max(a, b);
            const std::uint64_t key = (static_cast<std::uint64_t>(lo) << 32) | hi;
            auto [it, added] = index.try_emplace(key, static_cast<std::uint32_t>(out.edges.size()));
            if (added) {
                out.edges.push_back({lo, hi, false});
                uses.emplace_back();
            }
            uses[it->second].push_back({t, k, a == lo});
            out.tri_edges[t][static_cast<std::size_t>(k)] = it->second;
        }
    out.stats.edges = out.edges.size();
    // Internal: exactly two triangles traversing the edge in opposite directions whose planes face
    // each other (the far corner of one lies in front of the other's plane) or coincide.
    for (std::size_t e = 0; e < out.edges.size(); ++e) {
        const auto& u = uses[e];
        if (u.size() != 2 || u[0].forward == u[1].forward) continue;
        const int kind = internal_edge_kind(mesh, u[0].tri, u[1].tri, out.edges[e].v0, out.edges[e].v1);
        out.edges[e].internal = kind > 0;
        out.stats.concave += kind == 2;
        out.stats.flat += kind == 1;
    }
    out.stats.internal = out.stats.concave + out.stats.flat;
    // Vertices whose edges are all internal.
    std::vector<std::uint8_t> any_edge(mesh.vertices.size(), 0), external(mesh.vertices.size(), 0);
    for (const auto& e : out.edges) {
        any_edge[e.v0] = any_edge[e.v1] = 1;
        if (!e.internal) external[e.v0] = external[e.v1] = 1;
    }
    out.vertex_internal.resize(mesh.vertices.size(), 0);
    for (std::size_t v = 0; v < mesh.vertices.size(); ++v) {
        out.vertex_internal[v] = any_edge[v] && !external[v];
        out.stats.internal_vertices += out.vertex_internal[v];
    }
    return out;
}

}  // namespace

EdgeStats edge_stats(const TriMesh& mesh) { return build_edges(mesh).stats; }

ExactMesh::ExactMesh(const TriMesh& mesh) : mesh_(mesh) {
    EdgeBuild eb = build_edges(mesh_);
    edges_ = std::move(eb.edges);
    tri_edges_ = std::move(eb.tri_edges);
    vertex_internal_ = std::move(eb.vertex_internal);
    stats_ = eb.stats;
    center_ = mesh_.bounds().center();
    // Feature ownership: each vertex and edge is tested with the first triangle that holds it.
    const std::size_t nt = mesh_.triangles.size();
    owned_.assign(nt, 0);
    std::vector<std::uint8_t> vseen(mesh_.vertices.size(), 0), eseen(edges_.size(), 0);
    normals_.resize(nt);
    for (std::uint32_t t = 0; t < nt; ++t) {
        normals_[t] = unit_normal(mesh_, t);
        for (int k = 0; k < 3; ++k) {
            const std::uint32_t v = mesh_.triangles[t][static_cast<std::size_t>(k)], e = tri_edges_[t][static_cast<std::size_t>(k)];
            if (!vseen[v]) {
                vseen[v] = 1;
                owned_[t] |= static_cast<std::uint8_t>(1u << k);
            }
            if (!eseen[e]) {
                eseen[e] = 1;
                owned_[t] |= static_cast<std::uint8_t>(8u << k);
            }
        }
    }
    // AABB tree: median split of the centroids along the longest axis of their box, leaves of <= 4.
    order_.resize(nt);
    for (std::uint32_t t = 0; t < nt; ++t) order_[t] = t;
    std::vector<Vec3d> centroid(nt);
    std::vector<Aabb> boxes(nt);
    for (std::uint32_t t = 0; t < nt; ++t) {
        const auto& f = mesh_.triangles[t];
        boxes[t] = triangle_box(mesh_.vertices[f[0]], mesh_.vertices[f[1]], mesh_.vertices[f[2]]);
        centroid[t] = boxes[t].center();
    }
    if (nt == 0) return;
    nodes_.reserve(2 * nt);
    nodes_.push_back({});
    struct Task {
        std::uint32_t node, begin, end;
    };
    std::vector<Task> tasks{{0, 0, static_cast<std::uint32_t>(nt)}};
    while (!tasks.empty()) {
        const Task task = tasks.back();
        tasks.pop_back();
        Aabb box, cbox;
        for (std::uint32_t i = task.begin; i < task.end; ++i) {
            box.extend(boxes[order_[i]]);
            cbox.extend(centroid[order_[i]]);
        }
        nodes_[task.node].box = box;
        const std::uint32_t n = task.end - task.begin;
        if (n <= 4) {
            nodes_[task.node].first = task.begin;
            nodes_[task.node].count = n;
            continue;
        }
        const Vec3d size = cbox.size();
        const int axis = size.x >= size.y && size.x >= size.z ? 0 : (size.y >= size.z ? 1 : 2);
        const std::uint32_t mid = task.begin + n / 2;
        std::nth_element(order_.begin() + task.begin, order_.begin() + mid, order_.begin() + task.end,
                         [&](std::uint32_t a, std::uint32_t b) {
                             const double ca = centroid[a][axis], cb = centroid[b][axis];
                             return ca < cb || (ca == cb && a < b);
                         });
        const auto left = static_cast<std::uint32_t>(nodes_.size());
        nodes_.push_back({});
        nodes_.push_back({});
        nodes_[task.node].first = left;
        nodes_[task.node].count = 0;
        tasks.push_back({left, task.begin, mid});
        tasks.push_back({left + 1, mid, task.end});
    }
}

}  // namespace hp::exact
