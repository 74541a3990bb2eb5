#include "query/scenario.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include "core/error.hpp"
#include "formats/vdb.hpp"
#include "query/static_field.hpp"
#include "query/timing.hpp"
#include "../core/sampled_field.hpp"
#include "../core/temp_dir.hpp"
#include "../core/point_object.hpp"
#include "../core/usage_error.hpp"

using hp::Vec3d;
using hp::test::cube_grid;
using hp::test::sampled;
namespace fs = std::filesystem;

namespace {

// A box-shaped moving object: points on the faces of [-a, a] x [-b, b] x [-c, c] shifted by
// `offset` (so the body origin is not its centre), inward normals.
using Shell = hp::test::PointObject;

Shell box_shell(Vec3d half, Vec3d offset, int n) {
    Shell s;
    for (int axis = 0; axis < 3; ++axis)
        for (int sign = -1; sign <= 1; sign += 2)
            for (int u = 0; u <= n; ++u)
                for (int v = 0; v <= n; ++v) {
                    Vec3d p, nrm;
                    const int a1 = (axis + 1) % 3, a2 = (axis + 2) % 3;
                    p[axis] = sign * half[axis];
                    p[a1] = -half[a1] + 2 * half[a1] * u / n;
                    p[a2] = -half[a2] + 2 * half[a2] * v / n;
                    nrm[axis] = -sign;
                    s.points.push_back(p + offset);
                    s.normals.push_back(nrm);
                }
    s.tree = hp::build_point_sphere_tree(s.points, {});
    return s;
}

Vec3d place(const hp::Pose& pose, const Vec3d& p) {
    auto r = hp::rotation_rows(pose.quaternion);
    return Vec3d{hp::dot(r[0], p), hp::dot(r[1], p), hp::dot(r[2], p)} + pose.position;
}

// Independent brute force: the largest V over all points.
double brute_max(const hp::DistanceSampler& f, const Shell& s, const hp::Pose& pose) {
    double best = -1e300;
    for (const Vec3d& p : s.points) best = std::max(best, f.value(place(pose, p)));
    return best;
}

bool same_poses(const std::vector<hp::Pose>& a, const std::vector<hp::Pose>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (!(a[i].position == b[i].position) || a[i].quaternion != b[i].quaternion) return false;
    return true;
}

struct Fixture {
    hp::GridSpec g = cube_grid(-1, 1, 0.04);
    // Static: a ball of radius 0.5 (inside positive).
    hp::DistanceSampler field = sampled(g, [](Vec3d p) { return 0.5 - hp::length(p); });
    Shell shell = box_shell({0.15, 0.1, 0.05}, {0.3, -0.2, 0.1}, 12);
};

fs::path temp_dir() { return hp::test::temp_dir("hp_scenario_test_"); }

}  // namespace

TEST(SplitMix64, MatchesTheReferenceSequence) {
    // First outputs of the reference SplitMix64 (Vigna's splitmix64.c) from state 0.
    hp::SplitMix64 r{0};
    EXPECT_EQ(r.next(), 0xE220A8397B1DCDAFULL);
    EXPECT_EQ(r.next(), 0x6E789E6AA1B965F4ULL);
    EXPECT_EQ(r.next(), 0x06C45D188009454FULL);
    hp::SplitMix64 u{42};
    for (int i = 0; i < 1000; ++i) {
        double x = u.uniform();
        ASSERT_GE(x, 0.0);
        ASSERT_LT(x, 1.0);
    }
}

TEST(Scenario, ContactPosesPenetrateBetweenZeroAndTheDepth) {
    Fixture fx;
    for (double depth : {5.0, 1.0}) {
        hp::ScenarioOptions o{.kind = hp::ScenarioKind::contact, .count = 40, .seed = 7, .depth = depth};
        std::vector<hp::Pose> poses = hp::generate_scenario(fx.field, fx.shell.view(), o);
        ASSERT_EQ(poses.size(), 40u);
        for (const hp::Pose& p : poses) {
            double d = brute_max(fx.field, fx.shell, p);
            EXPECT_GT(d, 0.0);
            EXPECT_LE(d, depth * fx.g.voxel_size);
        }
    }
}

