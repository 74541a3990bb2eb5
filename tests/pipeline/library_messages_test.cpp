// The library's usage errors reach the executables' users and the pipeline's: they name a
// parameter in words ("the number of stacks"), never as one caller's flag ("--stacks").
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cfm/cfm.hpp"
#include "core/error.hpp"
#include "../core/usage_error.hpp"
#include "mesh/mesh.hpp"
#include "query/check_run.hpp"
#include "spheretree/tree.hpp"

namespace hp {
namespace {

using test::usage_error;

void expect_words(const std::string& message, const std::string& words) {
    EXPECT_NE(message.find(words), std::string::npos) << message;
    EXPECT_EQ(message.find("--"), std::string::npos) << "spells a flag: " << message;
}

TEST(LibraryMessages, NameParametersWithoutFlags) {
    cfm::Options stacks;
    stacks.stacks = 1;
    expect_words(usage_error([&] { cfm::build_cfm(TriMesh{}, PointSphereTree{}, stacks); }), "number of stacks (1)");
    cfm::Options min_stacks;
    min_stacks.stacks = 8;
    min_stacks.min_stacks = 9;
    expect_words(usage_error([&] { cfm::build_cfm(TriMesh{}, PointSphereTree{}, min_stacks); }),
                 "minimum number of stacks (9)");

    const std::vector<Vec3d> points = {Vec3d{0, 0, 0}};
    TreeOptions k;
    k.k = 1;
    expect_words(usage_error([&] { build_point_sphere_tree(points, k); }), "branching factor K");
    TreeOptions threshold;
    threshold.threshold = -1;
    expect_words(usage_error([&] { build_point_sphere_tree(points, threshold); }), "tagging threshold");

    MeshLoadOptions scale;
    scale.scale = 0;
    expect_words(usage_error([&] { prepare_mesh(TriMesh{}, scale, "m.obj"); }), "the scale");

    QueryCheckSpec cfm_in_full;
    cfm_in_full.cfm_path = "m.hcfm";
    expect_words(usage_error([&] { run_query_check(cfm_in_full); }), "time-critical mode");
    QueryCheckSpec tests_in_full;
    tests_in_full.budget_tests = 20;
    expect_words(usage_error([&] { run_query_check(tests_in_full); }), "budget in sphere tests");
}

}  // namespace
}  // namespace hp
