// Time-critical queries with a closest feature map (lib/contact/cfm_contacts.hpp): a plane field, a
// three-cluster tree and a CFM written by hand, so every expected normal, position and depth below
// is worked out on paper from the rule in contact/cfm_contacts.hpp.
#include "contact/cfm_contacts.hpp"

#include <cmath>
#include <filesystem>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "cfm/cfm.hpp"
#include "core/error.hpp"
#include "../core/exit_code.hpp"
#include "formats/cfm.hpp"
#include "formats/shell.hpp"
#include "formats/vdb.hpp"
#include "contact/query.hpp"
#include "query/session.hpp"
#include "../core/sampled_field.hpp"
#include "../core/temp_dir.hpp"

using hp::Vec3d;
namespace fs = std::filesystem;

using hp_test::code_of;

namespace {

// V(p) = -z: the static object is the half-space z < 0 (inside positive), grad V = (0, 0, -1).
hp::DistanceSampler plane_field(Vec3d n = {0, 0, 1}, double offset = 0) {
    return hp::test::sampled(hp::test::cube_grid(-1, 1, 0.1), [&](Vec3d p) { return offset - hp::dot(n, p); });  // 20^3 voxels
}

// Four points; root (0, 0, 0) r 0.1 over two leaves {0, 1} and {2, 3}.
struct HandObject {
    std::vector<Vec3d> points{{0, 0, -0.1}, {-0.1, 0, 0}, {0.1, 0, 0}, {0, 0, 0.1}};
    std::vector<Vec3d> normals;
    hp::PointSphereTree tree;
    hp::cfm::ClosestFeatureMap map;

    explicit HandObject(hp::cfm::Store store = hp::cfm::Store::normal) {
        for (const Vec3d& p : points) normals.push_back(-p / hp::length(p));
        tree.k = 2;
        tree.levels = 2;
        tree.thresholds = {0, 0};
        const double leaf_r = std::sqrt(0.005);  // half the distance between the two points
        tree.clusters = {{1, {{0, 0, 0}, 0.1}, {0}, {1, 2}, -1},
                         {2, {{-0.05, 0, -0.05}, leaf_r}, {0, 1}, {}, 0},
                         {2, {{0.05, 0, 0.05}, leaf_r}, {2, 3}, {}, 0}};
        // Polar sampling, 2 stacks on both levels: samples north pole, (1,0,0), (-1,0,0), south pole.
        map.sampling = hp::cfm::Sampling::polar;
        map.store = store;
        map.root_stacks = map.min_stacks = 2;
        map.levels = 2;
        for (std::uint32_t i = 0; i < 3; ++i) {
            const auto& c = tree.clusters[i];
            map.spheres.push_back({i, c.level, c.sphere.center, c.sphere.radius, 2, i > 0, i == 0 ? 0u : 3u + i,
                                   i == 0 ? 4u : 1u});
        }
        // Outward normals: root per sample; the leaves one record each.
        map.normals = {{0, 0, 1}, {0.6f, 0, -0.8f}, {-1, 0, 0}, {0, 0.6f, -0.8f}, {0, 0, -1}, {0, 0, -1}};
        if (store == hp::cfm::Store::full) {
            map.types.assign(6, hp::FeatureType::face);
            map.features = {0, 1, 2, 3, 4, 5};
            map.points = {{0, 0, 0.1}, {0.09, 0, -0.02}, {-0.1, 0, 0}, {0.02, 0, -0.09}, {0, 0, -0.1}, {0.1, 0, 0}};
        }
        hp::cfm::make_layouts(map);
    }
    hp::MovingObject view(bool with_cfm = true) const { return {points, normals, &tree, with_cfm ? &map : nullptr}; }
};

hp::QueryResult tc(const hp::DistanceSampler& f, const hp::MovingObject& m, const hp::Pose& pose, double budget_us) {
    return hp::run_query(f, m, pose, {.mode = hp::QueryMode::time_critical, .budget_us = budget_us});
}

void expect_vec(const Vec3d& got, const Vec3d& want, double tol = 1e-6) {
    EXPECT_NEAR(got.x, want.x, tol);
    EXPECT_NEAR(got.y, want.y, tol);
    EXPECT_NEAR(got.z, want.z, tol);
}

const double kHalf = std::sqrt(0.5);
// Rotation by +90 degrees about y: R (1, 0, 0) = (0, 0, -1), R (0, 0, 1) = (1, 0, 0).
const std::array<double, 4> kAboutY{kHalf, 0, kHalf, 0};

}  // namespace

