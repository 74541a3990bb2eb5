// Pipeline files: validation errors name the stage and the key; --set parsing and overrides.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/stage_query.hpp"
#include "pipeline/stage_voxelize.hpp"

namespace hp::pipeline {
namespace {

using nlohmann::json;

// The usage error that parse_pipeline(raw) throws (fails the test if none or another code).
std::string usage_error(const json& raw, const std::vector<Override>& overrides = {}) {
    try {
        json copy = raw;
        apply_overrides(copy, overrides, "p.json");
        parse_pipeline(copy, "p.json");
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), ExitCode::usage) << e.what();
        return e.what();
    }
    ADD_FAILURE() << "no error for " << raw.dump();
    return {};
}

json two_stages() {
    return json::parse(R"({"name": "t", "stages": [{"stage": "voxelize", "voxel_size": 0.01},
                                                   {"stage": "distance", "gradient": true}]})");
}

TEST(PipelineValidation, AcceptsAValidPipelineAndFillsDefaults) {
    Pipeline p = parse_pipeline(two_stages(), "p.json");
    ASSERT_EQ(p.stages.size(), 2u);
    EXPECT_EQ(p.name, "t");
    EXPECT_EQ(p.stages[0].spec->name, "voxelize");
    EXPECT_EQ(p.stages[0].params["voxel_size"], 0.01);
    EXPECT_EQ(p.stages[0].params["pad"], 2);            // haptic-voxelize --pad default
    EXPECT_EQ(p.stages[0].params["fill"], "auto");
    EXPECT_EQ(p.stages[0].params["resolution"], 128);  // the default; voxel_size, given, wins
    EXPECT_EQ(p.stages[1].params["gradient"], true);
    EXPECT_EQ(p.stages[1].params["encoding"], "float");
    EXPECT_EQ(p.stages[0].given.size(), 1u);           // only what the file gave
}

TEST(PipelineValidation, OptionSpellingsNormalise) {
    json raw = json::parse(R"({"name": "t", "stages": [{"stage": "voxelize", "max-layers": 5, "--pad": 3}]})");
    Pipeline p = parse_pipeline(raw, "p.json");
    EXPECT_EQ(p.stages[0].params["max_layers"], 5);
    EXPECT_EQ(p.stages[0].params["pad"], 3);
}

TEST(PipelineValidation, ErrorsNameTheStageAndTheKey) {
    struct Case {
        const char* json;
        std::vector<std::string> mentions;
    };
    const Case cases[] = {
        {R"({"name":"t","stages":[{"stage":"voxelize","voxelsize":0.1}]})", {"stage 'voxelize'", "key 'voxelsize'", "unknown"}},
        {R"({"name":"t","stages":[{"stage":"voxelize","pad":"2"}]})", {"stage 'voxelize'", "key 'pad'", "integer"}},
        {R"({"name":"t","stages":[{"stage":"voxelize","pad":2.5}]})", {"stage 'voxelize'", "key 'pad'", "integer"}},
        {R"({"name":"t","stages":[{"stage":"voxelize","pad":1001}]})", {"key 'pad'", "[0, 1000]", "--pad"}},
        {R"({"name":"t","stages":[{"stage":"voxelize","voxel_size":-1}]})", {"key 'voxel_size'", "positive"}},
        {R"({"name":"t","stages":[{"stage":"voxelize","fill":"magic"}]})", {"key 'fill'", "scanline"}},
        {R"({"name":"t","stages":[{"stage":"voxelize","connectivity":18}]})", {"key 'connectivity'", "26, 6"}},
        {R"({"name":"t","stages":[{"stage":"voxelize","units":"ft"}]})", {"key 'units'", "mm"}},
        {R"({"name":"t","stages":[{"stage":"voxelize","voxel_size":0.1,"resolution":64}]})",
         {"stage 'voxelize'", "'resolution'", "'voxel_size'"}},
        {R"({"name":"t","stages":[{"stage":"voxelize"},{"stage":"distance","gradient":1}]})",
         {"stage 'distance'", "key 'gradient'", "true or false"}},
        {R"({"name":"t","stages":[{"stage":"distance"}]})", {"stage 'distance'", "'voxelmap'", "'voxelize'"}},
        {R"({"name":"t","stages":[{"stage":"voxelize"},{"stage":"voxelize"}]})", {"stage 'voxelize'", "twice"}},
        {R"({"name":"t","stages":[{"stage":"voxelise"}]})", {"stages[0]", "unknown stage 'voxelise'", "voxelize"}},
        {R"({"name":"t","stages":[{"voxel_size":0.1}]})", {"stages[0]", "key 'stage'"}},
        {R"({"name":"t","stages":[]})", {"key 'stages'"}},
        {R"({"stages":[{"stage":"voxelize"}]})", {"key 'name'"}},
        {R"({"name":"t","stages":[{"stage":"voxelize"}],"stagse":[]})", {"unknown key 'stagse'"}},
    };
    for (const auto& c : cases) {
        const std::string msg = usage_error(json::parse(c.json));
        EXPECT_EQ(msg.rfind("p.json", 0), 0u) << msg;  // names the pipeline file first
        for (const auto& m : c.mentions) EXPECT_NE(msg.find(m), std::string::npos) << "'" << m << "' not in: " << msg;
    }
}

