// BrickNearest (the brick-by-brick nearest triangles of the band and of the dense exact band)
// against the BVH query, voxel by voxel: with BVH ties, the same triangle, the same squared
// distance bit for bit and the same closest point as TriangleBvh::closest; without, the smallest
// squared distance of a brute-force scan over every triangle, bit for bit. Meshes chosen for the
// cases the float bounds must not get wrong: many exact ties (a grid-aligned tessellated plane and
// box), slivers, collinear and zero-area triangles, long triangles far beyond the brick, and
// coordinates far from the origin.
#include "distance/brick_nearest.hpp"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>

#include <gtest/gtest.h>

#include "geometry/closest_point.hpp"

namespace {

std::uint32_t add_vertex(hp::TriMesh& m, const hp::Vec3d& v) {
    m.vertices.push_back(v);
    return static_cast<std::uint32_t>(m.vertices.size() - 1);
}

void add_triangle(hp::TriMesh& m, const hp::Vec3d& a, const hp::Vec3d& b, const hp::Vec3d& c) {
    m.triangles.push_back({add_vertex(m, a), add_vertex(m, b), add_vertex(m, c)});
}

// A plane z = z0 cut into n x n squares of side `step`, each split into two triangles; voxel
// centres of a grid of the same spacing sit at equal distance from several triangles.
hp::TriMesh tessellated_plane(int n, double step, double z0, const hp::Vec3d& shift) {
    hp::TriMesh m;
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
            const hp::Vec3d p00 = shift + hp::Vec3d{i * step, j * step, z0}, p10 = p00 + hp::Vec3d{step, 0, 0},
                            p01 = p00 + hp::Vec3d{0, step, 0}, p11 = p00 + hp::Vec3d{step, step, 0};
            add_triangle(m, p00, p10, p11);
            add_triangle(m, p00, p11, p01);
        }
    return m;
}

// Random triangles in a box of side `size` around `centre`: ordinary ones, slivers (a vertex
// 1e-6 to 1e-12 of the edge off the line), exactly collinear ones, ones with a repeated vertex,
// and long ones reaching far out.
hp::TriMesh soup(std::mt19937_64& rng, int count, double size, const hp::Vec3d& centre) {
    std::uniform_real_distribution<double> u(-0.5, 0.5);
    auto point = [&] { return centre + hp::Vec3d{u(rng), u(rng), u(rng)} * size; };
    hp::TriMesh m;
    for (int t = 0; t < count; ++t) {
        const hp::Vec3d a = point(), b = point();
        hp::Vec3d c = point();
        switch (t % 6) {
        case 1: c = a + (b - a) * (0.5 + u(rng)) + hp::Vec3d{u(rng), u(rng), u(rng)} * (size * std::pow(10.0, -6 - t % 7)); break;
        case 2: c = a + (b - a) * 0.25; break;        // collinear
        case 3: c = b; break;                         // a repeated vertex
        case 4: c = a + (c - a) * 40.0; break;        // long
        default: break;
        }
        add_triangle(m, a, b, c);
    }
    return m;
}