TEST(DistanceSampler, GradientOfAPlaneIsItsSlope) {
    const Vec3d n = hp::normalized(Vec3d{0.3, -0.5, 0.8});
    const hp::DistanceSampler f = plane_field(n, 0.2);  // V = 0.2 - n.p grows along -n
    std::mt19937 rng(5);
    std::uniform_real_distribution<double> u(-0.89, 0.89);  // the differences stay in the centre box
    for (int i = 0; i < 500; ++i) {
        const Vec3d g = f.gradient({u(rng), u(rng), u(rng)});
        ASSERT_NEAR(g.x, -n.x, 1e-9);
        ASSERT_NEAR(g.y, -n.y, 1e-9);
        ASSERT_NEAR(g.z, -n.z, 1e-9);
    }
}

TEST(CfmContacts, TheLayoutIsTheOneTheHandValuesAssume) {
    const HandObject o;
    const auto& l = o.map.layout(1);
    ASSERT_EQ(l.size(), 4u);
    expect_vec(l.direction(0), {0, 0, 1}, 1e-12);
    expect_vec(l.direction(1), {1, 0, 0}, 1e-12);
    expect_vec(l.direction(2), {-1, 0, 0}, 1e-12);
    expect_vec(l.direction(3), {0, 0, -1}, 1e-12);
}

TEST(CfmContacts, NotInterruptedTheCfmChangesNothing) {
    const auto f = plane_field();
    const HandObject o;
    const hp::Pose pose{{0, 0, 0.05}};
    const hp::QueryResult full = hp::run_query(f, o.view(false), pose, {});
    const hp::QueryResult r = tc(f, o.view(), pose, 1e9);
    EXPECT_FALSE(r.interrupted);
    EXPECT_EQ(r.cfm_contacts, 0u);
    // Root's parent point 0 at z = -0.05 is the one contact; leaf 2 (centre z 0.1) is pruned.
    ASSERT_EQ(full.contacts.size(), 1u);
    ASSERT_EQ(r.contacts.size(), 1u);
    EXPECT_EQ(r.contacts[0].point, 0u);
    EXPECT_EQ(r.contacts[0].cluster, -1);
    EXPECT_NEAR(r.contacts[0].value, 0.05, 1e-12);
    EXPECT_EQ(r.force.x, full.force.x);
    EXPECT_EQ(r.force.z, full.force.z);
}

TEST(CfmContacts, InterruptedAtTheRootTheNormalComesFromTheMap) {
    const auto f = plane_field();
    const HandObject o;
    // Budget 0: stopped before the root. Its sphere (centre z 0.05, r 0.1) collides.
    const hp::QueryResult none = tc(f, o.view(false), {{0, 0, 0.05}}, 0);
    EXPECT_TRUE(none.interrupted);
    EXPECT_TRUE(none.contacts.empty());
    EXPECT_EQ(none.cfm_contacts, 0u);

    const hp::QueryResult r = tc(f, o.view(), {{0, 0, 0.05}}, 0);
    EXPECT_TRUE(r.interrupted);
    ASSERT_EQ(r.contacts.size(), 1u);
    EXPECT_EQ(r.cfm_contacts, 1u);
    const hp::Contact& c = r.contacts[0];
    EXPECT_EQ(c.cluster, 0);
    EXPECT_EQ(c.point, hp::Contact::kNoPoint);
    // d = (0, 0, -1) = the south pole sample, record 3, outward (0, .6, -.8): normal (0, -.6, .8).
    expect_vec(c.normal, {0, -0.6, 0.8});
    // Store normal: P = X + r d = (0, 0, -0.05), V = 0.05.
    expect_vec(c.position, {0, 0, -0.05}, 1e-12);
    EXPECT_NEAR(c.value, 0.05, 1e-12);
    expect_vec(r.force, {0, -0.03, 0.04});

    // Turned by 90 degrees about y: the body-frame direction is R^T d = (1, 0, 0), record 1,
    // outward (.6, 0, -.8), inward (-.6, 0, .8), in the static frame R (-.6, 0, .8) = (.8, 0, .6).
    const hp::QueryResult t = tc(f, o.view(), {{0, 0, 0.05}, kAboutY}, 0);
    ASSERT_EQ(t.contacts.size(), 1u);
    expect_vec(t.contacts[0].normal, {0.8, 0, 0.6});
    expect_vec(t.contacts[0].position, {0, 0, -0.05}, 1e-12);
}

