// Several tools at once (SceneQuery with a vector of tools, run_scene_check with several tools):
// every pair of a frame, a tool against a static part or against another tool, equals the pair
// query run alone on the files of the part on the other side, with the pose composed into its
// frame; the broad phase drops no tool-tool contact; an outside tool is never the static side.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "query/session.hpp"
#include "query/static_field.hpp"
#include "scene/scene_check.hpp"
#include "scene/scene_query.hpp"
#include "formats/octree.hpp"
#include "query/ist_check.hpp"
#include "scene_fixture.hpp"

namespace {

using hp::scene::SceneQuery;

// Tools "tool" and "tool#2" (parts with the small ball's field and the 0.2 shell's tree) and the
// same shell as an outside tool.
std::vector<hp::scene::ToolSpec> three_tools(const hp_test::SceneFiles& f) {
    return {{.part = "tool", .tree_file = {}}, {.part = "tool#2", .tree_file = {}}, {.part = "", .tree_file = f.tool_tree}};
}

// Frames of three poses: tool 0 near a random static part; tool 1 near tool 0 (their balls of 0.2
// overlapping) in half the frames, else near another static part; the outside tool near tool 0 or
// tool 1 or a static part.
std::vector<std::vector<hp::Pose>> frames(const hp_test::SceneFiles& f, std::size_t statics, std::size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<double> gauss;
    std::uniform_real_distribution<double> near(0.2, 0.85), close(0.05, 0.39);
    auto direction = [&] { return hp::normalized(hp::Vec3d{gauss(rng), gauss(rng), gauss(rng)}); };
    auto rotation = [&] { return std::array<double, 4>{gauss(rng), gauss(rng), gauss(rng), gauss(rng)}; };
    auto by_part = [&] {
        return hp::Pose{f.scene.parts[rng() % statics].placement.position + direction() * near(rng), rotation()};
    };
    std::vector<std::vector<hp::Pose>> out;
    for (std::size_t i = 0; i < n; ++i) {
        const hp::Pose a = by_part();
        const hp::Pose b = i % 2 ? hp::Pose{a.position + direction() * close(rng), rotation()} : by_part();
        const hp::Pose c = i % 3 == 0 ? hp::Pose{b.position + direction() * close(rng), rotation()} : by_part();
        out.push_back({a, b, c});
    }
    return out;
}

// What expect_every_pair_alone saw, for the tests to check that their poses did reach every case.
struct PairCounts {
    std::size_t tool_pairs_touching = 0, static_pairs_touching = 0, interrupted = 0, cfm_contacts = 0;
};

// Every pair of every frame (one thread and three) against the pair query run alone with the
// pose composed into the frame of the part on the other side; `shell` is the tools' moving object
// as loaded alone (the three tools share the 0.2 shell's tree, and its map when it has one).
PairCounts expect_every_pair_alone(const hp_test::SceneFiles& f, const std::vector<hp::scene::ToolSpec>& tools,
                                   const hp::QueryOptions& options, const hp::MovingObject& shell,
                                   const std::vector<std::vector<hp::Pose>>& poses) {
    const std::size_t statics = f.scene.parts.size() - 2;
    std::vector<hp::StaticField> fields;
    for (const char* g : {"g0", "g1", "g2"}) fields.push_back(hp::load_static_field(f.dir / g / "distance.vdb"));
    SceneQuery one(f.scene_path, options, tools, 1);
    SceneQuery three(f.scene_path, options, tools, 3);
    EXPECT_EQ(one.tool_count(), 3u);
    EXPECT_EQ(one.static_parts().size(), statics);
    EXPECT_TRUE(one.tool_has_field(0));
    EXPECT_TRUE(one.tool_has_field(1));
    EXPECT_FALSE(one.tool_has_field(2));
    PairCounts n;
    for (const auto& frame : poses) {
        const hp::scene::FrameResult& a = one.query(frame);
        const hp::scene::FrameResult b = three.query(frame);
        hp_test::expect_same_frame(a, b);
        EXPECT_EQ(a.tools.size(), 3u);
        const hp::QueryOptions pair_options = one.pair_options(a.pairs.size());
        for (std::size_t t = 0; t < a.tools.size(); ++t) {
            const hp::scene::ToolResult& tr = a.tools[t];
            hp::Vec3d force;
            std::size_t contacts = 0;
            for (std::size_t k = tr.first_pair; k < tr.first_pair + tr.pairs; ++k) {
                const hp::scene::PairResult& pr = a.pairs[k];
                EXPECT_EQ(pr.tool, t);
                // The other side: a static part at its placement, or a tool part at its pose.
                const bool is_tool = pr.other_tool >= 0;
                const hp::Placement pl = is_tool ? hp::scene::placement_of(frame[static_cast<std::size_t>(pr.other_tool)])
                                                 : one.scene().parts[pr.part].placement;
                EXPECT_EQ(is_tool, pr.part >= statics);  // the outside tool (no part) is never on this side
                const hp::QueryResult alone = hp::run_query(fields[f.scene.parts[pr.part].geometry].field, shell,
                                                            hp::scene::compose_into(pl, frame[t]), pair_options);
                hp_test::expect_pair_is_alone(a, pr, pl, alone);
                EXPECT_EQ(pr.cfm_contacts, alone.cfm_contacts);
                EXPECT_EQ(b.pairs[k].cfm_contacts, alone.cfm_contacts);
                (is_tool ? n.tool_pairs_touching : n.static_pairs_touching) += !alone.contacts.empty();
                n.interrupted += alone.interrupted;
                n.cfm_contacts += alone.cfm_contacts;
                force = force + pr.force;
                contacts += pr.contacts;
            }
            EXPECT_EQ(tr.force, force);
            EXPECT_EQ(tr.contacts, contacts);
        }
    }
    return n;
}

}  // namespace

