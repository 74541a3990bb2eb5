#pragma once
// lib/query/check_run — the body of haptic-query and of the pipeline's query stage: load the
// static field, the moving tree (and its CFM), get the poses, validate, time one query per pose
// against the budget and make the report. The executable (apps/haptic-query.cpp) adds its own
// files (--report, --csv, --write-poses) and text; the stage (lib/pipeline/stage_query.cpp)
// writes the report as its output.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/progress.hpp"
#include "contact/query.hpp"
#include "query/scenario.hpp"
#include "query/timing.hpp"

namespace hp {

struct StaticField;       // query/static_field.hpp
struct MovingObjectData;  // query/session.hpp

struct QueryCheckSpec {
    std::filesystem::path static_path, moving_path;
    std::filesystem::path cfm_path;  // empty: none (time-critical only, see contact/query.hpp)
    PoseSource poses;
    std::string mode = "full";  // full, brute, segmented or time-critical
    int level = 0;
    double budget_us = 1000;
    std::size_t budget_tests = 0;  // time-critical: also a budget in sphere tests (0: none; QueryOptions)
    double max_over_budget = -1;  // < 0: the criterion is p99 <= budget
    std::optional<std::size_t> warmup = std::nullopt;  // default min(poses, 100)
    bool file_names_only = false;  // the report names files without their folders (pipelines)
    // Modes ist and ist-brute (query/ist_check.hpp): the two octrees (haptic-octree) and the
    // descent's options (octree/ist.hpp).
    std::filesystem::path moving_octree_path, static_octree_path;
    int ist_level = 0;              // stop at this node level (0: voxels)
    std::size_t ist_max_contacts = 0;  // stop after the first round with at least this many pairs (0: never)
    bool ist_one_child = true, ist_side = true;
};

struct QueryCheck {
    nlohmann::json report;     // the summary (every key of the report but per_query)
    nlohmann::json per_query;  // one to_json(QuerySummary) per pose
    std::vector<Pose> poses;
    TimedRun run;
    LatencyStats latency;
    std::vector<std::string> warnings;  // for the caller to print
    bool pass = false;
    bool covered = false;  // the tree holds its points (a failed check when false)
};

// Throws hp::Error: usage for a mode name, scenario or level that is not allowed, or a CFM with
// another mode than time-critical (before anything is loaded); bad_input for files that fail
// their readers' checks or a CFM that is not the tree's (attach_cfm).
QueryCheck run_query_check(const QueryCheckSpec& spec, const Progress& progress = {});

// Adds to `report` the keys every mode's report shares, from check.run and check.latency: the
// queries, budget, warmup, latencies, queries over budget and their fraction, rate, criterion and
// the queries' counts (summed, or averaged over the queries). Returns whether the timing passes:
// the fraction over budget at most spec.max_over_budget, or (when that is negative) p99 within
// the budget. An empty run reports zero latencies and averages (the readers refuse an empty pose
// list, so no report has one).
bool add_run_figures(nlohmann::json& report, const QueryCheck& check, const QueryCheckSpec& spec);

// The name a report gives a file: its path, or its name alone (spec.file_names_only).
std::string report_file_name(const QueryCheckSpec& spec, const std::filesystem::path& file);

// Adds to `report` the keys of the inputs every mode's report shares: "poses" (the file, or the
// scenario with its options and `generation_s`, the seconds it took), "static" and "moving".
void add_inputs(nlohmann::json& report, const QueryCheckSpec& spec, const StaticField& st, const MovingObjectData& shell,
                double generation_s);

// The whole report: the summary with per_query.
nlohmann::json full_report(const QueryCheck& check);

}  // namespace hp
