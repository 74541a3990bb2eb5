#include "geometry/pseudo_normals.hpp"

#include <algorithm>
#include <cmath>

namespace hp {

namespace {
double angle(const Vec3d& u, const Vec3d& v) { return std::atan2(length(cross(u, v)), dot(u, v)); }
}  // namespace

PseudoNormals::PseudoNormals(const TriMesh& mesh) : mesh_(mesh) {
    const std::size_t n = mesh.triangles.size();
    face_.resize(n);
    vertex_.assign(mesh.vertices.size(), Vec3d{});
    edge_.assign(3 * n, Vec3d{});
    for (std::size_t t = 0; t < n; ++t) {
        const auto& tri = mesh.triangles[t];
        const Vec3d v[3] = {mesh.vertices[tri[0]], mesh.vertices[tri[1]], mesh.vertices[tri[2]]};
        const Vec3d nrm = normalized(cross(v[1] - v[0], v[2] - v[0]));
        face_[t] = nrm;
        for (int i = 0; i < 3; ++i) vertex_[tri[static_cast<std::size_t>(i)]] += nrm * angle(v[(i + 1) % 3] - v[i], v[(i + 2) % 3] - v[i]);
    }
    for (Vec3d& nrm : vertex_) nrm = normalized(nrm);
    // Half-edges sorted by their undirected key; each run of equal keys is one edge.
    struct HalfEdge {
        std::uint64_t key;
        std::uint32_t slot;  // 3 * triangle + i
    };
    std::vector<HalfEdge> half(3 * n);
    for (std::size_t t = 0; t < n; ++t)
        for (std::size_t i = 0; i < 3; ++i) {
            const std::uint32_t a = mesh.triangles[t][i], b = mesh.triangles[t][(i + 1) % 3];
            half[3 * t + i] = {(static_cast<std::uint64_t>(std::min(a, b)) << 32) | std::max(a, b), static_cast<std::uint32_t>(3 * t + i)};
        }
    std::sort(half.begin(), half.end(), [](const HalfEdge& x, const HalfEdge& y) { return x.key < y.key || (x.key == y.key && x.slot < y.slot); });
    for (std::size_t lo = 0; lo < half.size();) {
        std::size_t hi = lo;
        Vec3d sum;
        while (hi < half.size() && half[hi].key == half[lo].key) sum += face_[half[hi++].slot / 3];
        const Vec3d nrm = normalized(sum);
        for (std::size_t k = lo; k < hi; ++k) edge_[half[k].slot] = nrm;
        lo = hi;
    }
}

Vec3d PseudoNormals::at(std::uint32_t triangle, const ClosestPoint& cp) const {
    switch (cp.type) {
    case FeatureType::face: return face_[triangle];
    case FeatureType::vertex: return vertex_[mesh_.triangles[triangle][static_cast<std::size_t>(cp.index)]];
    case FeatureType::edge: return edge(triangle, cp.index);
    }
    return face_[triangle];
}

}  // namespace hp