TEST(Scenario, ReproducibleFromTheSeedWhateverTheThreadCount) {
    Fixture fx;
    for (auto kind : {hp::ScenarioKind::contact, hp::ScenarioKind::approach, hp::ScenarioKind::random}) {
        hp::ScenarioOptions o{.kind = kind, .count = 30, .seed = 123, .depth = 3, .path_steps = 7};
        std::vector<hp::Pose> a = hp::generate_scenario(fx.field, fx.shell.view(), o);
        std::vector<hp::Pose> b;
        {
            tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
            b = hp::generate_scenario(fx.field, fx.shell.view(), o);
        }
        EXPECT_TRUE(same_poses(a, b)) << hp::scenario_kind_name(kind);
        o.seed = 124;
        std::vector<hp::Pose> c = hp::generate_scenario(fx.field, fx.shell.view(), o);
        EXPECT_FALSE(same_poses(a, c)) << hp::scenario_kind_name(kind);
        // A longer run starts with the same poses (pose i depends on (seed, i) only).
        if (kind != hp::ScenarioKind::approach) {
            o.seed = 123;
            o.count = 45;
            std::vector<hp::Pose> d = hp::generate_scenario(fx.field, fx.shell.view(), o);
            d.resize(30);
            EXPECT_TRUE(same_poses(a, d));
        }
    }
}

TEST(Scenario, ApproachPathsAreStraightAndEndInContact) {
    Fixture fx;
    const int steps = 6;
    hp::ScenarioOptions o{.kind = hp::ScenarioKind::approach, .count = 20, .seed = 5, .depth = 5, .path_steps = steps};
    std::vector<hp::Pose> poses = hp::generate_scenario(fx.field, fx.shell.view(), o);
    ASSERT_EQ(poses.size(), 20u);  // paths of 6, 6, 6 and 2 poses
    for (std::size_t first = 0; first < poses.size(); first += steps) {
        const std::size_t last = std::min(poses.size(), first + steps) - 1;
        const double end_depth = brute_max(fx.field, fx.shell, poses[last]);
        EXPECT_GT(end_depth, 0.0);
        EXPECT_LE(end_depth, 5 * fx.g.voxel_size);
        const Vec3d dir = poses[first].position - poses[last].position;
        // The start is the root radius back from the end.
        EXPECT_NEAR(hp::length(dir), fx.shell.tree.clusters[0].sphere.radius, 1e-12);
        for (std::size_t i = first; i <= last; ++i) {
            EXPECT_EQ(poses[i].quaternion, poses[first].quaternion);
            const Vec3d v = poses[i].position - poses[last].position;
            EXPECT_NEAR(hp::length(hp::cross(v, dir)), 0.0, 1e-12);  // on the line
            if (i > first) {
                EXPECT_LT(hp::length(v), hp::length(poses[i - 1].position - poses[last].position));
            }
        }
    }
}

TEST(Scenario, RandomPosesKeepTheCentreInThePaddedBox) {
    Fixture fx;
    hp::ScenarioOptions o{.kind = hp::ScenarioKind::random, .count = 500, .seed = 9};
    std::vector<hp::Pose> poses = hp::generate_scenario(fx.field, fx.shell.view(), o);
    const Vec3d m = fx.shell.tree.clusters[0].sphere.center;
    const hp::Aabb box = fx.g.bounds();
    Vec3d mean;
    for (const hp::Pose& p : poses) {
        Vec3d c = place(p, m);
        for (int a = 0; a < 3; ++a) {
            EXPECT_GE(c[a], box.min[a] - 1e-12);
            EXPECT_LE(c[a], box.max[a] + 1e-12);
        }
        mean += c / static_cast<double>(poses.size());
    }
    // Uniform in [-1, 1]^3: the mean of 500 samples is within 0.15 of 0 (about 5 sigma).
    EXPECT_LT(hp::length(mean), 0.15);
}

TEST(Scenario, FullEqualsBruteOnGeneratedPoses) {
    Fixture fx;
    int colliding = 0;
    for (auto kind : {hp::ScenarioKind::contact, hp::ScenarioKind::approach, hp::ScenarioKind::random}) {
        hp::ScenarioOptions o{.kind = kind, .count = 60, .seed = 11, .depth = 8, .path_steps = 10};
        for (const hp::Pose& pose : hp::generate_scenario(fx.field, fx.shell.view(), o)) {
            hp::QueryResult full = hp::run_query(fx.field, fx.shell.view(), pose, {.mode = hp::QueryMode::full});
            hp::QueryResult brute = hp::run_query(fx.field, fx.shell.view(), pose, {.mode = hp::QueryMode::brute});
            ASSERT_EQ(full.contacts.size(), brute.contacts.size());
            for (std::size_t i = 0; i < full.contacts.size(); ++i) {
                ASSERT_EQ(full.contacts[i].point, brute.contacts[i].point);
                ASSERT_EQ(full.contacts[i].value, brute.contacts[i].value);
            }
            EXPECT_EQ(full.force, brute.force);
            EXPECT_EQ(full.torque, brute.torque);
            EXPECT_EQ(full.max_penetration, brute.max_penetration);
            EXPECT_EQ(hp::max_point_value(fx.field, fx.shell.view(), pose), brute_max(fx.field, fx.shell, pose));
            colliding += !full.contacts.empty();
        }
    }
    EXPECT_GT(colliding, 60);  // every contact pose, the ends of approach paths, some random ones
}