TEST(PipelineValidation, ChecksBetweenKeysNameTheKey) {
    const char* head = R"({"name":"t","stages":[{"stage":"voxelize"},{"stage":"distance"},{"stage":"pointshell"},
                                                {"stage":"spheretree"},)";
    struct Case {
        std::string tail;
        std::vector<std::string> mentions;
    };
    const Case cases[] = {
        {R"({"stage":"cfm","stacks":8,"min_stacks":9}]})", {"stage 'cfm'", "key 'min_stacks'", "stacks"}},
        {R"({"stage":"query"}]})", {"stage 'query'", "key 'scenario'", "poses"}},
        {R"({"stage":"query","scenario":"contact","mode":"segmented"}]})", {"stage 'query'", "key 'level'"}},
        {R"({"stage":"query","scenario":"contact","poses":"p.json"}]})", {"stage 'query'", "'poses'", "'scenario'"}},
        {R"({"stage":"query","scenario":"contact","max_over_budget":2}]})", {"key 'max_over_budget'", "[0, 1]"}},
        {R"({"stage":"spheretree","k":1}]})", {"stage 'spheretree'", "twice"}},
    };
    for (const auto& c : cases) {
        const std::string msg = usage_error(json::parse(head + c.tail));
        for (const auto& m : c.mentions) EXPECT_NE(msg.find(m), std::string::npos) << "'" << m << "' not in: " << msg;
    }
    // The same stages without the tree: cfm and query say what is missing.
    for (const char* stage : {"cfm", "query"}) {
        json raw = {{"name", "t"}, {"stages", {{{"stage", "voxelize"}}, {{"stage", "distance"}}, {{"stage", stage}}, }}};
        if (std::string(stage) == "query") raw["stages"][2]["scenario"] = "contact";
        const std::string msg = usage_error(raw);
        EXPECT_NE(msg.find("input 'tree' is missing"), std::string::npos) << msg;
        EXPECT_NE(msg.find("'spheretree'"), std::string::npos) << msg;
    }
    // And a valid full pipeline passes.
    Pipeline p = parse_pipeline(json::parse(std::string(head) + R"({"stage":"cfm"},{"stage":"query","scenario":"random"}]})"), "p.json");
    EXPECT_EQ(p.stages.size(), 6u);
}

TEST(PipelineValidation, QueryRunsEveryModeOfItsExecutable) {
    const std::string head = R"({"name":"t","stages":[{"stage":"voxelize"},{"stage":"distance"},{"stage":"pointshell"},
                                                      {"stage":"spheretree"},)";
    const std::string tc = R"({"stage":"query","scenario":"contact","mode":"time-critical","budget_tests":20,"cfm":true}]})";
    Pipeline p = parse_pipeline(json::parse(head + R"({"stage":"cfm"},)" + tc), "p.json");
    const auto q = read_params<QueryParams>(*p.stages.back().spec, p.stages.back().params);
    EXPECT_EQ(q.mode, "time-critical");
    EXPECT_EQ(q.budget_tests, std::optional<std::size_t>(20));
    EXPECT_TRUE(q.cfm);
    EXPECT_FALSE(q.level.has_value());
    EXPECT_EQ(q.count, 1000u);  // the declared default

    struct Case {
        std::string stages;
        std::vector<std::string> mentions;
    };
    const Case cases[] = {
        {head + tc, {"key 'cfm'", "put a 'cfm' stage before 'query'"}},
        {head + R"({"stage":"cfm"},{"stage":"query","scenario":"contact","cfm":true}]})",
         {"key 'cfm'", "applies only to mode time-critical", "not mode full"}},
        {head + R"({"stage":"query","scenario":"contact","mode":"brute","budget_tests":5}]})",
         {"key 'budget_tests'", "applies only to mode time-critical"}},
        {head + R"({"stage":"query","scenario":"contact","mode":"time-critical","budget_tests":0}]})",
         {"key 'budget_tests'", "must be an integer >= 1"}},
        {head + R"({"stage":"query","scenario":"contact","seed":9007199254740992}]})", {"key 'seed'", "[0, 9007199254740991]"}},
    };
    for (const auto& c : cases) {
        const std::string msg = usage_error(json::parse(c.stages));
        for (const auto& m : c.mentions) EXPECT_NE(msg.find(m), std::string::npos) << "'" << m << "' not in: " << msg;
    }
}