TEST(CfmContacts, StoreFullPlacesTheContactAtTheClosestPoint) {
    const auto f = plane_field();
    const HandObject o(hp::cfm::Store::full);
    // Record 3's closest point (0.02, 0, -0.09) lands at (0.02, 0, -0.04): depth 0.04.
    const hp::QueryResult r = tc(f, o.view(), {{0, 0, 0.05}}, 0);
    ASSERT_EQ(r.contacts.size(), 1u);
    expect_vec(r.contacts[0].position, {0.02, 0, -0.04}, 1e-12);
    EXPECT_NEAR(r.contacts[0].value, 0.04, 1e-12);
    // Turned: record 1's point (0.09, 0, -0.02) goes to R p + t = (-0.02, 0, -0.09) + (0, 0, 0.05).
    const hp::QueryResult t = tc(f, o.view(), {{0, 0, 0.05}, kAboutY}, 0);
    ASSERT_EQ(t.contacts.size(), 1u);
    expect_vec(t.contacts[0].position, {-0.02, 0, -0.04}, 1e-12);
    EXPECT_NEAR(t.contacts[0].value, 0.04, 1e-12);
    // At centre height 0.095 the sphere collides (V + R = 0.005) but record 3's closest point is
    // 0.005 above the plane: no contact.
    const hp::QueryResult above = tc(f, o.view(), {{0, 0, 0.095}}, 0);
    EXPECT_TRUE(above.interrupted);
    EXPECT_TRUE(above.contacts.empty());
}

TEST(CfmContacts, ASeparatedSphereGivesNoContact) {
    const auto f = plane_field();
    const HandObject o;
    const hp::QueryResult r = tc(f, o.view(), {{0, 0, 0.15}}, 0);  // V + R = -0.05
    EXPECT_TRUE(r.interrupted);
    EXPECT_TRUE(r.contacts.empty());
    EXPECT_NEAR(r.min_distance_bound, 0.05, 1e-6);
}

TEST(CfmContacts, OnlyTheTimeCriticalModeTakesAMap) {
    const auto f = plane_field();
    const HandObject o;
    EXPECT_EQ(code_of([&] { hp::VpsQuery q(f, o.view(), {.mode = hp::QueryMode::full}); }), hp::ExitCode::usage);
    EXPECT_EQ(code_of([&] { hp::run_query(f, o.view(), {}, {.mode = hp::QueryMode::brute}); }), hp::ExitCode::usage);
    EXPECT_EQ(code_of([&] { hp::VpsQuery q(f, o.view(), {.mode = hp::QueryMode::time_critical}); }), hp::ExitCode::ok);
    HandObject short_map;
    short_map.map.spheres.pop_back();
    EXPECT_EQ(code_of([&] { hp::VpsQuery q(f, short_map.view(), {.mode = hp::QueryMode::time_critical}); }),
              hp::ExitCode::bad_input);
}