// The bounded search answers the comparisons with floor and enough exactly as the brute force
// maximum does, on poses from far outside through shallow to deep contact with the ball.
TEST(Scenario, BoundedMaximumAgreesWithBruteForceOnItsThresholds) {
    Fixture fx;
    const hp::MaxPointValue max_value(fx.field, fx.shell.view());
    const double floor = 0, enough = 2 * fx.g.voxel_size;
    std::mt19937_64 rng(3);
    std::uniform_real_distribution<double> u(-1, 1);
    int below = 0, between = 0, above = 0;
    for (int i = 0; i < 400; ++i) {
        hp::Pose pose;
        pose.quaternion = {u(rng), u(rng), u(rng), u(rng)};
        // The moving box's centre on a ray from the ball's centre, from 0.2 to 1.0 away.
        Vec3d dir = hp::normalized(Vec3d{u(rng), u(rng), u(rng)});
        const double s = 0.2 + 0.8 * (i % 100) / 100.0;
        pose.position = dir * s - place(hp::Pose{Vec3d{}, pose.quaternion}, Vec3d{0.3, -0.2, 0.1});
        const double m = brute_max(fx.field, fx.shell, pose);
        ASSERT_EQ(max_value(pose), m);
        const double r = max_value(pose, floor, enough);
        if (m <= floor) {
            ++below;
            EXPECT_LE(r, floor);
        } else if (m <= enough) {
            ++between;
            EXPECT_EQ(r, m);
        } else {
            ++above;
            EXPECT_GT(r, enough);
            EXPECT_LE(r, m);
        }
    }
    // All three cases occur.
    EXPECT_GT(below, 20);
    EXPECT_GT(between, 5);
    EXPECT_GT(above, 20);
}

TEST(Scenario, BadOptionsAreUsageErrors) {
    Fixture fx;
    auto code = [&](hp::ScenarioOptions o) {
        try {
            hp::generate_scenario(fx.field, fx.shell.view(), o);
        } catch (const hp::Error& e) {
            return e.exit_code();
        }
        return 0;
    };
    EXPECT_EQ(code({.count = 0}), 2);
    EXPECT_EQ(code({.count = 3, .depth = 0}), 2);
    EXPECT_EQ(code({.kind = hp::ScenarioKind::approach, .count = 3, .path_steps = 1}), 2);
    EXPECT_THROW(hp::parse_scenario_kind("walk"), hp::Error);
    EXPECT_EQ(hp::parse_scenario_kind("approach"), hp::ScenarioKind::approach);
    // A field with nothing inside: no contact can be placed.
    hp::DistanceSampler empty = sampled(fx.g, [](Vec3d) { return -1.0; });
    EXPECT_THROW(hp::generate_scenario(empty, fx.shell.view(), {.count = 1}), hp::Error);
}

// A check's poses come from a file or a scenario; with neither, the message names every scenario.
TEST(PoseSource, AFileOrAScenario) {
    const hp::PoseSource none;
    EXPECT_FALSE(none.given());
    const std::string what = hp::test::usage_error([&] { none.require(); });
    for (const char* name : {"contact", "approach", "random", "trajectory"}) EXPECT_NE(what.find(name), std::string::npos) << what;
    hp::PoseSource file;
    file.file = "poses.json";
    hp::PoseSource scenario;
    scenario.scenario = "random";
    for (const hp::PoseSource& s : {file, scenario}) {
        EXPECT_TRUE(s.given());
        EXPECT_NO_THROW(s.require());
    }
}

