#pragma once
// A small query scene shared by session_test.cpp and tests/alloc/query_alloc.cpp: a static ball
// sampled exactly on a grid, a moving sphere of points with its tree, poses around the ball, and
// both as files (a double-precision distance field and a tree file, so they load back exactly).
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <random>
#include <vector>

#include "formats/shell.hpp"
#include "formats/vdb.hpp"
#include "contact/query.hpp"
#include "../core/sampled_field.hpp"
#include "../core/point_object.hpp"

namespace hp_test {

struct BallScene {
    // Static object: a ball of radius 0.5 at the origin over [-1, 1]^3, voxel 0.04.
    static double ball(hp::Vec3d p) { return 0.5 - hp::length(p); }

    hp::GridSpec grid;
    hp::DistanceSampler field;
    std::vector<hp::Vec3d> points, normals;  // 2000 points on a sphere of radius 0.2, inward normals
    hp::PointSphereTree tree;
    std::vector<hp::Pose> poses;  // centre 0.55 to 0.8 from the origin (touching below 0.7)

    BallScene() {
        grid = hp::test::cube_grid(-1, 1, 0.04);  // 50^3 voxels
        field = hp::test::sampled(grid, ball);
        std::mt19937 rng(7);
        std::normal_distribution<double> gauss;
        hp::test::PointObject shell = hp::test::sphere_shell(rng, gauss, 2000, 0.2);
        points = std::move(shell.points), normals = std::move(shell.normals), tree = std::move(shell.tree);
        std::uniform_real_distribution<double> dist(0.55, 0.8);
        for (int i = 0; i < 64; ++i) {
            hp::Vec3d d = hp::normalized(hp::Vec3d{gauss(rng), gauss(rng), gauss(rng)});
            poses.push_back({d * dist(rng), {gauss(rng), gauss(rng), gauss(rng), gauss(rng)}});
        }
    }
    hp::MovingObject view() const { return {points, normals, &tree}; }

    void write_field(const std::filesystem::path& path) const {
        const hp::GridSpec& g = grid;
        hp::vdb::write(path, g,
                       {{"distance", hp::vdb::ValueType::float64,
                         [&](int z, void* out) {
                             double* o = static_cast<double*>(out);
                             for (int j = 0; j < g.dims[1]; ++j)
                                 for (int i = 0; i < g.dims[0]; ++i) o[j * g.dims[0] + i] = ball(g.center(i, j, z));
                         },
                         -1}},
                       {{"kind", "distance"}, {"encoding", "double"}}, "hapticprep test");
    }
    // `with_tree` false writes a plain pointshell.
    void write_moving(const std::filesystem::path& path, const hp::PointSphereTree* with_tree) const {
        hp::Pointshell shell{points, normals, std::vector<std::uint32_t>(points.size(), 0)};
        hp::write_shell_file(path, {{"test", "ball scene"}}, shell, with_tree);
    }
};

}  // namespace hp_test