TEST(SceneTools, EveryPairEqualsThePairQueryRunAloneAgainstPartsAndTools) {
    hp_test::SceneFiles f("tools", 2, 2, 2);
    const auto poses = frames(f, f.scene.parts.size() - 2, 80, 4);
    const hp::MovingObjectData shell = hp::load_moving_object(f.tool_tree);
    for (const hp_test::ModeCase& mc : hp_test::mode_cases()) {
        SCOPED_TRACE(mc.name);
        const PairCounts n = expect_every_pair_alone(f, three_tools(f), mc.options, shell.view(), poses);
        EXPECT_GT(n.tool_pairs_touching, 20u);
        EXPECT_GT(n.static_pairs_touching, 20u);
        EXPECT_EQ(n.cfm_contacts, 0u);
        if (mc.options.mode == hp::QueryMode::time_critical) {
            EXPECT_GT(n.interrupted, 0u);
        }
    }
}

// With the tools' closest feature maps (the parts' from scene.json, the outside tool's file): every
// pair equals the pair query run alone with the shell's map attached (haptic-query --cfm), its
// interrupted pairs with the map's contacts, for one thread and three.
TEST(SceneTools, WithClosestFeatureMapsEveryPairEqualsThePairQueryRunAloneWithTheMap) {
    hp_test::SceneFiles f("cfm", 2, 2, 2);
    const auto poses = frames(f, f.scene.parts.size() - 2, 60, 5);
    hp::MovingObjectData shell = hp::load_moving_object(f.tool_tree);
    hp::attach_cfm(shell, f.tool_cfm, f.tool_tree);
    auto tools = three_tools(f);
    for (auto& t : tools) t.cfm = true;
    tools[2].cfm_file = f.tool_cfm;
    for (std::size_t budget : {20, 60, 400}) {
        SCOPED_TRACE(budget);
        const hp::QueryOptions options{.mode = hp::QueryMode::time_critical, .budget_us = 1e9, .budget_tests = budget};
        const PairCounts n = expect_every_pair_alone(f, tools, options, shell.view(), poses);
        EXPECT_GT(n.static_pairs_touching, 10u);
        EXPECT_GT(n.tool_pairs_touching, 10u);
        EXPECT_GT(n.interrupted, 0u);
        EXPECT_GT(n.cfm_contacts, 0u);  // the maps were attached and used
    }
    SceneQuery sq(f.scene_path, {.mode = hp::QueryMode::time_critical, .budget_tests = 40}, tools, 1);
    for (std::size_t t = 0; t < 3; ++t) EXPECT_EQ(sq.tool_cfm_file(t).filename(), "tree.hcfm");
}

