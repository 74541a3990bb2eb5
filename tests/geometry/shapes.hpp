#pragma once
// Small meshes built in code for the geometry tests (outward-wound, counter-clockwise from outside).
#include <cmath>
#include <numbers>
#include <random>

#include "mesh/mesh.hpp"

namespace hp::test {

// Unit sphere by latitude/longitude: `rings` bands from pole to pole, `segments` around. With
// `hemisphere`, only the bands with z >= 0 (an open cap whose rim is the equator polygon).
inline TriMesh uv_sphere(int rings, int segments, bool hemisphere = false) {
    TriMesh m;
    const double pi = std::numbers::pi;
    m.vertices.push_back({0, 0, 1});  // north pole
    const int last_ring = hemisphere ? rings / 2 : rings - 1;
    for (int r = 1; r <= last_ring; ++r) {
        const double theta = pi * r / rings;
        for (int s = 0; s < segments; ++s) {
            const double phi = 2 * pi * s / segments;
            m.vertices.push_back({std::sin(theta) * std::cos(phi), std::sin(theta) * std::sin(phi), std::cos(theta)});
        }
    }
    auto ring = [&](int r, int s) { return static_cast<std::uint32_t>(1 + (r - 1) * segments + (s % segments)); };
    for (int s = 0; s < segments; ++s) m.triangles.push_back({0, ring(1, s), ring(1, s + 1)});
    for (int r = 1; r < last_ring; ++r)
        for (int s = 0; s < segments; ++s) {
            m.triangles.push_back({ring(r, s), ring(r + 1, s), ring(r + 1, s + 1)});
            m.triangles.push_back({ring(r, s), ring(r + 1, s + 1), ring(r, s + 1)});
        }
    if (!hemisphere) {
        const auto south = static_cast<std::uint32_t>(m.vertices.size());
        m.vertices.push_back({0, 0, -1});
        for (int s = 0; s < segments; ++s) m.triangles.push_back({ring(last_ring, s), south, ring(last_ring, s + 1)});
    }
    return m;
}

// `n` random small triangles in [-1, 1]^3 (a soup: no shared vertices, no orientation).
inline TriMesh random_soup(int n, unsigned seed, double size = 0.1) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-1, 1);
    TriMesh m;
    for (int t = 0; t < n; ++t) {
        const Vec3d c{u(rng), u(rng), u(rng)};
        for (int k = 0; k < 3; ++k) m.vertices.push_back(c + Vec3d{u(rng), u(rng), u(rng)} * size);
        m.triangles.push_back({static_cast<std::uint32_t>(3 * t), static_cast<std::uint32_t>(3 * t + 1), static_cast<std::uint32_t>(3 * t + 2)});
    }
    return m;
}

}  // namespace hp::test