TEST(CfmContacts, AMapOfAnotherTreeIsRefused) {
    const HandObject o;
    const nlohmann::json cfm_meta{{"tree_source_hash", "00aa"}}, tree_meta{{"source_hash", "00aa"}};
    EXPECT_NO_THROW(hp::check_cfm_matches_tree(o.map, cfm_meta, "a.hcfm", o.tree, tree_meta, "a.hps"));
    EXPECT_NO_THROW(hp::check_cfm_matches_tree(o.map, {}, "a.hcfm", o.tree, {}, "a.hps"));

    auto refused = [&](const hp::cfm::ClosestFeatureMap& m, const nlohmann::json& cm, const std::string& what) {
        try {
            hp::check_cfm_matches_tree(m, cm, "a.hcfm", o.tree, tree_meta, "a.hps");
        } catch (const hp::Error& e) {
            EXPECT_EQ(e.code(), hp::ExitCode::bad_input);
            const std::string msg = e.what();
            EXPECT_NE(msg.find("a.hcfm"), std::string::npos) << msg;
            EXPECT_NE(msg.find("a.hps"), std::string::npos) << msg;
            EXPECT_NE(msg.find(what), std::string::npos) << msg;
            return;
        }
        ADD_FAILURE() << "accepted: " << what;
    };
    refused(o.map, {{"tree_source_hash", "00ab"}}, "source hash");
    hp::cfm::ClosestFeatureMap m = o.map;
    m.spheres.pop_back();
    refused(m, cfm_meta, "2 spheres in the CFM, 3 clusters");
    m = o.map;
    m.spheres[2].center.y += 1e-7;
    refused(m, cfm_meta, "sphere 2 has centre");
    m = o.map;
    m.spheres[1].radius *= 1.001;
    refused(m, cfm_meta, "sphere 1 has radius");
    m = o.map;
    m.spheres[2].level = 1;
    refused(m, cfm_meta, "sphere 2 is on level 1");
}

TEST(CfmContacts, TheSessionLoadsAndChecksTheMapFile) {
    const fs::path dir = hp::test::temp_dir("hp_cfm_contacts_");
    const HandObject o;
    // The static object: the plane as a double distance field.
    const hp::DistanceSampler f = plane_field();
    const hp::GridSpec& g = f.grid();
    hp::vdb::write(dir / "plane.dist.vdb", g,
                   {{"distance", hp::vdb::ValueType::float64,
                     [&](int z, void* out) {
                         double* d = static_cast<double*>(out);
                         for (int j = 0; j < g.dims[1]; ++j)
                             for (int i = 0; i < g.dims[0]; ++i) d[j * g.dims[0] + i] = -g.center(i, j, z).z;
                     },
                     -1}},
                   {{"kind", "distance"}, {"encoding", "double"}}, "hapticprep test");
    hp::Pointshell shell{o.points, o.normals, std::vector<std::uint32_t>(o.points.size(), 0)};
    hp::write_shell_file(dir / "hand.hps", {{"source_hash", "00aa"}}, shell, &o.tree);
    hp::write_cfm_file(dir / "hand.hcfm", {{"kind", "cfm"}, {"tree_source_hash", "00aa"}}, o.map);
    hp::write_cfm_file(dir / "other.hcfm", {{"kind", "cfm"}, {"tree_source_hash", "00bb"}}, o.map);
    const hp::QueryOptions tco{.mode = hp::QueryMode::time_critical, .budget_us = 0};

    hp::QuerySession s(dir / "plane.dist.vdb", dir / "hand.hps", tco, dir / "hand.hcfm");
    const hp::QueryResult& r = s.query({{0, 0, 0.05}});
    ASSERT_EQ(r.contacts.size(), 1u);
    EXPECT_EQ(r.cfm_contacts, 1u);
    expect_vec(r.contacts[0].normal, {0, -0.6, 0.8});
    // The three-argument constructor: no map, no contact when stopped at the root.
    hp::QuerySession plain(dir / "plane.dist.vdb", dir / "hand.hps", tco);
    EXPECT_TRUE(plain.query({{0, 0, 0.05}}).contacts.empty());

    EXPECT_EQ(code_of([&] { hp::QuerySession x(dir / "plane.dist.vdb", dir / "hand.hps", tco, dir / "other.hcfm"); }),
              hp::ExitCode::bad_input);
    EXPECT_EQ(code_of([&] { hp::QuerySession x(dir / "plane.dist.vdb", dir / "hand.hps", {}, dir / "hand.hcfm"); }),
              hp::ExitCode::usage);
    fs::remove_all(dir);
}

