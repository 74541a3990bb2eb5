// haptic-sim's scenes (lib/bullet/sim.hpp): copies of an object laid out for multibody runs, the
// narrow phase and the drift of a stack, and the two scene formats kept apart (docs/sim.md).
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include <gtest/gtest.h>

#include "bullet/sim.hpp"
#include "core/error.hpp"
#include "scene/scene_file.hpp"

namespace fs = std::filesystem;
namespace hb = hp::bullet;

namespace {

fs::path write_temp(const std::string& name, const std::string& text) {
    const fs::path p = fs::temp_directory_path() / ("hp_sim_test_" + std::to_string(::getpid()) + "_" + name);
    std::ofstream(p) << text;
    return p;
}

// A plane and `ball` copies of a native sphere of radius 0.5 in a column, 1 mm apart.
const char* kStack = R"({"name": "stack", "gravity": [0, 0, -10], "rate": 200, "steps": 200,
  "objects": [{"name": "ground", "plane": {"normal": [0, 0, 1], "offset": 0}},
              {"name": "ball", "sphere": 0.5, "position": [0, 0, 0.501], "mass": 1,
               "copies": {"count": [1, 3], "layout": "column", "spacing": 1.001}}]})";

}  // namespace

TEST(SimCopies, GridIsCubicLayerByLayerAndEveryCopyTurnedDifferently) {
    const fs::path file = write_temp("grid.json", R"({"objects": [
        {"name": "floor", "box": [1, 1, 0.1]},
        {"name": "b", "box": [0.1, 0.1, 0.1], "position": [1, 2, 3], "mass": 1,
         "copies": {"count": [1, 8, 9], "spacing": 0.5, "seed": 7}}]})");
    const hb::Scene scene = hb::load_scene(file);
    fs::remove(file);
    EXPECT_EQ(hb::copy_counts(scene), (std::vector<int>{1, 8, 9}));
    const std::vector<hp::Vec3d> com(2);
    const hb::Scene eight = hb::expand_copies(scene, 8, com, {0, 0});
    ASSERT_EQ(eight.objects.size(), 9u);
    EXPECT_EQ(eight.objects[0].name, "floor");
    for (int i = 0; i < 8; ++i) {
        const hb::SceneObject& o = eight.objects[static_cast<std::size_t>(i + 1)];
        EXPECT_EQ(o.name, "b#" + std::to_string(i + 1));
        EXPECT_EQ(o.group, "b");
        EXPECT_FALSE(o.copies.has_value());
        // 2 x 2 x 2 around (1, 2) from z = 3 upward, x fastest.
        EXPECT_DOUBLE_EQ(o.position.x, 1 + (i % 2 ? 0.25 : -0.25));
        EXPECT_DOUBLE_EQ(o.position.y, 2 + ((i / 2) % 2 ? 0.25 : -0.25));
        EXPECT_DOUBLE_EQ(o.position.z, 3 + 0.5 * (i / 4));
        for (int k = 0; k < i; ++k) EXPECT_NE(o.quaternion, eight.objects[static_cast<std::size_t>(k + 1)].quaternion);
    }
    // Nine copies need a 3 x 3 x 3 grid: the first layer holds all nine.
    const hb::Scene nine = hb::expand_copies(scene, 9, com, {0, 0});
    for (std::size_t i = 1; i < nine.objects.size(); ++i) EXPECT_DOUBLE_EQ(nine.objects[i].position.z, 3);
}

TEST(SimCopies, StackOfNativeSpheresStaysInItsColumnWithOneRunPerCount) {
    const fs::path file = write_temp("stack.json", kStack);
    const hb::Scene scene = hb::load_scene(file);
    fs::remove(file);
    const std::vector<hb::RunResult> runs = hb::run_scene(scene, {});
    ASSERT_EQ(runs.size(), 2u);
    EXPECT_EQ(runs[0].count, 1);
    EXPECT_EQ(runs[1].count, 3);
    ASSERT_EQ(runs[1].dynamic_objects, (std::vector<std::string>{"ball#1", "ball#2", "ball#3"}));
    for (const hb::RunResult& r : runs) {
        // Exact spheres on one vertical line: nothing pushes them sideways.
        EXPECT_LT(r.max_drift, 1e-9) << r.count;
        EXPECT_EQ(r.drift_step, 0);
        EXPECT_EQ(r.static_moved, 0);
        // At rest, each on the one below (Bullet's sphere-sphere and sphere-plane: within a few mm).
        const hb::StepRecord& last = r.steps.back();
        for (std::size_t i = 0; i < last.objects.size(); ++i)
            EXPECT_NEAR(last.objects[i].position.z, 0.5 + double(i), 0.01) << r.count << " " << i;
        // The pile's penetration is the deepest of any ball into the plane or another ball, analytic.
        double deepest = 0;
        for (std::size_t i = 0; i < last.objects.size(); ++i) {
            deepest = std::max(deepest, 0.5 - last.objects[i].position.z);
            if (i > 0) deepest = std::max(deepest, 1 - (last.objects[i].position.z - last.objects[i - 1].position.z));
        }
        double reported = 0;
        for (const hb::ObjectStep& o : last.objects) reported = std::max(reported, o.pile_penetration);
        EXPECT_NEAR(reported, deepest, 1e-6);
        EXPECT_NEAR(r.final_pile_penetration, deepest, 1e-6);
    }
    // The summary keeps the counts apart.
    const auto summary = hb::summarize(runs);
    ASSERT_EQ(summary.size(), 2u);
    EXPECT_EQ(summary[0].count, 1);
    EXPECT_EQ(summary[1].count, 3);
}

