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
#include <tuple>
#include <vector>

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

// Without BVH ties, the triangle the rule picks among the voxels of one sub-block (in the order
// added): the previous voxel's if it is at the least squared distance, else, of those at it, the
// first by distance to the centre of the sub-block's voxels, then by distance to the centre of the
// brick's voxels, then by slot (the order of the sub-block's candidate list). Every slot is scanned.
class TieReference {
public:
    TieReference(const hp::TriangleBvh& bvh, std::size_t slots) : bvh_(bvh), slots_(slots) {}
    // The centres of the sub-block's and the brick's voxel boxes; forgets the previous voxel.
    void sub_block(const hp::Vec3d& sub_centre, const hp::Vec3d& brick_centre) {
        cq_ = sub_centre, c_ = brick_centre, previous_ = kNone;
    }
    // The slot for voxel centre x; `ties` counts the voxels with more than one triangle at the least distance.
    std::uint32_t pick(const hp::Vec3d& x, std::size_t& ties) {
        double least = std::numeric_limits<double>::infinity();
        std::vector<std::uint32_t> at;
        for (std::uint32_t s = 0; s < slots_; ++s) {
            const double d2 = distance2(x, s);
            if (d2 < least) least = d2, at.clear();
            if (d2 == least) at.push_back(s);
        }
        ties += at.size() > 1;
        std::uint32_t best = at[0];
        for (std::uint32_t s : at) {
            if (s == previous_) {
                best = s;
                break;
            }
            const auto key = [&](std::uint32_t t) { return std::tuple(std::sqrt(distance2(cq_, t)), std::sqrt(distance2(c_, t)), t); };
            if (key(s) < key(best)) best = s;
        }
        return previous_ = best;
    }

private:
    static constexpr std::uint32_t kNone = ~0u;
    double distance2(const hp::Vec3d& x, std::uint32_t s) const {
        const auto& t = bvh_.corners_at(s);
        return hp::closest_point_on_triangle(x, t[0], t[1], t[2]).distance2;
    }
    const hp::TriangleBvh& bvh_;
    std::size_t slots_;
    hp::Vec3d cq_, c_;
    std::uint32_t previous_ = kNone;
};

// The centre of the box of the voxels `offsets` (of the brick at x0, y0, z0) that satisfy `keep`.
template <class Keep>
hp::Vec3d box_centre(const hp::GridSpec& grid, int x0, int y0, int z0, const std::vector<int>& offsets, Keep keep) {
    int lo[3] = {8, 8, 8}, hi[3] = {-1, -1, -1};
    for (int o : offsets) {
        if (!keep(o)) continue;
        const int v[3] = {o & 7, (o >> 3) & 7, o >> 6};
        for (int k = 0; k < 3; ++k) lo[k] = std::min(lo[k], v[k]), hi[k] = std::max(hi[k], v[k]);
    }
    return (grid.center(x0 + lo[0], y0 + lo[1], z0 + lo[2]) + grid.center(x0 + hi[0], y0 + hi[1], z0 + hi[2])) * 0.5;
}

// Every voxel of `bricks` random blocks near the mesh (and a few voxels of a partial brick),
// against the BVH query and a brute-force scan, with both ways of bounding (8 lanes, halves of 4);
// without BVH ties, the chosen triangle and closest point against TieReference. `tied` (if given)
// receives the number of voxels with several triangles at the least distance.
void check(const hp::TriMesh& mesh, const hp::GridSpec& grid, int bricks, std::uint64_t seed, std::size_t* tied_out = nullptr) {
    const hp::TriangleBvh bvh(mesh);
    const hp::NearestIndex ties(bvh, grid, true), first(bvh, grid, false);
    TieReference reference(bvh, mesh.triangles.size());
    std::size_t checked = 0, tied = 0;
    for (const bool wide : {true, false}) {
        hp::BrickNearest with_ties(ties, wide), without(first, wide);
        std::mt19937_64 rng(seed);
        for (int n = 0; n < bricks; ++n) {
            const int x0 = static_cast<int>(rng() % static_cast<std::uint64_t>(grid.dims[0] / 8)) * 8;
            const int y0 = static_cast<int>(rng() % static_cast<std::uint64_t>(grid.dims[1] / 8)) * 8;
            const int z0 = static_cast<int>(rng() % static_cast<std::uint64_t>(grid.dims[2] / 8)) * 8;
            const bool partial = n % 4 == 3;  // some voxels only, in a scattered order
            std::vector<int> added;
            for (int o = 0; o < 512; ++o) {
                const int v = partial ? (o * 37) % 512 : o;
                if (partial && (o % 3) != 0) continue;
                added.push_back(v);
            }
            for (hp::BrickNearest* b : {&with_ties, &without}) {
                b->begin(x0, y0, z0);
                for (int v : added) b->add(v & 7, (v >> 3) & 7, v >> 6);
            }
            const auto& a = with_ties.run();
            const auto& b = without.run();
            ASSERT_EQ(a.size(), b.size());
            const hp::Vec3d brick_centre = box_centre(grid, x0, y0, z0, added, [](int) { return true; });
            auto sub_of = [](int o) { return (o & 4) >> 2 | ((o >> 3) & 4) >> 1 | (o >> 6 & 4); };
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
                // Hits come by sub-block, each sub-block's together: a new one restarts the rule.
                if (i == 0 || sub_of(b[i - 1].offset) != sub_of(o))
                    reference.sub_block(box_centre(grid, x0, y0, z0, added, [&](int v) { return sub_of(v) == sub_of(o); }),
                                        brick_centre);
                const std::uint32_t slot = reference.pick(x, tied);
                ASSERT_EQ(b[i].slot, slot) << x0 << " " << y0 << " " << z0 << " offset " << o << (wide ? " wide" : " halves");
                const auto& t = bvh.corners_at(slot);
                ASSERT_EQ(b[i].closest.point, hp::closest_point_on_triangle(x, t[0], t[1], t[2]).point);
                ++checked;
            }
        }
    }
    EXPECT_GT(checked, static_cast<std::size_t>(bricks) * 200);
    if (tied_out) *tied_out = tied;
}

hp::GridSpec grid_over(const hp::Aabb& box, double s) { return hp::grid_around(box, s, 2); }

TEST(BrickNearest, TiesOnATessellatedPlaneAsTheBvhQuery) {
    // Square side 4 voxels, voxel centres on the squares' diagonals and edges in projection.
    const double s = 0.25;
    const hp::TriMesh plane = tessellated_plane(12, 1.0, 0.0, {0.125, 0.125, 0});
    hp::GridSpec grid = grid_over(plane.bounds(), s);
    grid.origin = {-2.0, -2.0, -2.0};
    grid.dims = {64, 64, 24};
    std::size_t tied = 0;
    check(plane, grid, 24, 1, &tied);
    EXPECT_GT(tied, 100u);  // the tie rule is exercised
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