// The CFM phase's limit (contact/query.hpp, time_critical), counted in sphere tests so that the
// check does not depend on the machine's speed: a plate of 41 x 41 points lies 0.02 deep in the
// plane field, so every sphere of its tree collides. The tree has 16 children per cluster: one
// sphere test queues 16 clusters, so the hand-over (tests + queued reach the budget) often leaves
// more queued clusters than the budget has tests left, and the CFM phase must stop at its own limit.
TEST(CfmContacts, TheCfmPhaseStopsAtTheBudgetCoarsestFirst) {
    const auto f = plane_field();
    std::vector<Vec3d> points, normals;
    for (int i = 0; i <= 40; ++i)
        for (int j = 0; j <= 40; ++j) {
            points.push_back({-0.5 + 0.025 * i, -0.5 + 0.025 * j, -0.02});
            normals.push_back({0, 0, 1});
        }
    const hp::PointSphereTree tree = hp::build_point_sphere_tree(points, {.k = 16});
    // One record per sphere, outward normal (0, 0, -1): every tested sphere gives a contact
    // (store normal: P = X + r (0, 0, -1) lies deeper than the centre, below the plate).
    hp::cfm::ClosestFeatureMap map;
    map.sampling = hp::cfm::Sampling::polar;
    map.store = hp::cfm::Store::normal;
    map.root_stacks = map.min_stacks = 2;
    map.levels = tree.levels;
    for (std::uint32_t i = 0; i < tree.clusters.size(); ++i) {
        const auto& c = tree.clusters[i];
        map.spheres.push_back({i, c.level, c.sphere.center, c.sphere.radius, 2, true, i, 1});
        map.normals.push_back({0, 0, -1});
    }
    hp::cfm::make_layouts(map);
    const hp::MovingObject with{points, normals, &tree, &map}, without{points, normals, &tree};
    ASSERT_GT(tree.clusters.size(), 100u);

    int stopped_by_the_phase = 0;
    for (std::size_t budget : {1, 2, 5, 16, 20, 37, 60, 90}) {
        const hp::QueryOptions o{.mode = hp::QueryMode::time_critical, .budget_us = 1e9, .budget_tests = budget};
        const hp::QueryResult r = hp::run_query(f, with, {}, o);
        ASSERT_TRUE(r.interrupted) << budget;
        ASSERT_LE(r.queued_untested, r.queued);
        const std::size_t phase = r.queued - r.queued_untested;
        // Never more than the phase's batch of 4 past the budget; the first batch is always done.
        EXPECT_LE(r.spheres_tested, budget + 3) << budget;
        EXPECT_GE(phase, std::min<std::size_t>(4, r.queued)) << budget;
        if (r.queued_untested > 0) {
            EXPECT_GE(r.spheres_tested, budget) << budget;  // it stopped at its limit, not before
            ++stopped_by_the_phase;
        }
        // Every tested queued sphere gave its contact, and they are the front of the queue:
        // breadth-first ids, so consecutive clusters from the first queued one (coarsest first).
        ASSERT_EQ(r.cfm_contacts, phase) << budget;
        std::vector<int> ids;
        for (const hp::Contact& c : r.contacts)
            if (c.cluster >= 0) ids.push_back(c.cluster);
        ASSERT_EQ(ids.size(), phase);
        for (std::size_t i = 1; i < ids.size(); ++i) EXPECT_EQ(ids[i], ids[0] + static_cast<int>(i)) << budget;
        // Deterministic: the same again.
        const hp::QueryResult again = hp::run_query(f, with, {}, o);
        EXPECT_EQ(again.spheres_tested, r.spheres_tested);
        EXPECT_EQ(again.force, r.force);

        // Without the map the traversal has the whole budget and leaves every queued cluster
        // untested.
        const hp::QueryResult n = hp::run_query(f, without, {}, o);
        EXPECT_TRUE(n.interrupted);
        EXPECT_EQ(n.queued_untested, n.queued);
        EXPECT_EQ(n.cfm_contacts, 0u);
        EXPECT_EQ(n.spheres_tested, budget);
    }
    // Most budgets end inside the CFM phase with clusters left (the queue outgrows the budget).
    EXPECT_GE(stopped_by_the_phase, 4);
    // An ample budget in tests: not interrupted, the same contacts as the full mode.
    const hp::QueryResult ample = hp::run_query(f, with, {}, {.mode = hp::QueryMode::time_critical, .budget_us = 1e9,
                                                              .budget_tests = 1000000});
    EXPECT_FALSE(ample.interrupted);
    EXPECT_EQ(ample.contacts.size(), points.size());
}