TEST(SimCopies, BadCopiesNameTheKey) {
    auto message = [](const std::string& copies) {
        const fs::path file = write_temp("bad.json", R"({"objects": [{"name": "g", "plane": {"normal": [0, 0, 1]}},
            {"name": "b", "sphere": 1, "mass": 1, "copies": )" + copies + "}]}");
        std::string what;
        try {
            hb::load_scene(file);
        } catch (const hp::Error& e) {
            what = e.what();
            EXPECT_EQ(e.code(), hp::ExitCode::bad_input);
        }
        fs::remove(file);
        return what;
    };
    EXPECT_NE(message(R"({"count": 0})").find("objects[1].copies.count: must be an integer >= 1"), std::string::npos);
    EXPECT_NE(message(R"({"count": [2, "x"]})").find("objects[1].copies.count[1]"), std::string::npos);
    EXPECT_NE(message(R"({"count": 2, "layout": "heap"})").find("objects[1].copies.layout"), std::string::npos);
    EXPECT_NE(message(R"({"count": 2, "gap": 1})").find("objects[1].copies.gap: unknown key"), std::string::npos);
}

// A traversal is spelled as haptic-query's mode of the same name; brute is a query mode but no traversal.
TEST(SimScene, TraversalsAreSpelledAsTheQueryModes) {
    auto load = [](const std::string& traversal) {
        const fs::path file = write_temp("traversal.json", R"({"objects": [{"name": "g", "plane": {"normal": [0, 0, 1]}},
            {"name": "b", "sphere": 1, "mass": 1, "traversal": ")" + traversal + "\"}]}");
        try {
            const hb::Scene scene = hb::load_scene(file);
            fs::remove(file);
            return scene;
        } catch (...) {
            fs::remove(file);
            throw;
        }
    };
    EXPECT_EQ(load("full").objects[1].method.traversal.traversal, hb::Traversal::full);
    EXPECT_EQ(load("segmented").objects[1].method.traversal.traversal, hb::Traversal::segmented);
    EXPECT_EQ(load("time-critical").objects[1].method.traversal.traversal, hb::Traversal::time_critical);
    try {
        load("brute");
        ADD_FAILURE() << "traversal brute accepted";
    } catch (const hp::Error& e) {
        EXPECT_EQ(e.code(), hp::ExitCode::bad_input);
        EXPECT_NE(std::string(e.what()).find("objects[1].traversal: unknown traversal 'brute' (full, segmented, time-critical)"),
                  std::string::npos)
            << e.what();
    }
}

TEST(SimFormats, NeitherSceneFormatIsMistakenForTheOther) {
    // A scene.json of haptic-pipeline --assembly is not a haptic-sim scene file...
    const fs::path assembly = write_temp("assembly.json", R"({"format": "hapticprep-scene", "format_version": 1,
        "parts": [], "geometries": []})");
    try {
        hb::load_scene(assembly);
        ADD_FAILURE() << "load_scene read a scene.json";
    } catch (const hp::Error& e) {
        EXPECT_EQ(e.code(), hp::ExitCode::bad_input);
        EXPECT_NE(std::string(e.what()).find("is not a haptic-sim scene file"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("--dynamic"), std::string::npos) << e.what();
    }
    fs::remove(assembly);
    // ... and a haptic-sim scene file is not a scene.json.
    const fs::path sim = fs::path(HP_SOURCE_DIR) / "scenes" / "bouncing-ball.json";
    EXPECT_FALSE(hp::scene::looks_like_scene(sim));
    EXPECT_THROW(hp::scene::read_scene(sim), hp::Error);
    EXPECT_THROW(hb::scene_from_assembly(sim, {{"ball", 1}}), hp::Error);
}

// A plane normal or a quaternion of large or small components is of unit length once read: the
// squares of components beyond about 1e154 overflow (a normal of [0, 0, 1e200] became zeros).
TEST(SimScene, NormalsAndQuaternionsOfAnyMagnitudeAreMadeUnit) {
    for (const char* c : {"1e200", "1e-200", "3"}) {
        const std::string v(c);
        const fs::path file = write_temp("unit.json", R"({"objects": [{"name": "g", "plane": {"normal": [0, 0, )" + v +
                                                          R"(]}}, {"name": "b", "sphere": 1, "mass": 1, "quaternion": [0, )" + v +
                                                          ", 0, " + v + "]}]}");
        const hb::Scene scene = hb::load_scene(file);
        fs::remove(file);
        EXPECT_EQ(scene.objects[0].normal.x, 0) << v;
        EXPECT_EQ(scene.objects[0].normal.z, 1) << v;
        const std::array<double, 4>& q = scene.objects[1].quaternion;
        EXPECT_EQ(q[0], 0) << v;
        EXPECT_NEAR(q[1], std::sqrt(0.5), 1e-15) << v;
        EXPECT_NEAR(q[3], std::sqrt(0.5), 1e-15) << v;
    }
}
