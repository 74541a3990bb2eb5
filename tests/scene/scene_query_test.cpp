#include "scene/scene_query.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "query/session.hpp"
#include "query/static_field.hpp"
#include "scene/broad_phase.hpp"
#include "scene/scene_check.hpp"
#include "scene_fixture.hpp"

namespace fs = std::filesystem;

namespace {

using hp::scene::SceneQuery;

}  // namespace

TEST(ScenePose, ComposeIntoUndoesThePlacement) {
    const hp::Placement pl = hp_test::placement_of({0.3, -0.5, 0.7, 0.2}, {1, 2, 3});
    const hp::Pose world{{0.4, -0.2, 1.1}, {0.9, 0.1, -0.3, 0.2}};
    const hp::Pose local = hp::scene::compose_into(pl, world);
    const auto rw = hp::rotation_rows(world.quaternion), rl = hp::rotation_rows(local.quaternion);
    for (const hp::Vec3d p : {hp::Vec3d{0.1, 0.2, 0.3}, hp::Vec3d{-1, 0.5, 2}}) {
        const hp::Vec3d in_world{hp::dot(rw[0], p) + world.position.x, hp::dot(rw[1], p) + world.position.y,
                                 hp::dot(rw[2], p) + world.position.z};
        const hp::Vec3d in_part{hp::dot(rl[0], p) + local.position.x, hp::dot(rl[1], p) + local.position.y,
                                hp::dot(rl[2], p) + local.position.z};
        const hp::Vec3d back = pl.apply(in_part);
        EXPECT_NEAR(back.x, in_world.x, 1e-12);
        EXPECT_NEAR(back.y, in_world.y, 1e-12);
        EXPECT_NEAR(back.z, in_world.z, 1e-12);
    }
}

TEST(BroadPhase, FindsWhatTestingEveryBoxFindsIncludingBoxesThatOnlyTouch) {
    std::mt19937 rng(5);
    std::uniform_real_distribution<double> u(0, 10), size(0.01, 1);
    // Coordinates on a grid of 1/64: the touching balls below are exact.
    auto dyadic = [](double v) { return std::round(v * 64) / 64; };
    std::vector<hp::Aabb> boxes;
    for (int i = 0; i < 500; ++i) {
        const hp::Vec3d lo{dyadic(u(rng)), dyadic(u(rng)), dyadic(u(rng))};
        boxes.push_back({lo, lo + hp::Vec3d{dyadic(size(rng)) + 0.03125, dyadic(size(rng)) + 0.03125, dyadic(size(rng)) + 0.03125}});
    }
    boxes.push_back({});  // empty: never reported
    const hp::scene::BroadPhase bp(boxes);
    std::vector<std::uint32_t> a, b;
    for (int i = 0; i < 3000; ++i) {
        hp::Vec3d c{u(rng), u(rng), u(rng)};
        double r = 0.5 * size(rng);
        if (i % 3 == 0) {
            // A ball that touches box i exactly on a face: distance == radius.
            const hp::Aabb& box = boxes[static_cast<std::size_t>(i) % 500];
            c = {box.max.x + 0.25, box.center().y, box.center().z};
            r = 0.25;
            ASSERT_EQ(hp::scene::squared_distance(box, c), r * r);
        }
        bp.query(c, r, a);
        bp.query_brute(c, r, b);
        ASSERT_EQ(a, b) << "ball " << i;
        if (i % 3 == 0) {
            EXPECT_TRUE(std::binary_search(a.begin(), a.end(), static_cast<std::uint32_t>(i % 500)));
        }
    }
}