TEST(SceneTools, ClosestFeatureMapsRefuseOtherModesAnOutsideToolWithoutItsFileAndABadScene) {
    hp_test::SceneFiles f("cfmbad", 1, 1, 1);
    const hp::QueryOptions tc{.mode = hp::QueryMode::time_critical, .budget_tests = 40};
    auto code_and_message = [&](const std::filesystem::path& scene, const hp::QueryOptions& o, const hp::scene::ToolSpec& tool) {
        try {
            SceneQuery(scene, tool, o, 1);
        } catch (const hp::Error& e) {
            return std::make_pair(e.code(), std::string(e.what()));
        }
        return std::make_pair(hp::ExitCode::ok, std::string());
    };
    const hp::scene::ToolSpec part{.part = "tool", .tree_file = {}, .cfm = true, .cfm_file = {}};
    EXPECT_EQ(code_and_message(f.scene_path, tc, part).first, hp::ExitCode::ok);
    EXPECT_EQ(code_and_message(f.scene_path, {.mode = hp::QueryMode::full}, part).first, hp::ExitCode::usage);
    EXPECT_EQ(code_and_message(f.scene_path, tc, {.part = "", .tree_file = f.tool_tree, .cfm = true, .cfm_file = {}}).first,
              hp::ExitCode::usage);
    EXPECT_EQ(code_and_message(f.scene_path, tc, {.part = "tool", .tree_file = {}, .cfm = true, .cfm_file = f.tool_cfm}).first,
              hp::ExitCode::usage);

    // A scene without the tool geometry's map: exit 3 naming the scene, the part and the stage to add.
    hp::scene::Scene no_map = f.scene;
    no_map.geometries[2].files.erase("cfm");
    const std::filesystem::path no_map_path = f.dir / "no_map.json";
    hp::scene::write_scene(no_map_path, no_map);
    auto [code, what] = code_and_message(no_map_path, tc, part);
    EXPECT_EQ(code, hp::ExitCode::bad_input);
    for (const char* word : {"no_map.json", "part 'tool'", "cfm stage"}) EXPECT_NE(what.find(word), std::string::npos) << what;
    // The map changed since the scene was prepared (a valid map of the same tree, sampled
    // otherwise): exit 3 naming the file and the part, from its hash.
    const hp::MovingObjectData shell = hp::load_moving_object(f.tool_tree);
    hp::cfm::Options o;
    o.stacks = 10;
    o.min_stacks = 4;
    hp::write_cfm_file(f.tool_cfm, {{"tool", "test"}}, hp::cfm::build_cfm(hp::test::uv_sphere(6, 12), shell.tree, o));
    std::tie(code, what) = code_and_message(f.scene_path, tc, part);
    EXPECT_EQ(code, hp::ExitCode::bad_input);
    for (const char* word : {"scene.json", "part 'tool'", "tree.hcfm"}) EXPECT_NE(what.find(word), std::string::npos) << what;
    // Without the map asked for, the changed map is not read.
    EXPECT_EQ(code_and_message(f.scene_path, tc, {.part = "tool", .tree_file = {}, .cfm = false, .cfm_file = {}}).first,
              hp::ExitCode::ok);
    // Deleted: exit 3 as well.
    std::filesystem::remove(f.tool_cfm);
    std::tie(code, what) = code_and_message(f.scene_path, tc, part);
    EXPECT_EQ(code, hp::ExitCode::bad_input);
    EXPECT_NE(what.find("tree.hcfm"), std::string::npos) << what;
}

