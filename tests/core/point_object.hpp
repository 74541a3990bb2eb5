#pragma once
// Moving objects for query tests: points with normals and their point-sphere tree, and the one
// most tests use, points on a sphere about the origin with inward normals.
#include <cstddef>
#include <random>
#include <vector>

#include "contact/query.hpp"

namespace hp::test {

struct PointObject {
    std::vector<Vec3d> points, normals;
    PointSphereTree tree;
    MovingObject view() const { return {points, normals, &tree}; }
};

// n points at radius r, in directions drawn with `gauss` from `rng` (x, y, z, point after point);
// the caller may go on drawing from both. The tree with the default options.
template <class Rng>
PointObject sphere_shell(Rng& rng, std::normal_distribution<double>& gauss, std::size_t n, double r) {
    PointObject s;
    for (std::size_t i = 0; i < n; ++i) {
        const Vec3d d = normalized(Vec3d{gauss(rng), gauss(rng), gauss(rng)});
        s.points.push_back(d * r);
        s.normals.push_back(-d);
    }
    s.tree = build_point_sphere_tree(s.points, {});
    return s;
}

}  // namespace hp::test
