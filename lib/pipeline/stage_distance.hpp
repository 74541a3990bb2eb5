#pragma once
// lib/pipeline — the distance stage: its typed options (bound to their declaration in
// stage_distance.cpp; the defaults are written here, once), its typed result, and its run, which
// does what haptic-distance does between parsing the options and printing: same library calls, same
// metadata, same output bytes.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "formats/vdb.hpp"
#include "pipeline/stage_common.hpp"

namespace hp::pipeline {

// --scale/--units/--part of the stages that read the mesh again: unset = the input file's.
struct DistanceParams {
    std::string encoding = vdb::distance_encoding_name(vdb::DistanceEncoding::float32);  // vdb::kDistanceEncodingNames
    int precision = 6;
    bool gradient = false;
    bool force = false;
    std::optional<double> scale;
    std::optional<std::string> units;
    std::optional<std::string> part;
    std::optional<double> linear_deflection, angular_deflection;
    std::optional<int> band;  // narrow band in voxels; 0 = dense; unset = the voxelmap's
    std::optional<int> exact_layers;  // dense: exact wherever |layer| <= N; unset = 3 (9 if 6-connected)
};

struct DistanceSummary {
    std::string encoding;
    int precision = -1;  // -1 unless scaled
    GridSummary grid;
    double min = 0, max = 0;
    std::size_t exact_voxels = 0;
    int propagation_passes = 0;
    int band = 0;  // narrow band in voxels, 0 for a dense field
    int exact_layers = 0;  // dense field: exact wherever |layer| <= this
    // The run's phases in order (distance/distance.hpp; a band field has no prepare, propagate and
    // sign, and computes its gradient apart; a dense field's sign phase sets the gradient too).
    double seconds_import = 0, seconds_read = 0, seconds_prepare = 0, seconds_exact = 0, seconds_propagate = 0,
           seconds_sign = 0, seconds_gradient = 0, seconds_write = 0,
           seconds_sampler = 0;  // the prepared sampler (StageContext::prepared_sampler), 0 without
    std::vector<std::string> warnings;
};

nlohmann::json to_json(const DistanceSummary& s);
nlohmann::json to_json(const DistanceSummary& s, const ToolFacts& f);
std::string format_text(const DistanceSummary& s, const ToolFacts& f);

StageSpec distance_stage();
DistanceSummary run_distance(const StageContext& ctx, const DistanceParams& p);

}  // namespace hp::pipeline
