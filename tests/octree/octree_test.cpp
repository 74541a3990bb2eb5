// lib/octree and formats/octree: the table of tight spheres against an independent brute force,
// a two-cube scene counted by hand, ist against ist-brute on random poses, the contacts' response
// (normals read once per voxel, the same force), the file round trip and
// damaged files.
#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <unistd.h>

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "field/field.hpp"
#include "formats/octree.hpp"
#include "octree/ist.hpp"
#include "octree/octree.hpp"
#include "query/ist_check.hpp"
#include "../core/sampled_field.hpp"

namespace fs = std::filesystem;
namespace oc = hp::octree;
using hp::Vec3d;

namespace {

// --- An independent minimal ball: exhaustive search over support sets of 1 to 4 points. The
// ball through a support set is solved on the half-unit lattice in exact integer arithmetic
// (points scaled by 2): centre c = p0 + sum_i l_i (p_i - p0) with (p_j - p0).(c - p0) =
// |p_j - p0|^2 / 2, a k x k system solved by Cramer's rule over integers (long double only for
// the final division). The minimal ball is the smallest such ball holding every point.
struct BruteBall {
    Vec3d center;
    double radius = -1;
};

using IV = std::array<long long, 3>;

long long idot(const IV& a, const IV& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

long long det3(const long long m[3][3]) {
    return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
           m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
}

long long det(const std::vector<std::vector<long long>>& m) {
    const std::size_t k = m.size();
    if (k == 1) return m[0][0];
    if (k == 2) return m[0][0] * m[1][1] - m[0][1] * m[1][0];
    long long a[3][3];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) a[i][j] = m[i][j];
    return det3(a);
}

// Circumcentre of the points in their affine hull; false when they are affinely dependent.
bool circumcentre(const std::vector<IV>& s, Vec3d& c) {
    const std::size_t k = s.size() - 1;
    if (k == 0) {
        c = {double(s[0][0]), double(s[0][1]), double(s[0][2])};
        return true;
    }
    std::vector<IV> d(k);
    for (std::size_t i = 0; i < k; ++i)
        for (int a = 0; a < 3; ++a) d[i][a] = s[i + 1][a] - s[0][a];
    std::vector<std::vector<long long>> g(k, std::vector<long long>(k));
    std::vector<long long> rhs(k);  // doubled: 2 G l = |d|^2
    for (std::size_t i = 0; i < k; ++i) {
        for (std::size_t j = 0; j < k; ++j) g[i][j] = 2 * idot(d[i], d[j]);
        rhs[i] = idot(d[i], d[i]);
    }
    const long long D = det(g);
    if (D == 0) return false;
    Vec3d out{double(s[0][0]), double(s[0][1]), double(s[0][2])};
    for (std::size_t i = 0; i < k; ++i) {
        auto gi = g;
        for (std::size_t r = 0; r < k; ++r) gi[r][i] = rhs[r];
        const long double l = static_cast<long double>(det(gi)) / static_cast<long double>(D);
        for (int a = 0; a < 3; ++a) out[a] += static_cast<double>(l * d[i][a]);
    }
    c = out;
    return true;
}

BruteBall brute_ball(const std::vector<IV>& pts) {
    BruteBall best;
    const std::size_t n = pts.size();
    std::vector<IV> s;
    auto consider = [&] {
        Vec3d c;
        if (!circumcentre(s, c)) return;
        double r2 = 0;
        for (const IV& p : s) r2 = std::max(r2, hp::length2(Vec3d{double(p[0]), double(p[1]), double(p[2])} - c));
        for (const IV& p : pts)
            if (hp::length2(Vec3d{double(p[0]), double(p[1]), double(p[2])} - c) > r2 * (1 + 1e-12) + 1e-12) return;
        const double r = std::sqrt(r2);
        if (best.radius < 0 || r < best.radius - 1e-12) best = {c, r};
    };
    for (std::size_t a = 0; a < n; ++a) {
        s = {pts[a]};
        consider();
        for (std::size_t b = a + 1; b < n; ++b) {
            s = {pts[a], pts[b]};
            consider();
            for (std::size_t c = b + 1; c < n; ++c) {
                s = {pts[a], pts[b], pts[c]};
                consider();
                for (std::size_t e = c + 1; e < n; ++e) {
                    s = {pts[a], pts[b], pts[c], pts[e]};
                    consider();
                }
            }
        }
    }
    return best;
}

// Corners of the occupied children's cubes on the doubled lattice (node side 4, centre (2,2,2)):
// child b spans [2 bx, 2 bx + 2] per axis.
std::vector<IV> cube_corners(int mask) {
    std::set<IV> pts;
    for (int b = 0; b < 8; ++b)
        if (mask >> b & 1)
            for (int c = 0; c < 8; ++c)
                pts.insert({2 * (b & 1) + 2 * (c & 1), 2 * ((b >> 1) & 1) + 2 * ((c >> 1) & 1), 2 * ((b >> 2) & 1) + 2 * ((c >> 2) & 1)});
    return {pts.begin(), pts.end()};
}

std::vector<IV> child_centres(int mask) {
    std::vector<IV> pts;
    for (int b = 0; b < 8; ++b)
        if (mask >> b & 1) pts.push_back({2 * (b & 1) + 1, 2 * ((b >> 1) & 1) + 1, 2 * ((b >> 2) & 1) + 1});
    return pts;
}

}  // namespace