// No tool-tool contact is dropped by the broad phase: every tool against every other tool part,
// by brute force, at poses where their balls overlap and where they are apart (a ball that only
// touches a reach box is tested for the static parts, by the same test, in scene_query_test.cpp).
TEST(SceneTools, BroadPhaseNeverDropsAToolWithAContact) {
    hp_test::SceneFiles f("toolbroad", 1, 1, 2);
    const std::size_t statics = f.scene.parts.size() - 2;
    SceneQuery sq(f.scene_path, {.mode = hp::QueryMode::full}, three_tools(f), 1);
    const hp::StaticField ball = hp::load_static_field(f.dir / "g2" / "distance.vdb");
    std::size_t contacts = 0;
    std::vector<std::uint32_t> candidates;
    for (const auto& frame : frames(f, statics, 400, 12)) {
        for (std::size_t t = 0; t < 3; ++t) {
            sq.candidates(t, frame, candidates);
            for (std::size_t u = 0; u < 2; ++u) {
                if (u == t) continue;
                const hp::QueryResult r = hp::run_query(ball.field, sq.tool_view(t),
                                                        hp::scene::compose_into(hp::scene::placement_of(frame[u]), frame[t]),
                                                        {.mode = hp::QueryMode::brute});
                if (r.contacts.empty()) continue;
                ++contacts;
                EXPECT_TRUE(std::binary_search(candidates.begin(), candidates.end(), static_cast<std::uint32_t>(*sq.tool_part(u))))
                    << "tool " << t << " touches tool " << u << " but does not have it as a candidate";
            }
            EXPECT_TRUE(std::is_sorted(candidates.begin(), candidates.end()));
        }
    }
    EXPECT_GT(contacts, 50u);
}

TEST(SceneTools, RefusesAPartGivenTwiceAndAFrameWithoutAPosePerTool) {
    hp_test::SceneFiles f("twice", 1, 1, 2);
    try {
        SceneQuery(f.scene_path, {}, std::vector<hp::scene::ToolSpec>{{.part = "tool", .tree_file = {}}, {.part = "tool", .tree_file = {}}},
                   1);
        ADD_FAILURE() << "a part given twice as a tool was accepted";
    } catch (const hp::Error& e) {
        EXPECT_EQ(e.code(), hp::ExitCode::usage);
        EXPECT_NE(std::string(e.what()).find("twice"), std::string::npos) << e.what();
    }
    SceneQuery sq(f.scene_path, {}, three_tools(f), 1);
    EXPECT_THROW(sq.query(hp::Pose{{0, 0, 0}, {1, 0, 0, 0}}), hp::Error);
    EXPECT_THROW(sq.query(std::vector<hp::Pose>(2, hp::Pose{{0, 0, 0}, {1, 0, 0, 0}})), hp::Error);
}

TEST(SceneTools, ScenarioPosesPerToolAreReproducibleAndTheFirstToolsAreTheOneToolRunsPoses) {
    hp_test::SceneFiles f("toolcheck", 1, 1, 1);
    hp::scene::SceneCheckSpec spec;
    spec.scene_path = f.scene_path;
    spec.tools = {{.part = "tool", .tree_file = {}}};
    spec.poses.scenario = "contact";
    spec.poses.count = 24;
    spec.poses.depth = 1;
    spec.poses.seed = 7;
    const hp::scene::SceneCheck alone = hp::scene::run_scene_check(spec);
    spec.tools = {{.part = "tool", .tree_file = {}}, {.part = "", .tree_file = f.tool_tree}};
    const hp::scene::SceneCheck check = hp::scene::run_scene_check(spec);
    ASSERT_EQ(check.poses.size(), 2u);
    ASSERT_EQ(check.frames.size(), 24u);
    // The static parts are the ball and the box in both runs: tool 0's poses are the one-tool run's.
    for (std::size_t i = 0; i < 24; ++i) {
        EXPECT_EQ(check.poses[0][i].position, alone.poses[0][i].position);
        EXPECT_EQ(check.poses[0][i].quaternion, alone.poses[0][i].quaternion);
        EXPECT_NE(check.poses[1][i].position, check.poses[0][i].position);
        ASSERT_EQ(check.frames[i].tools.size(), 2u);
        for (const hp::scene::ToolSummary& t : check.frames[i].tools) EXPECT_GE(t.parts_touched, 1u);  // each made to touch
    }
    const auto again = hp::scene::run_scene_check(spec);
    for (std::size_t t = 0; t < 2; ++t)
        for (std::size_t i = 0; i < 24; ++i) EXPECT_EQ(again.poses[t][i].position, check.poses[t][i].position);
    EXPECT_FALSE(alone.report.contains("tools"));
    EXPECT_EQ(check.report["tools"].size(), 2u);
    EXPECT_EQ(check.per_frame[0]["tools"].size(), 2u);
    EXPECT_EQ(hp::scene::to_csv(alone).find(",tool\n"), std::string::npos);
    const std::string csv = hp::scene::to_csv(check);
    EXPECT_NE(csv.find(",frame_us,tool,mode\n"), std::string::npos);
    // Frame 0: its pairs, then a totals row per tool (part "*") and the frame's (part and tool "*").
    std::vector<std::string> totals;
    for (std::size_t at = csv.find("\n0,*,"); at != std::string::npos; at = csv.find("\n0,*,", at + 1)) {
        std::string row = csv.substr(at + 1, csv.find('\n', at + 1) - at - 1);
        EXPECT_EQ(row.substr(row.rfind(',')), ",full");  // the mode, last
        totals.push_back(row.substr(0, row.rfind(',')));
    }
    ASSERT_EQ(totals.size(), 3u);
    EXPECT_EQ(totals[0].substr(totals[0].rfind(',')), ",tool");
    EXPECT_EQ(totals[1].substr(totals[1].rfind(',') + 1), f.tool_tree.string());
    EXPECT_EQ(totals[2].substr(totals[2].rfind(',')), ",*");

    // The poses written and read back give the same frames.
    const std::filesystem::path poses = f.dir / "poses.json";
    hp::scene::write_tool_poses(poses, check);
    const auto read = hp::scene::read_tool_poses(poses, 2);
    for (std::size_t t = 0; t < 2; ++t)
        for (std::size_t i = 0; i < 24; ++i) EXPECT_EQ(read[t][i].position, check.poses[t][i].position);
    try {
        hp::scene::read_tool_poses(poses, 3);
        ADD_FAILURE() << "two tools' poses were read for three tools";
    } catch (const hp::Error& e) {
        EXPECT_EQ(e.code(), hp::ExitCode::bad_input);
        EXPECT_NE(std::string(e.what()).find("poses.json"), std::string::npos) << e.what();
    }
}