TEST(StageDeclaration, DefaultsAreTheOptionsStructsAndTypedReadsBindEveryKey) {
    const StageSpec& vox = *find_stage("voxelize");
    EXPECT_EQ(vox.param("resolution")->default_value, VoxelizeParams{}.resolution);
    EXPECT_TRUE(vox.param("voxel_size")->default_value.is_null());
    EXPECT_EQ(vox.param("max_layers")->option, "--max-layers");
    json given = {{"voxel_size", 0.5}, {"pad", 7}, {"fill", "vote"}, {"max_layers", 3}, {"connectivity", 6},
                  {"scale", 2.0}, {"units", "mm"}, {"resolution", 64}};
    const auto v = read_params<VoxelizeParams>(vox, given);
    EXPECT_EQ(v.voxel_size, std::optional<double>(0.5));
    EXPECT_EQ(v.resolution, 64);
    EXPECT_EQ(v.pad, 7);
    EXPECT_EQ(v.fill, "vote");
    EXPECT_EQ(v.max_layers, 3);
    EXPECT_EQ(v.connectivity, 6);
    EXPECT_EQ(v.scale, 2.0);
    EXPECT_EQ(v.units, std::optional<std::string>("mm"));
    // Every stage: each key's option is its name with dashes, and no key is also executable-only.
    for (const auto& s : stages())
        for (const auto& p : s.params) {
            EXPECT_EQ(normalize_key(p.option), p.key) << s.name;
            for (const auto& only : s.executable_only) EXPECT_NE(only, p.option) << s.name;
        }
}

TEST(PipelineValidation, StagesNotInThisBuildAreRejectedByName) {
    bool any = false;
    for (const auto& s : stages()) any = any || !s.available;
    if (!any) GTEST_SKIP() << "every known stage is in this build";
    for (const auto& s : stages()) {
        if (s.available) continue;
        json raw = {{"name", "t"}, {"stages", {{{"stage", "voxelize"}}, {{"stage", s.name}}}}};
        const std::string msg = usage_error(raw);
        EXPECT_NE(msg.find("stage '" + s.name + "' is not available in this build"), std::string::npos) << msg;
    }
}

TEST(PipelineValidation, EveryDefaultIsAValidValue) {
    for (const auto& s : stages())
        for (const auto& p : s.params)
            if (!p.default_value.is_null()) {
                EXPECT_EQ(check_value(p, p.default_value), "") << s.name << "." << p.key;
            }
}

TEST(SetParsing, SplitsStageKeyAndValue) {
    Override o = parse_override("voxelize.voxel_size=0.001");
    EXPECT_EQ(o.stage, "voxelize");
    EXPECT_EQ(o.key, "voxel_size");
    EXPECT_EQ(o.value, "0.001");
    EXPECT_FALSE(o.unset);
    o = parse_override("voxelize.voxel-size=1e-3");
    EXPECT_EQ(o.key, "voxel_size");
    o = parse_override("distance.encoding=");
    EXPECT_TRUE(o.unset);
    o = parse_override("voxelize.units=a=b");  // the value is everything after the first '='
    EXPECT_EQ(o.value, "a=b");
    for (const char* bad : {"voxelize", "voxelize=1", "voxelize.=1", ".pad=1", "pad=1.voxelize"}) {
        try {
            parse_override(bad);
            ADD_FAILURE() << "accepted " << bad;
        } catch (const Error& e) {
            EXPECT_EQ(e.code(), ExitCode::usage);
            EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
        }
    }
}