TEST(OctreeTable, EveryMaskIsTheMinimalBallOfTheChildrensCorners) {
    const auto& table = oc::tight_spheres();
    int smaller = 0;
    for (int m = 1; m < 256; ++m) {
        const BruteBall b = brute_ball(cube_corners(m));
        ASSERT_GT(b.radius, 0) << "mask " << m;
        // Back to node units: side 4 -> 1, centre (2,2,2) -> 0.
        const double r = b.radius / 4;
        const Vec3d c = (b.center - Vec3d{2, 2, 2}) / 4;
        EXPECT_NEAR(table[m].scale, r, 1e-12) << "mask " << m;
        EXPECT_NEAR(table[m].offset.x, c.x, 1e-9) << "mask " << m;
        EXPECT_NEAR(table[m].offset.y, c.y, 1e-9) << "mask " << m;
        EXPECT_NEAR(table[m].offset.z, c.z, 1e-9) << "mask " << m;
        smaller += r < oc::kCubeRadius - 1e-12;
    }
    EXPECT_EQ(oc::table_counts().cubes, smaller);
    // By hand: a mask holding two diagonally opposite children (b and 7 - b) spans the node's
    // diagonal and needs the full ball; 3^4 - 1 = 80 masks hold at most one child of each of the
    // four opposite pairs, and of these the two regular tetrahedra of children (masks 0x69 and
    // 0x96) have the full circumsphere as well: 80 - 2 = 78.
    EXPECT_EQ(smaller, 78);
}

TEST(OctreeTable, CountsOfTheOtherQuantitiesFromTheBruteForce) {
    // Child centres: the ball of the occupied children's centres against the ball of all eight;
    // child spheres: the same balls grown by the children's circumradius (equal radii), so the
    // two counts are equal.
    const double full = brute_ball(child_centres(255)).radius;
    int centres = 0;
    for (int m = 1; m < 256; ++m) centres += brute_ball(child_centres(m)).radius < full - 1e-12;
    const oc::TableCounts c = oc::table_counts();
    EXPECT_EQ(c.child_centres, centres);
    EXPECT_EQ(c.child_spheres, centres);
}

namespace {

oc::Octree box(int nx, int ny, int nz, Vec3d origin, double s, bool surface_only = false) {
    std::vector<std::array<int, 3>> v;
    for (int k = 0; k < nz; ++k)
        for (int j = 0; j < ny; ++j)
            for (int i = 0; i < nx; ++i) {
                const bool surface = i == 0 || j == 0 || k == 0 || i == nx - 1 || j == ny - 1 || k == nz - 1;
                if (!surface_only || surface) v.push_back({i, j, k});
            }
    return oc::build(v, origin, s, surface_only);
}

std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs(const std::vector<oc::IstContact>& c) {
    std::vector<std::pair<std::uint32_t, std::uint32_t>> p;
    for (const auto& x : c) {
        EXPECT_EQ(x.level, 0);
        p.push_back({x.moving, x.fixed});
    }
    std::sort(p.begin(), p.end());
    return p;
}

const oc::IstOptions kAllOptions[4] = {{true, true}, {true, false}, {false, true}, {false, false}};

}  // namespace

