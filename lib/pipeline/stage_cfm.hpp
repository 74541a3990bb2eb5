#pragma once
// lib/pipeline — the closest feature map stage: its typed options (bound to their declaration in
// stage_cfm.cpp; the defaults are written here, once), its typed result, and its run, which does
// what haptic-cfm does between parsing the options and printing: same library calls, same metadata,
// same output bytes.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cfm/cfm.hpp"
#include "pipeline/stage_common.hpp"

namespace hp::pipeline {

struct CfmParams {
    int stacks = 16;
    int min_stacks = 4;
    std::string sampling = cfm::sampling_name(cfm::Sampling::adaptive);
    std::string store = cfm::store_name(cfm::Store::normal);
    bool force = false;
    std::optional<double> scale;
    std::optional<std::string> units;
    std::optional<std::string> part;
    std::optional<double> linear_deflection, angular_deflection;
};

struct CfmLevelSummary {
    int level = 0, stacks = 0;
    std::size_t spheres = 0, samples_per_sphere = 0, single_feature = 0, records = 0;
};

struct CfmSummary {
    std::size_t spheres = 0;
    int tree_levels = 0;
    std::string sampling, store;
    int stacks = 0, min_stacks = 0;
    std::vector<CfmLevelSummary> levels;
    std::size_t records = 0, single_feature_spheres = 0;
    std::optional<std::size_t> unique_features;  // store full
    double seconds_load = 0, seconds_build = 0, seconds_write = 0;
    std::vector<std::string> warnings;
};

nlohmann::json to_json(const CfmSummary& s);
nlohmann::json to_json(const CfmSummary& s, const ToolFacts& f, const std::string& tree_file);
std::string format_text(const CfmSummary& s, const ToolFacts& f);

StageSpec cfm_stage();
CfmSummary run_cfm(const StageContext& ctx, const CfmParams& p);

}  // namespace hp::pipeline