// Every voxel of `bricks` random blocks near the mesh (and a few voxels of a partial brick),
// against the BVH query and a brute-force scan.
void check(const hp::TriMesh& mesh, const hp::GridSpec& grid, int bricks, std::uint64_t seed) {
    const hp::TriangleBvh bvh(mesh);
    const hp::NearestIndex ties(bvh, grid, true), first(bvh, grid, false);
    hp::BrickNearest with_ties(ties), without(first);
    std::mt19937_64 rng(seed);
    std::size_t checked = 0;
    for (int n = 0; n < bricks; ++n) {
        const int x0 = static_cast<int>(rng() % static_cast<std::uint64_t>(grid.dims[0] / 8)) * 8;
        const int y0 = static_cast<int>(rng() % static_cast<std::uint64_t>(grid.dims[1] / 8)) * 8;
        const int z0 = static_cast<int>(rng() % static_cast<std::uint64_t>(grid.dims[2] / 8)) * 8;
        const bool partial = n % 4 == 3;  // some voxels only, in a scattered order
        for (hp::BrickNearest* b : {&with_ties, &without}) {
            b->begin(x0, y0, z0);
            for (int o = 0; o < 512; ++o) {
                const int v = partial ? (o * 37) % 512 : o;
                if (partial && (o % 3) != 0) continue;
                b->add(v & 7, (v >> 3) & 7, v >> 6);
            }
        }
        const auto& a = with_ties.run();
        const auto& b = without.run();
        ASSERT_EQ(a.size(), b.size());
        for (std::size_t i = 0; i < a.size(); ++i) {
            const int o = a[i].offset;
            const hp::Vec3d x = grid.center(x0 + (o & 7), y0 + ((o >> 3) & 7), z0 + (o >> 6));
            const hp::MeshHit q = bvh.closest(x);
            double brute = std::numeric_limits<double>::infinity();
            for (const auto& t : mesh.triangles)
                brute = std::min(brute, hp::closest_point_on_triangle(x, mesh.vertices[t[0]], mesh.vertices[t[1]],
                                                                      mesh.vertices[t[2]]).distance2);
            ASSERT_EQ(bvh.triangle_at(a[i].slot), q.triangle) << x0 << " " << y0 << " " << z0 << " offset " << o;
            ASSERT_EQ(std::memcmp(&a[i].closest.distance2, &q.closest.distance2, sizeof(double)), 0);
            ASSERT_EQ(a[i].closest.point, q.closest.point);
            ASSERT_EQ(a[i].distance, std::sqrt(q.closest.distance2));
            ASSERT_EQ(b[i].offset, a[i].offset);
            ASSERT_EQ(b[i].closest.distance2, brute);
            ASSERT_EQ(b[i].distance, std::sqrt(brute));
            ++checked;
        }
    }
    EXPECT_GT(checked, static_cast<std::size_t>(bricks) * 100);
}

hp::GridSpec grid_over(const hp::Aabb& box, double s) { return hp::grid_around(box, s, 2); }

TEST(BrickNearest, TiesOnATessellatedPlaneAsTheBvhQuery) {
    // Square side 4 voxels, voxel centres on the squares' diagonals and edges in projection.
    const double s = 0.25;
    const hp::TriMesh plane = tessellated_plane(12, 1.0, 0.0, {0.125, 0.125, 0});
    hp::GridSpec grid = grid_over(plane.bounds(), s);
    grid.origin = {-2.0, -2.0, -2.0};
    grid.dims = {64, 64, 24};
    check(plane, grid, 24, 1);
}

TEST(BrickNearest, SliversAndDegenerateTrianglesAsTheBvhQuery) {
    std::mt19937_64 rng(7);
    const hp::TriMesh m = soup(rng, 600, 1.0, {0, 0, 0});
    check(m, grid_over(hp::Aabb{{-0.5, -0.5, -0.5}, {0.5, 0.5, 0.5}}, 1.0 / 48), 24, 2);
}

TEST(BrickNearest, FarFromTheOriginAsTheBvhQuery) {
    // Coordinates around 1e4 with a voxel of 1e-3: offsets from the brick lose most float digits
    // of the absolute coordinates, not of the offsets.
    std::mt19937_64 rng(11);
    const hp::Vec3d centre{1.0e4, -2.5e4, 7.0e3};
    const hp::TriMesh m = soup(rng, 300, 0.05, centre);
    check(m, grid_over(hp::Aabb{centre - hp::Vec3d{0.025, 0.025, 0.025}, centre + hp::Vec3d{0.025, 0.025, 0.025}}, 1e-3), 16, 3);
}

TEST(BrickNearest, SampleMeshAsTheBvhQuery) {
    const hp::TriMesh mesh = hp::load_mesh(std::filesystem::path(HP_SOURCE_DIR) / "sample_meshes" / "gear.obj").mesh;
    const hp::Aabb box = mesh.bounds();
    const double longest = std::max({box.size().x, box.size().y, box.size().z});
    check(mesh, grid_over(box, longest / 40), 24, 4);
}

}  // namespace