TEST(OctreeBuild, VoxelsRoundTripAndCounts) {
    std::mt19937 rng(3);
    std::uniform_int_distribution<int> u(0, 40);
    std::set<std::array<int, 3>> want;
    std::vector<std::array<int, 3>> in;
    for (int i = 0; i < 2000; ++i) {
        std::array<int, 3> c{u(rng), u(rng), u(rng) / 4};
        want.insert(c);
        in.push_back(c);
        if (i % 7 == 0) in.push_back(c);  // duplicates merge
    }
    const oc::Octree t = oc::build(in, {1, 2, 3}, 0.5, false);
    EXPECT_EQ(t.levels, 6);  // 2^6 = 64 > 40
    EXPECT_EQ(t.voxels, want.size());
    auto got = oc::voxel_coords(t);
    std::sort(got.begin(), got.end());
    const std::vector<std::array<int, 3>> want_list(want.begin(), want.end());
    EXPECT_EQ(want_list, got);
    // Node counts: level l holds the distinct (c >> l) of the voxels.
    const auto per = oc::nodes_per_level(t);
    for (int l = 1; l <= t.levels; ++l) {
        std::set<std::array<int, 3>> nodes;
        for (const auto& c : want) nodes.insert({c[0] >> l, c[1] >> l, c[2] >> l});
        EXPECT_EQ(per[t.levels - l], nodes.size()) << "level " << l;
    }
    oc::Octree bad = t;
    bad.masks[5] = 0;
    EXPECT_NE(oc::finalize(bad), "");
    bad = t;
    bad.masks.push_back(1);
    EXPECT_NE(oc::finalize(bad), "");
    EXPECT_THROW(oc::build({}, {}, 1, false), hp::Error);
}

TEST(OctreeIst, TwoCubesTouchingPairsCountedByHand) {
    // Two 3x3x3 cubes of voxel size 1, the static one 0.2 beyond the moving one's +x face. Voxel
    // spheres (radius sqrt(3)/2) overlap when the centres are closer than sqrt(3): across the gap
    // dx = 1.2 (facing layers; the next layers are 2.2 apart, 4.84 > 3), so dy^2 + dz^2 < 3 - 1.44
    // = 1.56: the facing voxel and its 4 face neighbours in the 3x3 face. Pairs: 9 straight ones,
    // and 2 * 3 * 2 = 12 with |dy| = 1 plus 12 with |dz| = 1: 33.
    const oc::Octree moving = box(3, 3, 3, {0, 0, 0}, 1.0), fixed = box(3, 3, 3, {3.2, 0, 0}, 1.0);
    oc::BruteQuery brute(moving, fixed);
    const auto want = pairs(brute({}));
    EXPECT_EQ(want.size(), 33u);
    for (const oc::IstOptions& o : kAllOptions) {
        oc::IstQuery q(moving, fixed, o);
        const auto& c = q({});
        EXPECT_EQ(pairs(c), want) << "one_child " << o.one_child << " side " << o.side;
        for (const auto& x : c) {
            const double d = hp::length(x.moving_center - x.fixed_center);
            EXPECT_NEAR(x.depth, std::sqrt(3.0) - d, 1e-12);
        }
    }
    // The moving cube lifted by 0.5 along z (a pose): its voxel centres are at z = k + 1, the
    // static ones at k' + 0.5, so |dz| = 0.5 for k' = k or k + 1 (1.5 otherwise: 1.44 + 2.25 > 3).
    // With dx = 1.2: 1.44 + dy^2 + 0.25 < 3 -> |dy| <= 1. Pairs (j, j') with |j - j'| <= 1 in
    // 0..2: 3 + 4 = 7; pairs (k, k') with k' in {k, k + 1} in 0..2: 2 + 2 + 1 = 5; 7 x 5 = 35.
    oc::Placement p;
    p.translation = {0, 0, 0.5};
    const auto shifted = pairs(brute(p));
    EXPECT_EQ(shifted.size(), 35u);
    for (const oc::IstOptions& o : kAllOptions) {
        oc::IstQuery q(moving, fixed, o);
        EXPECT_EQ(pairs(q(p)), shifted);
    }
}

namespace {

std::vector<std::array<int, 3>> blob(int r, double squash, bool surface) {
    std::vector<std::array<int, 3>> v;
    auto in = [&](int i, int j, int k) {
        const double x = i - r + 0.5, y = j - r + 0.5, z = (k - r + 0.5) * squash;
        return x * x + y * y + z * z <= r * r;
    };
    for (int k = 0; k < 2 * r; ++k)
        for (int j = 0; j < 2 * r; ++j)
            for (int i = 0; i < 2 * r; ++i) {
                if (!in(i, j, k)) continue;
                const bool edge = !in(i - 1, j, k) || !in(i + 1, j, k) || !in(i, j - 1, k) || !in(i, j + 1, k) ||
                                  !in(i, j, k - 1) || !in(i, j, k + 1);
                if (!surface || edge) v.push_back({i, j, k});
            }
    return v;
}

std::array<Vec3d, 3> rows_of(double w, double x, double y, double z) {
    const double n = std::sqrt(w * w + x * x + y * y + z * z);
    w /= n, x /= n, y /= n, z /= n;
    return {Vec3d{1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)},
            Vec3d{2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)},
            Vec3d{2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)}};
}