// The check with the tools' maps: the report names the mode and each tool's map, counts the maps'
// contacts (the sum of its frames'), and the CSV's last column and the text name the mode.
TEST(SceneTools, CheckWithMapsReportsTheModeTheMapsAndTheirContacts) {
    hp_test::SceneFiles f("cfmcheck", 1, 1, 1);
    hp::scene::SceneCheckSpec spec;
    spec.scene_path = f.scene_path;
    spec.tools = {{.part = "tool", .tree_file = {}}, {.part = "", .tree_file = f.tool_tree}};
    spec.poses.scenario = "contact";
    spec.poses.count = 30;
    spec.poses.depth = 2;
    spec.mode = "time-critical";
    spec.budget_us = 1e9;
    spec.budget_tests = 16;
    spec.cfm = true;
    spec.cfm_file = f.tool_cfm;
    const hp::scene::SceneCheck check = hp::scene::run_scene_check(spec);
    EXPECT_EQ(check.report["mode"], "time-critical");
    EXPECT_EQ(check.report["cfm"], true);
    ASSERT_EQ(check.report["tools"].size(), 2u);
    for (const auto& tool : check.report["tools"]) EXPECT_EQ(std::filesystem::path(tool["cfm"].get<std::string>()).filename(), "tree.hcfm");
    std::size_t sum = 0;
    for (const hp::scene::FrameSummary& fr : check.frames) {
        std::size_t pairs = 0;
        for (const hp::scene::PairSummary& p : fr.pairs) pairs += p.cfm_contacts;
        EXPECT_EQ(fr.cfm_contacts, pairs);
        sum += fr.cfm_contacts;
    }
    EXPECT_GT(sum, 0u);
    EXPECT_EQ(check.report["cfm_contacts"], sum);
    const std::string csv = hp::scene::to_csv(check);
    EXPECT_NE(csv.find(",frame_us,tool,mode\n"), std::string::npos);
    EXPECT_NE(csv.find(",time-critical+cfm\n"), std::string::npos);
    EXPECT_NE(hp::scene::format_text(check).find("mode time-critical with closest feature maps"), std::string::npos);
    // Two outside tools and one map file: which one's is it? Refused.
    spec.tools.push_back({.part = "", .tree_file = f.tool_tree});
    EXPECT_THROW(hp::scene::run_scene_check(spec), hp::Error);
    // Without maps the mode column is the mode alone.
    spec.tools = {{.part = "tool", .tree_file = {}}};
    spec.cfm = false;
    spec.cfm_file.clear();
    const hp::scene::SceneCheck plain = hp::scene::run_scene_check(spec);
    EXPECT_EQ(plain.report["cfm_contacts"], 0u);
    EXPECT_NE(hp::scene::to_csv(plain).find(",time-critical\n"), std::string::npos);
}

