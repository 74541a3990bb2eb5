#pragma once
// lib/pipeline — the spheretree stage: its typed options (bound to their declaration in
// stage_spheretree.cpp; the defaults are written here, once), its typed result, and its run, which
// does what haptic-spheretree does between parsing the options and printing: same library calls,
// same metadata, same output bytes.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/stage_common.hpp"

namespace hp::pipeline {

struct SpheretreeParams {
    int k = 4;
    std::uint64_t seed = 1;
    double threshold = 2.0;
};

struct SpheretreeSummary {
    std::size_t points = 0;
    int k = 0;
    std::uint64_t seed = 0;
    double threshold = 0;
    double log_k_points = 0;
    nlohmann::json tree;  // inspect::tree_levels_json
    double seconds_read = 0, seconds_build = 0, seconds_write = 0;
    std::vector<std::string> warnings;
};

nlohmann::json to_json(const SpheretreeSummary& s);
nlohmann::json to_json(const SpheretreeSummary& s, const ToolFacts& f);
std::string format_text(const SpheretreeSummary& s, const ToolFacts& f);

StageSpec spheretree_stage();
SpheretreeSummary run_spheretree(const StageContext& ctx, const SpheretreeParams& p);

}  // namespace hp::pipeline