// Any count of boxes (partial leaves and nodes), coordinates that floats do not hold (a node's
// float bounds are rounded outwards), balls whose radius is the distance to one box's corner, edge
// or face as it rounds: the hierarchy's vector tests decide as testing every box does.
TEST(BroadPhase, AgreesWithTestingEveryBoxForAnyCountAndUnroundedCoordinates) {
    std::mt19937 rng(11);
    std::uniform_real_distribution<double> u(-1, 1), size(1e-4, 0.3);
    for (const int n : {0, 1, 2, 3, 4, 5, 7, 16, 17, 63, 300}) {
        std::vector<hp::Aabb> boxes;
        for (int i = 0; i < n; ++i) {
            const hp::Vec3d lo{1000 + u(rng), -2000 + u(rng), 0.1 * u(rng)};
            boxes.push_back({lo, lo + hp::Vec3d{size(rng), size(rng), size(rng)}});
        }
        const hp::scene::BroadPhase bp(boxes);
        ASSERT_EQ(bp.size(), boxes.size());
        std::vector<std::uint32_t> a, b;
        for (int i = 0; i < 400; ++i) {
            hp::Vec3d c{1000 + 1.5 * u(rng), -2000 + 1.5 * u(rng), 0.2 * u(rng)};
            double r = 0.2 * size(rng);
            if (n > 0 && i % 2 == 0) {
                // The radius of a ball that reaches box k as closely as doubles allow.
                const std::size_t k = static_cast<std::size_t>(i) % boxes.size();
                r = std::sqrt(hp::scene::squared_distance(boxes[k], c));
            }
            bp.query(c, r, a);
            bp.query_brute(c, r, b);
            ASSERT_EQ(a, b) << n << " boxes, ball " << i;
        }
    }
}

TEST(SceneQuery, ReachHoldsEveryPointWhereTheFieldIsPositive) {
    hp_test::SceneFiles f("reach", 1, 1);
    const hp::StaticField st = hp::load_static_field(f.dir / "g1" / "distance.vdb");
    const hp::Aabb reach = hp::scene::positive_reach(st.field);
    ASSERT_FALSE(reach.empty());
    std::mt19937 rng(3);
    std::uniform_real_distribution<double> u(-1.5, 1.5);
    for (int i = 0; i < 200000; ++i) {
        const hp::Vec3d p{u(rng), u(rng), u(rng)};
        if (st.field.value(p) > 0) {
            ASSERT_GE(p.x, reach.min.x);
            ASSERT_LE(p.x, reach.max.x);
            ASSERT_GE(p.y, reach.min.y);
            ASSERT_LE(p.y, reach.max.y);
            ASSERT_GE(p.z, reach.min.z);
            ASSERT_LE(p.z, reach.max.z);
        }
    }
    // Not much more than the box and one voxel.
    EXPECT_LE(reach.max.x, 0.3 + 2 * 0.04);
    EXPECT_GE(reach.max.x, 0.3);
}

// (a) Per part and frame, the scene's contacts are the pair query's, run alone on that part's
// files with the composed pose, in every mode; for any thread count.
TEST(SceneQuery, EveryPairEqualsThePairQueryRunAloneInEveryMode) {
    hp_test::SceneFiles f("pairs");
    const std::vector<hp::Pose> poses = f.poses(60, 21);
    const hp::MovingObjectData tool = hp::load_moving_object(f.tool_tree);
    for (const hp_test::ModeCase& mc : hp_test::mode_cases()) {
        SCOPED_TRACE(mc.name);
        SceneQuery one(f.scene_path, {.part = "", .tree_file = f.tool_tree}, mc.options, 1);
        SceneQuery three(f.scene_path, {.part = "", .tree_file = f.tool_tree}, mc.options, 3);
        std::vector<hp::StaticField> fields;
        for (const char* g : {"g0", "g1", "g2"}) fields.push_back(hp::load_static_field(f.dir / g / "distance.vdb"));
        std::size_t pairs_with_contacts = 0, frames_with_two = 0, interrupted = 0;
        for (const hp::Pose& pose : poses) {
            const hp::scene::FrameResult& a = one.query(pose);
            const hp::scene::FrameResult b = three.query(pose);
            {
                SCOPED_TRACE("threads 1 and 3");
                hp_test::expect_same_frame(a, b);
            }
            frames_with_two += a.parts_touched >= 2;
            hp::Vec3d force, torque;
            for (std::size_t k = 0; k < a.pairs.size(); ++k) {
                const hp::scene::PairResult& pr = a.pairs[k];
                // The placement as read back from scene.json (its matrix is rebuilt from the quaternion).
                const hp::scene::ScenePart& part = one.scene().parts[pr.part];
                ASSERT_EQ(pr.part, a.candidates[k]);
                const hp::QueryResult alone = hp::run_query(fields[part.geometry].field, tool.view(),
                                                            hp::scene::compose_into(part.placement, pose),
                                                            one.pair_options(a.candidates.size()));
                hp_test::expect_pair_is_alone(a, pr, part.placement, alone);
                pairs_with_contacts += !alone.contacts.empty();
                interrupted += alone.interrupted;
                force = force + pr.force;
                torque = torque + pr.torque;
            }
            EXPECT_EQ(a.force, force);
            EXPECT_EQ(a.torque, torque);
        }
        EXPECT_GT(pairs_with_contacts, 20u);
        EXPECT_GT(frames_with_two, 0u);
        if (mc.options.mode == hp::QueryMode::time_critical) {
            EXPECT_GT(interrupted, 0u);
        }
    }
}