void random_poses_agree(bool surface) {
    // A squashed ball (moving, voxel 0.1) against a ball (static, voxel 0.13): different sizes,
    // voxel sizes and origins, random rotations and positions around contact.
    const oc::Octree moving = oc::build(blob(7, 1.6, surface), {-0.7, -0.7, -0.45}, 0.1, surface);
    const oc::Octree fixed = oc::build(blob(9, 1.0, surface), {0.3, -1.0, 0.2}, 0.13, surface);
    oc::BruteQuery brute(moving, fixed);
    std::mt19937 rng(surface ? 11 : 12);
    std::normal_distribution<double> g(0, 1);
    std::uniform_real_distribution<double> u(-1, 1);
    const Vec3d fixed_centre = fixed.origin + Vec3d{9, 9, 9} * 0.13;
    std::size_t with_contact = 0;
    for (int pose = 0; pose < 60; ++pose) {
        oc::Placement p;
        p.rows = rows_of(g(rng), g(rng), g(rng), g(rng));
        // Moving centre on a shell around the static ball's centre, from deep to just apart.
        Vec3d dir{g(rng), g(rng), g(rng)};
        dir = hp::normalized(dir);
        const double dist = 1.0 + 0.6 * u(rng);
        const Vec3d want_centre = fixed_centre + dir * dist;
        // The moving blob's centre is its origin + (0.7, 0.7, 0.45) in its body frame.
        const Vec3d body_centre{0, 0, 0};
        p.translation = want_centre - Vec3d{hp::dot(p.rows[0], body_centre), hp::dot(p.rows[1], body_centre),
                                            hp::dot(p.rows[2], body_centre)};
        const auto want = pairs(brute(p));
        with_contact += !want.empty();
        for (const oc::IstOptions& o : kAllOptions) {
            oc::IstQuery q(moving, fixed, o);
            EXPECT_EQ(pairs(q(p)), want) << "pose " << pose << " one_child " << o.one_child << " side " << o.side;
        }
    }
    EXPECT_GT(with_contact, 20u);  // the poses reach contact often enough to compare sets
}

}  // namespace

TEST(OctreeIst, EqualsBruteOnRandomPosesSolid) { random_poses_agree(false); }
TEST(OctreeIst, EqualsBruteOnRandomPosesSurfaceOnly) { random_poses_agree(true); }

TEST(OctreeIst, EarlyStopsGiveNodePairsThatCoverTheVoxelContacts) {
    const oc::Octree moving = oc::build(blob(6, 1.0, false), {0, 0, 0}, 0.1, false);
    const oc::Octree fixed = oc::build(blob(6, 1.0, false), {1.0, 0.1, 0}, 0.1, false);
    oc::IstQuery full(moving, fixed, {});
    const std::size_t n = full({}).size();
    ASSERT_GT(n, 0u);
    EXPECT_FALSE(full.stats().interrupted);
    oc::IstQuery at2(moving, fixed, {.stop_level = 2});
    const auto& c2 = at2({});
    EXPECT_TRUE(at2.stats().interrupted);
    ASSERT_FALSE(c2.empty());
    for (const auto& c : c2) EXPECT_EQ(c.level, 2);
    EXPECT_LT(c2.size(), n);
    oc::IstQuery few(moving, fixed, {.max_contacts = 4});
    const auto& c4 = few({});
    EXPECT_TRUE(few.stats().interrupted);
    EXPECT_GE(c4.size(), 4u);
    for (const auto& c : c4) EXPECT_GT(c.level, 0);
}