TEST(Poses, RoundTripAndErrors) {
    fs::path dir = temp_dir();
    std::vector<hp::Pose> poses{{{0.1, -2.5e-7, 3}, {1, 0, 0, 0}}, {{1.0 / 3, 0, 0}, {0.5, -0.5, 0.5, 0.1}}};
    hp::write_poses(dir / "p.json", poses);
    EXPECT_TRUE(same_poses(hp::read_poses(dir / "p.json"), poses));

    auto message = [&](const std::string& text) -> std::string {
        std::ofstream(dir / "bad.json") << text;
        try {
            hp::read_poses(dir / "bad.json");
        } catch (const hp::Error& e) {
            EXPECT_EQ(e.exit_code(), 3) << text;
            return e.what();
        }
        return "no error";
    };
    EXPECT_NE(message("{\"poses\": [").find("not valid JSON"), std::string::npos);
    EXPECT_NE(message("[1, 2]").find("expected {\"poses\""), std::string::npos);
    EXPECT_NE(message("{\"poses\": []}").find("empty"), std::string::npos);
    EXPECT_NE(message("{\"poses\": [3]}").find("pose 0"), std::string::npos);
    EXPECT_NE(message("{\"poses\": [{\"quaternion\": [1,0,0,0]}]}").find("no \"position\""), std::string::npos);
    std::string two = "{\"poses\": [{\"position\": [0,0,0], \"quaternion\": [1,0,0,0]}, ";
    EXPECT_NE(message(two + "{\"position\": [0,0], \"quaternion\": [1,0,0,0]}]}").find("pose 1: \"position\" must be an array of 3"),
              std::string::npos);
    EXPECT_NE(message(two + "{\"position\": [0,0,\"x\"], \"quaternion\": [1,0,0,0]}]}").find("\"position\"[2] is not a finite"),
              std::string::npos);
    EXPECT_NE(message(two + "{\"position\": [0,0,0], \"quaternion\": [0,0,0,0]}]}").find("quaternion is zero"),
              std::string::npos);
    EXPECT_NE(message(two + "{\"position\": [0,0,0], \"quaternion\": [1,0,0]}]}").find("\"quaternion\" must be an array of 4"),
              std::string::npos);
    // The file name is in the message.
    EXPECT_NE(message("{}").find("bad.json"), std::string::npos);
    EXPECT_THROW(hp::read_poses(dir / "missing.json"), hp::Error);
    fs::remove_all(dir);
}

TEST(Timing, NearestRankPercentilesByHand) {
    std::vector<double> v;
    for (int i = 1000; i >= 1; --i) v.push_back(i);
    std::shuffle(v.begin(), v.end(), std::mt19937(3));
    hp::LatencyStats s = hp::latency_stats(v);
    EXPECT_EQ(s.min, 1);
    EXPECT_EQ(s.p50, 500);   // rank ceil(0.5 * 1000) = 500
    EXPECT_EQ(s.p90, 900);
    EXPECT_EQ(s.p99, 990);
    EXPECT_EQ(s.p999, 999);
    EXPECT_EQ(s.max, 1000);
    EXPECT_DOUBLE_EQ(s.mean, 500.5);
    hp::LatencyStats three = hp::latency_stats({30, 10, 20});
    EXPECT_EQ(three.p50, 20);  // rank ceil(1.5) = 2
    EXPECT_EQ(three.p99, 30);  // rank ceil(2.97) = 3
    EXPECT_EQ(hp::latency_stats({}).max, 0);
}

TEST(Timing, TimedRunMatchesSingleQueries) {
    Fixture fx;
    std::vector<hp::Pose> poses =
        hp::generate_scenario(fx.field, fx.shell.view(), {.kind = hp::ScenarioKind::contact, .count = 10, .seed = 2});
    hp::VpsQuery q(fx.field, fx.shell.view(), {.mode = hp::QueryMode::full});
    hp::TimedRun run = hp::run_timed(q, poses, 5);
    ASSERT_EQ(run.latency_us.size(), poses.size());
    for (std::size_t i = 0; i < poses.size(); ++i) {
        hp::QueryResult r = hp::run_query(fx.field, fx.shell.view(), poses[i], {});
        EXPECT_EQ(run.results[i].contacts, r.contacts.size());
        EXPECT_EQ(run.results[i].force, r.force);
        EXPECT_EQ(run.results[i].points_tested, r.points_tested);
        EXPECT_GT(run.latency_us[i], 0.0);
    }
    // The reusable query keeps its buffers: the same pose twice reuses the contact storage.
    const hp::Contact* before = q(poses[0]).contacts.data();
    EXPECT_EQ(q(poses[0]).contacts.data(), before);
    EXPECT_THROW(hp::VpsQuery(fx.field, fx.shell.view(), {.mode = hp::QueryMode::segmented, .level = 0}), hp::Error);
}