// (b) No part whose pair query has a contact is left out of the broad phase: every static part
// tried by brute force, at random poses, poses near the parts and poses whose ball only touches a
// part's reach box.
TEST(SceneQuery, BroadPhaseNeverDropsAPartWithAContact) {
    hp_test::SceneFiles f("broad");
    const hp::MovingObjectData tool = hp::load_moving_object(f.tool_tree);
    SceneQuery sq(f.scene_path, {.part = "", .tree_file = f.tool_tree}, {.mode = hp::QueryMode::full}, 1);
    std::vector<hp::StaticField> fields;
    for (const char* g : {"g0", "g1", "g2"}) fields.push_back(hp::load_static_field(f.dir / g / "distance.vdb"));
    std::vector<hp::Pose> poses = f.poses(400, 8);
    std::mt19937 rng(9);
    std::normal_distribution<double> gauss;
    // The tool's ball touching a reach box at a face, an edge and a corner.
    for (std::uint32_t part : sq.static_parts()) {
        const hp::Aabb& b = sq.reach(part);
        const double r = sq.tool_radius();
        for (const hp::Vec3d& c : {hp::Vec3d{b.max.x + r, b.center().y, b.center().z},
                                   hp::Vec3d{b.center().x, b.min.y - r, b.center().z},
                                   b.max + hp::normalized({1, 1, 0}) * r * 0.999999, b.min - hp::normalized({1, 1, 1}) * r * 0.999999}) {
            hp::Pose p{{}, {gauss(rng), gauss(rng), gauss(rng), gauss(rng)}};
            const auto rot = hp::rotation_rows(p.quaternion);
            const hp::Vec3d m = sq.tool_center();
            p.position = c - hp::Vec3d{hp::dot(rot[0], m), hp::dot(rot[1], m), hp::dot(rot[2], m)};
            poses.push_back(p);
        }
    }
    std::size_t contacts = 0, dropped = 0;
    std::vector<std::uint32_t> candidates;
    for (const hp::Pose& pose : poses) {
        sq.candidates(pose, candidates);
        for (std::uint32_t part : sq.static_parts()) {
            const hp::scene::ScenePart& p = sq.scene().parts[part];
            const hp::QueryResult r = hp::run_query(fields[p.geometry].field, tool.view(), hp::scene::compose_into(p.placement, pose),
                                                    {.mode = hp::QueryMode::brute});
            if (r.contacts.empty()) continue;
            ++contacts;
            if (!std::binary_search(candidates.begin(), candidates.end(), part)) {
                ++dropped;
                ADD_FAILURE() << "part " << p.name << " has " << r.contacts.size() << " contacts but is not a candidate";
            }
        }
    }
    EXPECT_GT(contacts, 100u);
    EXPECT_EQ(dropped, 0u);
}

TEST(SceneQuery, LoadsEachGeometryOnceWhateverItsInstances) {
    hp_test::SceneFiles f("memory", 5, 5);  // 125 balls, 125 boxes
    SceneQuery sq(f.scene_path, {.part = "tool", .tree_file = {}}, {}, 1);
    EXPECT_EQ(sq.static_parts().size(), 250u);
    EXPECT_EQ(sq.geometries_loaded(), 2u);
    const hp::StaticField a = hp::load_static_field(f.dir / "g0" / "distance.vdb");
    const hp::StaticField b = hp::load_static_field(f.dir / "g1" / "distance.vdb");
    EXPECT_EQ(sq.memory_bytes(), a.field.memory_bytes() + b.field.memory_bytes());
    // The tool part is not static: its own instance is never a candidate.
    const std::size_t tool = *sq.tool_part();
    std::vector<std::uint32_t> c;
    sq.candidates({f.scene.parts[tool].placement.position, {1, 0, 0, 0}}, c);
    EXPECT_TRUE(std::find(c.begin(), c.end(), tool) == c.end());
}