// IstResponse reads a moving voxel's gradient once per query: its normals, force and torque must
// be those of reading the field at every contact, also when two voxels share a cache slot, when a
// coarse contact carries a node index equal to a voxel's, and on the next query (new centres).
TEST(OctreeIst, ResponseReadsEachVoxelOnceWithTheSameForce) {
    // A ball, inside positive, on 40^3 voxels.
    const hp::DistanceSampler field = hp::test::sampled(hp::test::cube_grid(-1, 1, 0.05), [](Vec3d p) { return 0.5 - hp::length(p); });
    auto direct = [&](const std::vector<oc::IstContact>& cs, Vec3d origin) {
        hp::IstForce r;
        r.contacts = cs.size();
        for (const auto& c : cs) {
            Vec3d n = hp::normalized(-field.gradient(c.moving_center));
            if (hp::length2(n) == 0) n = hp::normalized(c.moving_center - c.fixed_center);
            r.force += n * c.depth;
            r.torque += hp::cross(c.moving_center - origin, n * c.depth);
            r.max_depth = std::max(r.max_depth, c.depth);
        }
        return r;
    };
    auto contact = [](std::uint32_t moving, int level, Vec3d at, double depth) {
        oc::IstContact c;
        c.moving = moving, c.fixed = 1, c.level = level, c.moving_center = at, c.fixed_center = at * 0.9, c.depth = depth;
        return c;
    };
    hp::IstResponse respond(field);
    const Vec3d origin{0.1, -0.2, 0.05};
    for (int q = 0; q < 3; ++q) {
        const double t = 0.1 * q;  // each query moves the voxels: cached directions must not survive it
        const Vec3d a{0.45 - t, 0.1, 0.05}, b{-0.2, 0.43 - t, 0.1}, c{0.05, -0.1, -0.47 + t}, d{0.3, 0.3, 0.2 + t};
        const std::vector<oc::IstContact> cs{contact(3, 0, a, 0.01), contact(3, 0, a, 0.02), contact(515, 0, b, 0.005),  // 515: 3's slot
                                             contact(3, 0, a, 0.004), contact(7, 0, c, 0.03), contact(3, 2, d, 0.05)};  // node 3, level 2
        const hp::IstForce want = direct(cs, origin);
        const hp::IstForce got = respond(cs, origin);
        EXPECT_EQ(got.contacts, 6u);
        EXPECT_EQ(got.max_depth, want.max_depth);
        for (int i = 0; i < 3; ++i) {
            EXPECT_EQ(got.force[i], want.force[i]) << "query " << q << " axis " << i;
            EXPECT_EQ(got.torque[i], want.torque[i]) << "query " << q << " axis " << i;
        }
        // One contact of depth 1: its force is its normal, the ball's outward radial direction.
        const hp::IstForce one = respond({contact(9, 0, a, 1.0)}, origin);
        EXPECT_NEAR(hp::length(one.force - hp::normalized(a)), 0.0, 0.05);
    }
}

namespace {
std::string temp(const std::string& name) {
    return (fs::temp_directory_path() / ("hp_octree_" + std::to_string(getpid()) + "_" + name)).string();
}
std::string slurp(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}
void spit(const std::string& p, const std::string& bytes) { std::ofstream(p, std::ios::binary) << bytes; }
}  // namespace

TEST(OctreeFile, RoundTripAndDamage) {
    const oc::Octree t = oc::build(blob(5, 1.3, true), {0.25, -1, 2}, 0.02, true);
    const std::string path = temp("a.hoct");
    hp::write_octree_file(path, {{"kind", "octree"}, {"tool", "test"}}, t);
    const hp::OctreeFile f = hp::read_octree_file(path);
    EXPECT_EQ(f.tree.masks, t.masks);
    EXPECT_EQ(f.tree.levels, t.levels);
    EXPECT_EQ(f.tree.origin, t.origin);
    EXPECT_EQ(f.tree.voxel_size, t.voxel_size);
    EXPECT_TRUE(f.tree.surface_only);
    EXPECT_EQ(f.tree.voxels, t.voxels);
    EXPECT_EQ(f.tree.first_child, t.first_child);
    EXPECT_EQ(f.metadata.value("tool", ""), "test");
    // Deterministic bytes.
    const std::string again = temp("b.hoct");
    hp::write_octree_file(again, {{"kind", "octree"}, {"tool", "test"}}, t);
    const std::string bytes = slurp(path);
    EXPECT_EQ(bytes, slurp(again));

    auto rejects = [&](const std::string& damaged, const std::string& what) {
        spit(again, damaged);
        try {
            hp::read_octree_file(again);
            ADD_FAILURE() << what << " was read";
        } catch (const hp::Error& e) {
            EXPECT_EQ(e.code(), hp::ExitCode::bad_input) << what;
        }
    };
    for (std::size_t n : {std::size_t{0}, std::size_t{10}, std::size_t{40}, bytes.size() / 2, bytes.size() - 1})
        rejects(bytes.substr(0, n), "truncated at " + std::to_string(n));
    for (std::size_t at = 0; at < bytes.size(); at += 3) {
        std::string b = bytes;
        b[at] = static_cast<char>(b[at] ^ (1 << (at % 8)));
        rejects(b, "bit flip at byte " + std::to_string(at));
    }
    fs::remove(path);
    fs::remove(again);
}
