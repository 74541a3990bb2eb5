// closest_points_on_triangles4 against closest_point_on_triangle, bit for bit: the point, the
// squared distance, the feature type and index, in the default build and in an AVX2 function
// (where the CPU has AVX2), from the corners and from prepared triangles (and the scalar function
// from prepared triangles), on points in every Voronoi region of random triangles, on points and
// triangles of a small integer lattice (ties and zeros in the region tests), and on badly
// conditioned triangles (the scalar fall-back).
#include "geometry/closest_point4.hpp"

#include <array>
#include <cstring>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "core/cpu.hpp"

using hp::Vec3d;

// The vector form's 32-byte vectors never cross a call (it is inlined into both functions below).
#pragma GCC diagnostic ignored "-Wpsabi"

namespace {

using Tri = std::array<Vec3d, 3>;

void four_default(const Vec3d* const p[4], const Tri* const t[4], hp::ClosestPoint out[4]) {
    hp::closest_points_on_triangles4(p, t, out);
}
__attribute__((target("avx2"))) void four_avx2(const Vec3d* const p[4], const Tri* const t[4], hp::ClosestPoint out[4]) {
    hp::closest_points_on_triangles4(p, t, out);
}
// The same from prepared triangles.
void four_prepared(const Vec3d* const p[4], const hp::PreparedTriangle* const t[4], hp::ClosestPoint out[4]) {
    hp::closest_points_on_triangles4(p, t, out);
}
__attribute__((target("avx2"))) void four_prepared_avx2(const Vec3d* const p[4], const hp::PreparedTriangle* const t[4],
                                                         hp::ClosestPoint out[4]) {
    hp::closest_points_on_triangles4(p, t, out);
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Runs the pairs four at a time in both forms; counts the lanes by feature type.
void check(const std::vector<Vec3d>& points, const std::vector<Tri>& tris, std::array<int, 3>& types) {
    ASSERT_EQ(points.size(), tris.size());
    const bool avx2 = hp::cpu_has_avx2();
    for (std::size_t k = 0; k + 4 <= points.size(); k += 4) {
        const Vec3d* p[4];
        const Tri* t[4];
        for (int l = 0; l < 4; ++l) p[l] = &points[k + static_cast<std::size_t>(l)], t[l] = &tris[k + static_cast<std::size_t>(l)];
        // Forms: default, AVX2, prepared default, prepared AVX2, prepared scalar.
        hp::PreparedTriangle prepared[4];
        const hp::PreparedTriangle* pt[4];
        for (int l = 0; l < 4; ++l) prepared[l] = hp::prepare_triangle((*t[l])[0], (*t[l])[1], (*t[l])[2]), pt[l] = &prepared[l];
        hp::ClosestPoint got[5][4];
        four_default(p, t, got[0]);
        four_prepared(p, pt, got[2]);
        if (avx2) four_avx2(p, t, got[1]), four_prepared_avx2(p, pt, got[3]);
        else four_default(p, t, got[1]), four_prepared(p, pt, got[3]);
        for (int l = 0; l < 4; ++l) got[4][l] = hp::closest_point_on_triangle(*p[l], prepared[l]);
        for (int form = 0; form < 5; ++form)
            for (int l = 0; l < 4; ++l) {
                const hp::ClosestPoint want = hp::closest_point_on_triangle(*p[l], (*t[l])[0], (*t[l])[1], (*t[l])[2]);
                const hp::ClosestPoint& g = got[form][l];
                ASSERT_TRUE(same_bits(g.distance2, want.distance2)) << "pair " << k + static_cast<std::size_t>(l) << " form " << form;
                ASSERT_TRUE(same_bits(g.point.x, want.point.x) && same_bits(g.point.y, want.point.y) && same_bits(g.point.z, want.point.z))
                    << "pair " << k + static_cast<std::size_t>(l) << " form " << form;
                ASSERT_EQ(g.type, want.type) << "pair " << k + static_cast<std::size_t>(l);
                ASSERT_EQ(g.index, want.index) << "pair " << k + static_cast<std::size_t>(l);
                if (form == 0) ++types[static_cast<std::size_t>(want.type)];
            }
    }
}

}  // namespace

TEST(ClosestPoint4, RandomPairsInEveryRegion) {
    std::mt19937 gen(7);
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<Vec3d> points;
    std::vector<Tri> tris;
    for (int n = 0; n < 200000; ++n) {
        const Tri t{Vec3d{u(gen), u(gen), u(gen)}, Vec3d{u(gen), u(gen), u(gen)}, Vec3d{u(gen), u(gen), u(gen)}};
        // Near the triangle (face and edge regions) or far out (vertex regions), at random scales.
        const double r = n % 3 == 0 ? 0.1 : (n % 3 == 1 ? 1.0 : 10.0);
        const Vec3d c = (t[0] + t[1] + t[2]) * (1.0 / 3);
        points.push_back(c + Vec3d{u(gen), u(gen), u(gen)} * r);
        tris.push_back(t);
    }
    std::array<int, 3> types{0, 0, 0};
    check(points, tris, types);
    // Every feature type occurs often.
    for (int k = 0; k < 3; ++k) EXPECT_GT(types[static_cast<std::size_t>(k)], 10000) << k;
}

// Integer coordinates: region tests meet exact zeros and equalities (points on the boundaries
// between regions, on edges, at vertices, in the plane), and degenerate triangles (repeated or
// collinear corners) take the scalar fall-back.
TEST(ClosestPoint4, LatticeTiesAndDegenerateTriangles) {
    std::mt19937 gen(3);
    std::uniform_int_distribution<int> small(-2, 2);
    std::vector<Vec3d> points;
    std::vector<Tri> tris;
    for (int n = 0; n < 200000; ++n) {
        auto lattice = [&] { return Vec3d{double(small(gen)), double(small(gen)), double(small(gen))}; };
        Tri t{lattice(), lattice(), lattice()};
        if (n % 7 == 0) t[2] = t[1];                          // a repeated corner
        if (n % 11 == 0) t[2] = t[0] + (t[1] - t[0]) * 2.0;  // collinear corners
        if (n % 13 == 0) t[1] = t[0] + Vec3d{1e-9, 0, 0};     // a needle
        points.push_back(n % 5 == 0 ? t[n % 3] : lattice());
        tris.push_back(t);
    }
    std::array<int, 3> types{0, 0, 0};
    check(points, tris, types);
    for (int k = 0; k < 3; ++k) EXPECT_GT(types[static_cast<std::size_t>(k)], 1000) << k;
}