// (c) Bad input: exit 3, one line naming the scene and the part (and the file).
TEST(SceneQuery, RefusesMissingOrChangedFilesAndUnknownToolsNamingThePart) {
    auto message_of = [](auto&& make) -> std::pair<hp::ExitCode, std::string> {
        try {
            make();
        } catch (const hp::Error& e) {
            return {e.code(), e.what()};
        }
        return {hp::ExitCode::ok, ""};
    };
    {
        hp_test::SceneFiles f("missing", 1, 1);
        fs::remove(f.dir / "g1" / "distance.vdb");
        const auto [code, what] = message_of([&] { SceneQuery(f.scene_path, {.part = "tool", .tree_file = {}}, {}, 1); });
        EXPECT_EQ(code, hp::ExitCode::bad_input);
        EXPECT_NE(what.find("scene.json"), std::string::npos) << what;
        EXPECT_NE(what.find("box/000"), std::string::npos) << what;
        EXPECT_NE(what.find("g1/distance.vdb"), std::string::npos) << what;
        EXPECT_NE(what.find("missing"), std::string::npos) << what;
        EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
    {
        hp_test::SceneFiles f("changed", 1, 1);
        std::ofstream(f.dir / "g2" / "tree.hps", std::ios::app) << 'x';
        const auto [code, what] = message_of([&] { SceneQuery(f.scene_path, {.part = "tool", .tree_file = {}}, {}, 1); });
        EXPECT_EQ(code, hp::ExitCode::bad_input);
        EXPECT_NE(what.find("part 'tool'"), std::string::npos) << what;
        EXPECT_NE(what.find("g2/tree.hps"), std::string::npos) << what;
        EXPECT_NE(what.find("changed"), std::string::npos) << what;
        EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
    {
        hp_test::SceneFiles f("unknown", 1, 1);
        const auto [code, what] = message_of([&] { SceneQuery(f.scene_path, {.part = "no/such/part", .tree_file = {}}, {}, 1); });
        EXPECT_EQ(code, hp::ExitCode::bad_input);
        EXPECT_NE(what.find("no/such/part"), std::string::npos) << what;
        EXPECT_NE(what.find("scene.json"), std::string::npos) << what;
        EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
    {
        hp_test::SceneFiles f("notree", 1, 1);
        const auto [code, what] = message_of([&] { SceneQuery(f.scene_path, {.part = "box/000", .tree_file = {}}, {}, 1); });
        EXPECT_EQ(code, hp::ExitCode::bad_input);
        EXPECT_NE(what.find("part 'box/000'"), std::string::npos) << what;
        EXPECT_NE(what.find("tree"), std::string::npos) << what;
    }
}

TEST(SceneCheck, ScenarioPosesTouchTheirTargetsAndReportEveryFigure) {
    hp_test::SceneFiles f("check", 1, 1);
    hp::scene::SceneCheckSpec spec;
    spec.scene_path = f.scene_path;
    spec.tool = {.part = "tool", .tree_file = {}};
    spec.poses.scenario = "contact";
    spec.poses.count = 40;
    spec.poses.depth = 1;
    const hp::scene::SceneCheck check = hp::scene::run_scene_check(spec);
    ASSERT_EQ(check.frames.size(), 40u);
    for (const hp::scene::FrameSummary& fr : check.frames) {
        EXPECT_GE(fr.parts_touched, 1u);
        EXPECT_GE(fr.broad_phase_parts, fr.parts_touched);
    }
    for (const char* key : {"broad_phase_parts", "parts_touched", "contacts", "broad_phase_us", "narrow_phase_us", "frame_us"})
        EXPECT_TRUE(check.report.contains(key) && check.report[key].contains("p99")) << key;
    const std::string csv = hp::scene::to_csv(check);
    EXPECT_EQ(csv.substr(0, 12), "frame,part,c");
    EXPECT_NE(csv.find(",ball/000,"), std::string::npos);
    EXPECT_NE(csv.find(",*,"), std::string::npos);
    // The same poses again: reproducible.
    EXPECT_EQ(hp::scene::run_scene_check(spec).poses[0].size(), 40u);
    const auto again = hp::scene::run_scene_check(spec).poses[0];
    for (std::size_t i = 0; i < again.size(); ++i) {
        EXPECT_EQ(again[i].position, check.poses[0][i].position);
        EXPECT_EQ(again[i].quaternion, check.poses[0][i].quaternion);
    }
}
