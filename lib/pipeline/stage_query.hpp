#pragma once
// lib/pipeline — the query stage: its typed options (bound to their declaration in stage_query.cpp;
// the defaults are written here, once), its typed result, and its run, which does what haptic-query
// does between parsing the options and printing: same library calls, same metadata, same output
// bytes.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/stage_common.hpp"

namespace hp {
struct QueryCheckSpec;  // query/check_run.hpp
struct QueryCheck;
struct PoseSource;  // query/scenario.hpp
}

namespace hp::pipeline {

struct QueryParams {
    std::optional<std::string> poses;     // a poses file, or else...
    std::optional<std::string> scenario;  // ...generated poses
    std::size_t count = 1000;
    std::uint64_t seed = 1;
    double depth = 5.0;
    std::string mode = "full";
    std::optional<int> level;             // segmented
    double budget_us = 1000.0;
    std::optional<std::size_t> budget_tests;  // time-critical
    std::optional<double> max_over_budget;
    std::optional<std::size_t> warmup;    // default min(count, 100)
    bool cfm = false;                     // time-critical: normals of interrupted spheres from the CFM (input "cfm")
    // Modes ist and ist-brute (query/ist_check.hpp): the octrees (input "octree") and the descent.
    bool moving_octree = false, static_octree = false;
    std::optional<int> ist_level;                 // stop at this node level
    std::optional<std::size_t> ist_max_contacts;  // stop after the first round with this many pairs
    bool ist_no_one_child = false, ist_no_side = false;
    std::optional<std::string> validate;  // "exact": score VPS against the meshes' exact contact (haptic-query only)
    bool fail_on_tunnel = false;          // validate exact: tunnelling fails the check
};

struct QuerySummary {
    nlohmann::json report;  // the report of lib/query (every key but per_query)
    std::vector<std::string> warnings;
};

nlohmann::json to_json(const QuerySummary& s);

// haptic-query's text (the check holds the report; `cfm_file` as given, empty: none).
std::string format_text(const QueryCheck& check, const QueryParams& p, const std::string& cfm_file);

StageSpec query_stage();
QuerySummary run_query(const StageContext& ctx, const QueryParams& p);

// The poses these options give (a file, or a scenario with its count, seed and depth): the
// same for haptic-query's timing checks, --validate exact and --scene, and for the stage.
PoseSource pose_source(const QueryParams& p);

// haptic-query's check for these options (the files are the caller's to add).
QueryCheckSpec query_check_spec(const QueryParams& p);

}  // namespace hp::pipeline
