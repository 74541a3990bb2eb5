#include "geometry/pseudo_normals.hpp"

#include <algorithm>
#include <cmath>

namespace hp {

namespace {
std::uint64_t edge_key(std::uint32_t a, std::uint32_t b) {
    return (static_cast<std::uint64_t>(std::min(a, b)) << 32) | std::max(a, b);
}
double angle(const Vec3d& u, const Vec3d& v) {
    return std::atan2(length(cross(u, v)), dot(u, v));
}
}  // namespace

PseudoNormals::PseudoNormals(const TriMesh& mesh) : mesh_(mesh) {
    face_.resize(mesh.triangles.size());
    vertex_.assign(mesh.vertices.size(), Vec3d{});
    edge_.reserve(mesh.triangles.size() * 2);
    for (std::size_t t = 0; t < mesh.triangles.size(); ++t) {
        const auto& tri = mesh.triangles[t];
        const Vec3d& a = mesh.vertices[tri[0]];
        const Vec3d& b = mesh.vertices[tri[1]];
        const Vec3d& c = mesh.vertices[tri[2]];
        Vec3d n = normalized(cross(b - a, c - a));
        face_[t] = n;
        const Vec3d* v[3] = {&a, &b, &c};
        for (int i = 0; i < 3; ++i) {
            const Vec3d& p = *v[i];
            const Vec3d& q = *v[(i + 1) % 3];
            const Vec3d& r = *v[(i + 2) % 3];
            vertex_[tri[static_cast<std::size_t>(i)]] += n * angle(q - p, r - p);
            edge_[edge_key(tri[static_cast<std::size_t>(i)], tri[static_cast<std::size_t>((i + 1) % 3)])] += n;
        }
    }
    for (Vec3d& n : vertex_) n = normalized(n);
    for (auto& [key, n] : edge_) n = normalized(n);
}

Vec3d PseudoNormals::at(std::uint32_t triangle, const ClosestPoint& cp) const {
    const auto& tri = mesh_.triangles[triangle];
    switch (cp.type) {
    case FeatureType::face: return face_[triangle];
    case FeatureType::vertex: return vertex_[tri[static_cast<std::size_t>(cp.index)]];
    case FeatureType::edge: {
        auto it = edge_.find(edge_key(tri[static_cast<std::size_t>(cp.index)], tri[static_cast<std::size_t>((cp.index + 1) % 3)]));
        return it != edge_.end() ? it->second : face_[triangle];
    }
    }
    return face_[triangle];
}

}  // namespace hp