TEST(StaticField, DistanceAndVoxelmapFiles) {
    fs::path dir = temp_dir();
    hp::GridSpec g = cube_grid(-0.5, 0.5, 0.1);
    auto layer = [](int i, int j, int k) { return 4 - std::max({std::abs(2 * i - 9), std::abs(2 * j - 9), std::abs(2 * k - 9)}) / 2; };
    auto fill_slice = [&](int z, auto* out, auto value) {
        for (int j = 0; j < g.dims[1]; ++j)
            for (int i = 0; i < g.dims[0]; ++i) out[j * g.dims[0] + i] = value(i, j, z);
    };
    hp::vdb::write(dir / "map.vdb", g,
                   {{"layers", hp::vdb::ValueType::int32,
                     [&](int z, void* out) { fill_slice(z, static_cast<std::int32_t*>(out), layer); }, -9}},
                   {{"kind", "voxelmap"}}, "hapticprep test");
    hp::StaticField map = hp::load_static_field(dir / "map.vdb");
    EXPECT_EQ(map.kind, "voxelmap");
    // V at a voxel centre = its layer x voxel size.
    EXPECT_NEAR(map.field.value(g.center(4, 4, 4)), 0.4, 1e-12);
    EXPECT_NEAR(map.field.value(g.center(0, 3, 5)), 0.0, 1e-12);

    // Scaled encoding: round(d * 10^3) / 10^3.
    hp::vdb::write(dir / "dist.vdb", g,
                   {{"distance", hp::vdb::ValueType::int32,
                     [&](int z, void* out) {
                         fill_slice(z, static_cast<std::int32_t*>(out), [](int i, int, int) { return 125 * i - 400; });
                     },
                     -1000}},
                   {{"kind", "distance"}, {"encoding", "scaled"}, {"scale_factor", 1000.0}}, "hapticprep test");
    hp::StaticField dist = hp::load_static_field(dir / "dist.vdb");
    EXPECT_EQ(dist.encoding, "scaled");
    EXPECT_NEAR(dist.field.value(g.center(2, 7, 1)), -0.15, 1e-12);

    hp::vdb::write(dir / "other.vdb", g,
                   {{"layers", hp::vdb::ValueType::int32, [&](int z, void* out) { fill_slice(z, static_cast<std::int32_t*>(out), layer); }, -9}},
                   {{"kind", "something"}}, "hapticprep test");
    EXPECT_THROW(hp::load_static_field(dir / "other.vdb"), hp::Error);
    std::ofstream(dir / "text.vdb") << "hello";
    EXPECT_THROW(hp::load_static_field(dir / "text.vdb"), hp::Error);
    fs::remove_all(dir);
}

TEST(Validation, BorderPosesAndTreeCoverage) {
    Fixture fx;
    // Ball of radius 0.5 in [-1, 1]^3: the border's largest value is at a face centre,
    // 0.5 - 0.98 (the outermost voxel centres are at +-0.98).
    EXPECT_NEAR(fx.field.border_max_value(), 0.5 - std::sqrt(0.98 * 0.98 + 0.02 * 0.02 + 0.02 * 0.02), 1e-12);
    hp::DistanceSampler big = sampled(fx.g, [](Vec3d p) { return 1.5 - hp::length(p); });
    EXPECT_GT(big.border_max_value(), 0.0);

    const Vec3d m = fx.shell.tree.clusters[0].sphere.center;
    const double r = fx.shell.tree.clusters[0].sphere.radius;
    auto at_centre = [&](Vec3d c) { return hp::Pose{c - m, {1, 0, 0, 0}}; };
    std::vector<hp::Pose> poses{at_centre({0, 0, 0}), at_centre({1 + 0.9 * r, 0, 0}), at_centre({1 + 1.1 * r, 0, 0}),
                                at_centre({1 + 0.7 * r, 1 + 0.7 * r, 0})};  // corner: 0.99 r away
    EXPECT_EQ(hp::poses_beyond_grid(fx.field, fx.shell.view(), poses), 1u);

    EXPECT_TRUE(hp::tree_covers_points(fx.shell.tree, fx.shell.points));
    hp::PointSphereTree shrunk = fx.shell.tree;
    shrunk.clusters[0].sphere.radius *= 0.9;  // the root no longer holds every point
    EXPECT_FALSE(hp::tree_covers_points(shrunk, fx.shell.points));
    hp::PointSphereTree twice = fx.shell.tree;
    for (auto& c : twice.clusters)
        if (c.children.empty()) {
            c.points.push_back(c.points[0]);  // a point in a leaf twice
            break;
        }
    EXPECT_FALSE(hp::tree_covers_points(twice, fx.shell.points));
}