TEST(SetParsing, OverridesAreTypedByTheParameter) {
    json raw = two_stages();
    apply_overrides(raw,
                    {parse_override("voxelize.pad=4"), parse_override("voxelize.voxel_size=0.002"),
                     parse_override("distance.gradient=false"), parse_override("distance.encoding=scaled")},
                    "p.json");
    Pipeline p = parse_pipeline(raw, "p.json");
    EXPECT_EQ(p.stages[0].params["pad"], 4);
    EXPECT_TRUE(p.stages[0].params["pad"].is_number_integer());
    EXPECT_DOUBLE_EQ(p.stages[0].params["voxel_size"].get<double>(), 0.002);
    EXPECT_EQ(p.stages[1].params["gradient"], false);
    EXPECT_EQ(p.stages[1].params["encoding"], "scaled");
}

TEST(SetParsing, CommandLineWinsOverExcludedKeysAndResets) {
    json raw = two_stages();  // the file gives voxel_size
    apply_overrides(raw, {parse_override("voxelize.resolution=64")}, "p.json");
    Pipeline p = parse_pipeline(raw, "p.json");
    EXPECT_EQ(p.stages[0].params["resolution"], 64);
    EXPECT_TRUE(p.stages[0].params["voxel_size"].is_null());

    raw = two_stages();
    apply_overrides(raw, {parse_override("voxelize.voxel_size=")}, "p.json");
    p = parse_pipeline(raw, "p.json");
    EXPECT_TRUE(p.stages[0].params["voxel_size"].is_null());
}

TEST(SetParsing, BadOverridesNameStageAndKey) {
    struct Case {
        const char* set;
        std::vector<std::string> mentions;
    };
    const Case cases[] = {
        {"voxelize.pad=two", {"stage 'voxelize'", "key 'pad'", "integer"}},
        {"voxelize.pad=2.5", {"key 'pad'", "integer"}},
        {"distance.gradient=maybe", {"stage 'distance'", "key 'gradient'"}},
        {"voxelize.voxelsize=1", {"stage 'voxelize'", "key 'voxelsize'"}},
        {"voxelise.pad=1", {"unknown stage 'voxelise'"}},
        {"voxelize.pad=5000", {"key 'pad'", "[0, 1000]"}},  // range is checked by validation
    };
    for (const auto& c : cases) {
        const std::string msg = usage_error(two_stages(), {parse_override(c.set)});
        for (const auto& m : c.mentions) EXPECT_NE(msg.find(m), std::string::npos) << "'" << m << "' not in: " << msg;
    }
    json only_voxelize = json::parse(R"({"name": "t", "stages": [{"stage": "voxelize"}]})");
    const std::string msg = usage_error(only_voxelize, {parse_override("distance.gradient=true")});
    EXPECT_NE(msg.find("stage 'distance' is not in the pipeline"), std::string::npos) << msg;
    // A stage entry whose "stage" is not a string is not the stage --set names (json::value threw
    // its own type error before the pipeline's validation could name it).
    json numbered = json::parse(R"({"name": "t", "stages": [{"stage": 7}, {"stage": "voxelize"}]})");
    EXPECT_NO_THROW(apply_overrides(numbered, {parse_override("voxelize.pad=2")}, "t"));
    EXPECT_EQ(numbered["stages"][1]["pad"], 2);
    numbered["stages"].erase(1);
    const std::string none = usage_error(numbered, {parse_override("voxelize.pad=2")});
    EXPECT_NE(none.find("stage 'voxelize' is not in the pipeline"), std::string::npos) << none;
}

TEST(PipelineHash, ChangesWithParametersNotWithNames) {
    json a = two_stages(), b = two_stages(), c = two_stages();
    b["name"] = "other";
    b["description"] = "same stages";
    c["stages"][1]["gradient"] = false;
    const std::string ha = parse_pipeline(a, "a").params_hash();
    EXPECT_EQ(ha, parse_pipeline(b, "b").params_hash());
    EXPECT_NE(ha, parse_pipeline(c, "c").params_hash());
    EXPECT_EQ(ha.size(), 16u);
}

}  // namespace
}  // namespace hp::pipeline
