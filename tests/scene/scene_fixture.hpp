#pragma once
// A small scene on disk for the scene query's tests: balls (radius 0.5) and boxes placed at random
// rotations on lattices whose reach boxes touch and overlap, a tool part (a small ball with the
// sphere shell's tree and its closest feature map; more instances of it on request), and the sphere
// shell (radius 0.2) as an outside tool. Every geometry has the octree of its field's inside voxels.
// Written as
// scene.json with its files and their hashes, as haptic-pipeline --assembly writes it.
#include <cmath>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>

#include "cfm/cfm.hpp"
#include "contact/query.hpp"
#include "core/file_hash.hpp"
#include "formats/cfm.hpp"
#include "formats/octree.hpp"
#include "formats/vdb.hpp"
#include "octree/octree.hpp"
#include "scene/scene_file.hpp"
#include "scene/scene_query.hpp"
#include "../geometry/shapes.hpp"
#include "../query/ball_fixture.hpp"

namespace hp_test {

inline void expect_same_contact(const hp::Contact& a, const hp::Contact& b) {
    EXPECT_EQ(a.point, b.point);
    EXPECT_EQ(a.position, b.position);
    EXPECT_EQ(a.normal, b.normal);
    EXPECT_EQ(a.value, b.value);
    EXPECT_EQ(a.segment, b.segment);
    EXPECT_EQ(a.cluster, b.cluster);
}

// The pair query's modes with the options the scene tests run them with.
struct ModeCase {
    const char* name;
    hp::QueryOptions options;
};

inline std::vector<ModeCase> mode_cases() {
    return {{"full", {.mode = hp::QueryMode::full}},
            {"brute", {.mode = hp::QueryMode::brute}},
            {"segmented", {.mode = hp::QueryMode::segmented, .level = 2}},
            // Budgets that interrupt (split among the frame's pairs) and no time budget reached.
            {"time-critical", {.mode = hp::QueryMode::time_critical, .budget_us = 1e9, .budget_tests = 60}}};
}

// A pair of a scene's frame against the pair query run alone with the pose composed into the frame
// of the part on the other side (placed at `pl`): every contact, the force and the torque.
inline void expect_pair_is_alone(const hp::scene::FrameResult& frame, const hp::scene::PairResult& pr, const hp::Placement& pl,
                                 const hp::QueryResult& alone) {
    ASSERT_EQ(pr.contacts, alone.contacts.size()) << "part " << pr.part;
    for (std::size_t c = 0; c < alone.contacts.size(); ++c)
        expect_same_contact(frame.contacts[pr.first_contact + c], hp::scene::contact_to_world(pl, alone.contacts[c]));
    EXPECT_EQ(pr.force, hp::scene::rotate_to_world(pl, alone.force));
    EXPECT_EQ(pr.torque, hp::scene::rotate_to_world(pl, alone.torque));
    EXPECT_EQ(pr.max_penetration, alone.max_penetration);
    EXPECT_EQ(pr.interrupted, alone.interrupted);
}

// Two scene queries' frames: the same candidates, contacts and totals (thread counts).
inline void expect_same_frame(const hp::scene::FrameResult& a, const hp::scene::FrameResult& b) {
    ASSERT_EQ(a.candidates, b.candidates);
    ASSERT_EQ(a.contacts.size(), b.contacts.size());
    for (std::size_t c = 0; c < a.contacts.size(); ++c) expect_same_contact(a.contacts[c], b.contacts[c]);
    EXPECT_EQ(a.force, b.force);
    EXPECT_EQ(a.torque, b.torque);
}

inline void write_sdf(const std::filesystem::path& path, const hp::GridSpec& g, double (*f)(hp::Vec3d)) {
    hp::vdb::write(path, g,
                   {{"distance", hp::vdb::ValueType::float64,
                     [&](int z, void* out) {
                         double* o = static_cast<double*>(out);
                         for (int j = 0; j < g.dims[1]; ++j)
                             for (int i = 0; i < g.dims[0]; ++i) o[j * g.dims[0] + i] = f(g.center(i, j, z));
                     },
                     -1}},
                   {{"kind", "distance"}, {"encoding", "double"}}, "hapticprep test");
}

// The octree of the voxels of `g` whose centre is inside (f > 0), as haptic-octree makes it of a voxelmap.
inline void write_octree(const std::filesystem::path& path, const hp::GridSpec& g, double (*f)(hp::Vec3d)) {
    std::vector<std::array<int, 3>> voxels;
    for (int k = 0; k < g.dims[2]; ++k)
        for (int j = 0; j < g.dims[1]; ++j)
            for (int i = 0; i < g.dims[0]; ++i)
                if (f(g.center(i, j, k)) > 0) voxels.push_back({i, j, k});
    hp::write_octree_file(path, {{"tool", "test"}}, hp::octree::build(std::move(voxels), g.origin, g.voxel_size, false));
}

inline double box_sdf(hp::Vec3d p) {  // inside positive; half extents 0.3, 0.2, 0.4
    const hp::Vec3d q{std::abs(p.x) - 0.3, std::abs(p.y) - 0.2, std::abs(p.z) - 0.4};
    const hp::Vec3d o{std::max(q.x, 0.0), std::max(q.y, 0.0), std::max(q.z, 0.0)};
    return -(hp::length(o) + std::min(std::max({q.x, q.y, q.z}), 0.0));
}
inline double small_ball(hp::Vec3d p) { return 0.2 - hp::length(p); }

inline hp::Placement placement_of(const std::array<double, 4>& q_in, const hp::Vec3d& t) {
    const double n = std::sqrt(q_in[0] * q_in[0] + q_in[1] * q_in[1] + q_in[2] * q_in[2] + q_in[3] * q_in[3]);
    const double w = q_in[0] / n, x = q_in[1] / n, y = q_in[2] / n, z = q_in[3] / n;
    const std::array<std::array<double, 3>, 3> r{{{1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)},
                                                 {2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)},
                                                 {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)}}};
    return hp::make_placement(r, t);
}

