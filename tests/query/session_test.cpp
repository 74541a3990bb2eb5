#include "query/session.hpp"

#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <unistd.h>

#include "ball_fixture.hpp"
#include "../core/exit_code.hpp"

namespace fs = std::filesystem;

using hp_test::code_of;

namespace {

struct Files {
    hp_test::BallScene scene;
    fs::path dir = fs::temp_directory_path() / ("hp_session_" + std::to_string(::getpid()));
    Files() {
        fs::create_directories(dir);
        scene.write_field(dir / "ball.dist.vdb");
        scene.write_moving(dir / "sphere.hps", &scene.tree);
    }
    ~Files() { fs::remove_all(dir); }
};

}  // namespace

TEST(QuerySession, LoadsWhatWasWrittenAndAnswersLikeTheInMemoryQuery) {
    Files f;
    const hp::MovingObjectData mo = hp::load_moving_object(f.dir / "sphere.hps");
    EXPECT_EQ(mo.points, f.scene.points);
    EXPECT_EQ(mo.normals, f.scene.normals);
    ASSERT_EQ(mo.tree.clusters.size(), f.scene.tree.clusters.size());
    EXPECT_EQ(mo.tree.levels, f.scene.tree.levels);
    EXPECT_EQ(mo.metadata.value("test", ""), "ball scene");

    for (hp::QueryMode mode : {hp::QueryMode::full, hp::QueryMode::brute, hp::QueryMode::segmented}) {
        const hp::QueryOptions options{.mode = mode, .level = 2};
        hp::QuerySession session(f.dir / "ball.dist.vdb", f.dir / "sphere.hps", options);
        EXPECT_EQ(session.static_object().kind, "distance");
        EXPECT_EQ(session.options().mode, mode);
        std::size_t touching = 0;
        for (const hp::Pose& pose : f.scene.poses) {
            // The reference: run_query on the scene in memory (the files hold the same doubles).
            const hp::QueryResult want = hp::run_query(f.scene.field, f.scene.view(), pose, options);
            const hp::QueryResult& got = session.query(pose);
            ASSERT_EQ(got.contacts.size(), want.contacts.size());
            for (std::size_t i = 0; i < want.contacts.size(); ++i) {
                ASSERT_EQ(got.contacts[i].point, want.contacts[i].point);
                ASSERT_EQ(got.contacts[i].value, want.contacts[i].value);
            }
            EXPECT_EQ(got.force, want.force);
            EXPECT_EQ(got.torque, want.torque);
            EXPECT_EQ(got.max_penetration, want.max_penetration);
            EXPECT_EQ(got.points_tested, want.points_tested);
            touching += !want.contacts.empty();
        }
        EXPECT_GT(touching, 0u);
    }
}

TEST(QuerySession, DepthsMatchTheAnalyticBall) {
    // Independent check of the loaded pair: a pose with the moving sphere's centre at distance c
    // from the ball's centre has its deepest point at 0.5 - (c - 0.2), up to the interpolation
    // error of the sampled ball (well below a voxel).
    Files f;
    hp::QuerySession session(f.dir / "ball.dist.vdb", f.dir / "sphere.hps");
    for (const hp::Pose& pose : f.scene.poses) {
        const double c = hp::length(pose.position);
        const hp::QueryResult& r = session.query(pose);
        if (c < 0.68) {
            EXPECT_NEAR(r.max_penetration, 0.7 - c, 0.01) << "centre at " << c;
        }
        if (c > 0.72) {
            EXPECT_TRUE(r.contacts.empty()) << "centre at " << c;
        }
    }
}

TEST(QuerySession, MovedSessionKeepsWorking) {
    Files f;
    hp::QuerySession a(f.dir / "ball.dist.vdb", f.dir / "sphere.hps");
    const hp::Pose& pose = f.scene.poses[0];
    const hp::Vec3d force = a.query(pose).force;
    hp::QuerySession b(std::move(a));
    EXPECT_EQ(b.query(pose).force, force);
    EXPECT_EQ(b.moving_object().points.size(), f.scene.points.size());
}

TEST(QuerySession, RejectsBadFilesAndOptions) {
    Files f;
    const fs::path field = f.dir / "ball.dist.vdb", tree = f.dir / "sphere.hps";
    // A pointshell without its tree.
    f.scene.write_moving(f.dir / "plain.hps", nullptr);
    EXPECT_EQ(code_of([&] { hp::load_moving_object(f.dir / "plain.hps"); }), hp::ExitCode::bad_input);
    EXPECT_EQ(code_of([&] { hp::QuerySession(field, f.dir / "plain.hps"); }), hp::ExitCode::bad_input);
    // A tree whose root sphere no longer holds every point: the file reads, the session refuses.
    hp::PointSphereTree shrunk = f.scene.tree;
    shrunk.clusters[0].sphere.radius *= 0.5;
    f.scene.write_moving(f.dir / "shrunk.hps", &shrunk);
    EXPECT_NO_THROW(hp::load_moving_object(f.dir / "shrunk.hps"));
    try {
        hp::QuerySession(field, f.dir / "shrunk.hps");
        ADD_FAILURE() << "a tree that does not hold its points was accepted";
    } catch (const hp::Error& e) {
        EXPECT_EQ(e.code(), hp::ExitCode::bad_input);
        EXPECT_NE(std::string(e.what()).find("shrunk.hps"), std::string::npos) << e.what();
    }
    // Files swapped, a missing file, a segmentation level the tree does not have.
    EXPECT_EQ(code_of([&] { hp::QuerySession(tree, field); }), hp::ExitCode::bad_input);
    EXPECT_EQ(code_of([&] { hp::QuerySession(f.dir / "none.vdb", tree); }), hp::ExitCode::bad_input);
    EXPECT_EQ(code_of([&] {
                  hp::QuerySession(field, tree, {.mode = hp::QueryMode::segmented, .level = f.scene.tree.levels + 1});
              }),
              hp::ExitCode::usage);
}