namespace {

// Two ist contacts, field by field.
void expect_same_ist_contact(const hp::octree::IstContact& a, const hp::octree::IstContact& b) {
    EXPECT_EQ(a.moving, b.moving);
    EXPECT_EQ(a.fixed, b.fixed);
    EXPECT_EQ(a.level, b.level);
    EXPECT_EQ(a.moving_center, b.moving_center);
    EXPECT_EQ(a.fixed_center, b.fixed_center);
    EXPECT_EQ(a.depth, b.depth);
}

struct IstCase {
    const char* name;
    hp::scene::IstSpec spec;
};

}  // namespace

// The ist modes: every pair (tool against a static part or another tool) equals the descent of
// the tool's octree against that part's octree run alone at the composed pose, with the normals
// and force of that part's field (haptic-query --mode ist on its files), for one thread and three;
// without an early stop the contact set is ist-brute's (every voxel pair tested directly).
TEST(SceneTools, IstModesEveryPairEqualsTheOctreeDescentRunAlone) {
    hp_test::SceneFiles f("ist", 2, 2, 2);
    const std::size_t statics = f.scene.parts.size() - 2;
    const auto poses = frames(f, statics, 30, 6);
    std::vector<hp::StaticField> fields;
    std::vector<hp::octree::Octree> octrees;
    for (const char* g : {"g0", "g1", "g2"}) {
        fields.push_back(hp::load_static_field(f.dir / g / "distance.vdb"));
        octrees.push_back(hp::read_octree_file(f.dir / g / "octree.hoct").tree);
    }
    const hp::octree::Octree& tool_octree = octrees[2];  // every tool is the 0.2 ball
    auto tools = three_tools(f);
    tools[2].octree_file = f.dir / "g2" / "octree.hoct";
    const std::vector<IstCase> cases = {{"ist", {.on = true, .brute = false, .descent = {}}},
                                        {"ist-brute", {.on = true, .brute = true, .descent = {}}},
                                        {"ist stop level 2", {.on = true, .brute = false, .descent = {.stop_level = 2}}},
                                        {"ist max contacts 40", {.on = true, .brute = false, .descent = {.max_contacts = 40}}}};
    for (const IstCase& ic : cases) {
        SCOPED_TRACE(ic.name);
        SceneQuery one(f.scene_path, {}, tools, 1, ic.spec);
        SceneQuery three(f.scene_path, {}, tools, 3, ic.spec);
        ASSERT_NE(one.ist(), nullptr);
        std::size_t static_touching = 0, tool_touching = 0, interrupted = 0;
        for (const auto& frame : poses) {
            const hp::scene::FrameResult& a = one.query(frame);
            const hp::scene::FrameResult b = three.query(frame);
            EXPECT_TRUE(a.contacts.empty());
            ASSERT_EQ(a.ist_contacts.size(), b.ist_contacts.size());
            for (std::size_t c = 0; c < a.ist_contacts.size(); ++c) expect_same_ist_contact(a.ist_contacts[c], b.ist_contacts[c]);
            EXPECT_EQ(a.force, b.force);
            EXPECT_EQ(a.torque, b.torque);
            for (const hp::scene::PairResult& pr : a.pairs) {
                const bool is_tool = pr.other_tool >= 0;
                const hp::Placement pl = is_tool ? hp::scene::placement_of(frame[static_cast<std::size_t>(pr.other_tool)])
                                                 : one.scene().parts[pr.part].placement;
                const std::size_t g = f.scene.parts[pr.part].geometry;
                const hp::Pose local = hp::scene::compose_into(pl, frame[pr.tool]);
                const hp::octree::Placement op{hp::rotation_rows(local.quaternion), local.position};
                hp::octree::IstOptions descent = ic.spec.descent;  // the contact count is the frame's, shared by its pairs
                if (descent.max_contacts > 0) descent.max_contacts = std::max<std::size_t>(1, descent.max_contacts / a.pairs.size());
                hp::octree::IstQuery ist(tool_octree, octrees[g], descent);
                hp::octree::BruteQuery brute(tool_octree, octrees[g]);
                const std::vector<hp::octree::IstContact> alone = ic.spec.brute ? brute(op) : ist(op);
                hp::IstResponse respond(fields[g].field);
                const hp::IstForce force = respond(alone, local.position);
                ASSERT_EQ(pr.contacts, alone.size());
                for (std::size_t c = 0; c < alone.size(); ++c)
                    expect_same_ist_contact(a.ist_contacts[pr.first_contact + c], hp::scene::ist_contact_to_world(pl, alone[c]));
                EXPECT_EQ(pr.force, hp::scene::rotate_to_world(pl, force.force));
                EXPECT_EQ(pr.torque, hp::scene::rotate_to_world(pl, force.torque));
                EXPECT_EQ(pr.max_penetration, force.max_depth);
                if (!ic.spec.brute) {
                    EXPECT_EQ(pr.interrupted, ist.stats().interrupted);
                }
                interrupted += pr.interrupted;
                (is_tool ? tool_touching : static_touching) += !alone.empty();
                if (ic.spec.brute || ic.spec.descent.stop_level > 0 || ic.spec.descent.max_contacts > 0) continue;
                // No early stop: the descent's voxel pairs are the brute force's.
                auto key = [](const hp::octree::IstContact& c) { return std::pair{c.moving, c.fixed}; };
                std::vector<std::pair<std::uint32_t, std::uint32_t>> got, want;
                for (const auto& c : alone) got.push_back(key(c));
                for (const auto& c : brute(op)) want.push_back(key(c));
                std::sort(got.begin(), got.end());
                EXPECT_EQ(got, want);
            }
        }
        EXPECT_GT(static_touching, 10u);
        EXPECT_GT(tool_touching, 5u);
        if (ic.spec.descent.stop_level > 0 || ic.spec.descent.max_contacts > 0) {
            EXPECT_GT(interrupted, 0u);
        }
    }
}