struct SceneFiles {
    std::filesystem::path dir;
    std::filesystem::path scene_path, tool_tree, tool_cfm;
    hp::scene::Scene scene;
    BallScene ball;  // the 0.5 ball's field and the 0.2 sphere shell with its tree

    // `tool_parts` instances of the tool's geometry: "tool", "tool#2", ... (several tools at once).
    explicit SceneFiles(const std::string& tag, int balls_per_axis = 2, int boxes_per_axis = 2, int tool_parts = 1) {
        namespace fs = std::filesystem;
        dir = fs::temp_directory_path() / ("hp_scene_" + tag + "_" + std::to_string(::getpid()));
        fs::remove_all(dir);
        fs::create_directories(dir / "g0");
        fs::create_directories(dir / "g1");
        fs::create_directories(dir / "g2");
        ball.write_field(dir / "g0" / "distance.vdb");
        write_sdf(dir / "g1" / "distance.vdb", hp::test::cube_grid(-0.6, 0.6, 0.04), box_sdf);
        write_sdf(dir / "g2" / "distance.vdb", hp::test::cube_grid(-0.4, 0.4, 0.04), small_ball);
        write_octree(dir / "g0" / "octree.hoct", ball.grid, BallScene::ball);
        write_octree(dir / "g1" / "octree.hoct", hp::test::cube_grid(-0.6, 0.6, 0.04), box_sdf);
        write_octree(dir / "g2" / "octree.hoct", hp::test::cube_grid(-0.4, 0.4, 0.04), small_ball);
        ball.write_moving(dir / "g2" / "tree.hps", &ball.tree);
        tool_tree = dir / "g2" / "tree.hps";
        // The tool's closest feature map: the 0.2 sphere's mesh around its tree (coarse: a test).
        hp::TriMesh sphere = hp::test::uv_sphere(12, 24);
        for (auto& v : sphere.vertices) v = v * 0.2;
        hp::cfm::Options cfm_options;
        cfm_options.stacks = 8;
        cfm_options.min_stacks = 4;
        tool_cfm = dir / "g2" / "tree.hcfm";
        hp::write_cfm_file(tool_cfm, {{"tool", "test"}}, hp::cfm::build_cfm(sphere, ball.tree, cfm_options));

        const char* ids[] = {"g0", "g1", "g2"};
        const hp::Aabb local[] = {{{-0.5, -0.5, -0.5}, {0.5, 0.5, 0.5}}, {{-0.3, -0.2, -0.4}, {0.3, 0.2, 0.4}},
                                  {{-0.2, -0.2, -0.2}, {0.2, 0.2, 0.2}}};
        for (int g = 0; g < 3; ++g) {
            hp::scene::SceneGeometry geometry;
            geometry.id = ids[g];
            geometry.part = "@" + std::to_string(g);
            geometry.local_bounds = local[g];
            geometry.triangles = 100;
            auto add = [&](const std::string& kind, const std::string& file) {
                const fs::path p = dir / file;
                geometry.files[kind] = {file, static_cast<std::uint64_t>(fs::file_size(p)), hp::hash_file(p)};
            };
            add("distance", std::string(ids[g]) + "/distance.vdb");
            add("octree", std::string(ids[g]) + "/octree.hoct");
            if (g == 2) add("tree", "g2/tree.hps");
            if (g == 2) add("cfm", "g2/tree.hcfm");
            scene.geometries.push_back(geometry);
        }
        std::mt19937 rng(11);
        std::normal_distribution<double> gauss;
        auto add_part = [&](const std::string& name, std::size_t g, const hp::Vec3d& t) {
            hp::scene::ScenePart p;
            p.name = name;
            p.geometry = g;
            p.placement = placement_of({gauss(rng), gauss(rng), gauss(rng), gauss(rng)}, t);
            p.world_bounds = hp::world_bounds(local[g], p.placement);
            p.sphere_center = p.world_bounds.center();
            p.sphere_radius = 0.5 * p.world_bounds.diagonal();
            scene.parts.push_back(p);
            scene.geometries[g].instances++;
            if (scene.geometries[g].first_part.empty()) scene.geometries[g].first_part = name;
        };
        // Balls 1.08 apart: their reach boxes (0.54 from the centre, rotated) overlap and touch.
        for (int i = 0; i < balls_per_axis; ++i)
            for (int j = 0; j < balls_per_axis; ++j)
                for (int k = 0; k < balls_per_axis; ++k)
                    add_part("ball/" + std::to_string(i) + std::to_string(j) + std::to_string(k), 0, {1.08 * i, 1.08 * j, 1.08 * k});
        for (int i = 0; i < boxes_per_axis; ++i)
            for (int j = 0; j < boxes_per_axis; ++j)
                for (int k = 0; k < boxes_per_axis; ++k)
                    add_part("box/" + std::to_string(i) + std::to_string(j) + std::to_string(k), 1,
                             {-1.5 - 0.8 * i, 0.8 * j, 0.8 * k});
        add_part("tool", 2, {0, -1.5, 0});
        for (int t = 2; t <= tool_parts; ++t) add_part("tool#" + std::to_string(t), 2, {0.6 * t, -1.5, 0});
        scene.source_file = scene.source_name = "test.gltf";
        scene.source_hash = "0";
        scene.units = "m";
        scene.voxel_size = 0.04;
        scene.pipeline_name = "test";
        scene.params_hash = "0";
        scene_path = dir / "scene.json";
        hp::scene::write_scene(scene_path, scene);
    }
    ~SceneFiles() { std::filesystem::remove_all(dir); }

    // Poses of the tool (a body centred at its origin) near random static parts: its centre 0.2 to
    // 0.85 from the part's origin in a random direction, at a random orientation.
    std::vector<hp::Pose> poses(std::size_t n, unsigned seed, bool include_tool_part = false) const {
        std::mt19937 rng(seed);
        std::normal_distribution<double> gauss;
        std::uniform_real_distribution<double> dist(0.2, 0.85);
        const std::size_t parts = scene.parts.size() - (include_tool_part ? 0 : 1);
        std::vector<hp::Pose> out;
        for (std::size_t i = 0; i < n; ++i) {
            const hp::scene::ScenePart& p = scene.parts[rng() % parts];
            const hp::Vec3d d = hp::normalized(hp::Vec3d{gauss(rng), gauss(rng), gauss(rng)});
            out.push_back({p.placement.position + d * dist(rng), {gauss(rng), gauss(rng), gauss(rng), gauss(rng)}});
        }
        return out;
    }
};

}  // namespace hp_test