TEST(SceneTools, IstModesRefuseAnOutsideToolWithoutItsOctreeAndABadScene) {
    hp_test::SceneFiles f("istbad", 1, 1, 1);
    const hp::scene::IstSpec ist{.on = true, .brute = false, .descent = {}};
    auto code_and_message = [&](const std::filesystem::path& scene, const hp::scene::ToolSpec& tool) {
        try {
            SceneQuery(scene, {}, std::vector<hp::scene::ToolSpec>{tool}, 1, ist);
        } catch (const hp::Error& e) {
            return std::make_pair(e.code(), std::string(e.what()));
        }
        return std::make_pair(hp::ExitCode::ok, std::string());
    };
    const hp::scene::ToolSpec part{.part = "tool", .tree_file = {}};
    EXPECT_EQ(code_and_message(f.scene_path, part).first, hp::ExitCode::ok);
    EXPECT_EQ(code_and_message(f.scene_path, {.part = "", .tree_file = f.tool_tree}).first, hp::ExitCode::usage);
    hp::scene::ToolSpec with_octree = part;
    with_octree.octree_file = f.dir / "g2" / "octree.hoct";
    EXPECT_EQ(code_and_message(f.scene_path, with_octree).first, hp::ExitCode::usage);  // a part's is the scene's

    hp::scene::Scene no_octree = f.scene;
    no_octree.geometries[1].files.erase("octree");
    hp::scene::write_scene(f.dir / "no_octree.json", no_octree);
    auto [code, what] = code_and_message(f.dir / "no_octree.json", part);
    EXPECT_EQ(code, hp::ExitCode::bad_input);
    for (const char* word : {"no_octree.json", "part 'box/000'", "octree stage"}) EXPECT_NE(what.find(word), std::string::npos) << what;
    // The tool's octree changed since the scene was prepared: exit 3 naming the file and a part.
    std::ofstream(f.dir / "g2" / "octree.hoct", std::ios::app) << "x";
    std::tie(code, what) = code_and_message(f.scene_path, part);
    EXPECT_EQ(code, hp::ExitCode::bad_input);
    for (const char* word : {"part 'tool'", "g2/octree.hoct"}) EXPECT_NE(what.find(word), std::string::npos) << what;
    // The VPS modes do not read the octrees.
    SceneQuery vps(f.scene_path, part, {}, 1);
    EXPECT_EQ(vps.ist(), nullptr);
}
