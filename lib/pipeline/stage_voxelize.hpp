#pragma once
// lib/pipeline — the voxelize stage: its typed options (bound to their declaration in
// stage_voxelize.cpp; the defaults are written here, once), its typed result, and its run, which
// does what haptic-voxelize does between parsing the options and printing: same library calls, same
// metadata, same output bytes.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/stage_common.hpp"
#include "voxel/voxelize.hpp"

namespace hp::pipeline {

struct VoxelizeParams {
    std::optional<double> voxel_size;  // else from resolution
    int resolution = 128;              // voxels along the longest side
    int pad = 2;
    std::string fill = fill_name(FillMethod::automatic);
    int max_layers = 0;
    int connectivity = 26;
    double scale = 1.0;
    std::optional<std::string> units;
    std::optional<std::string> part;  // one part of an assembly in its own frame (mesh/assembly.hpp)
    std::optional<double> linear_deflection, angular_deflection;  // STEP/IGES tessellation (docs/cad.md)
    std::optional<int> band;  // narrow band in voxels; 0 = dense; unset = dense while it fits comfortably
};

struct VoxelizeSummary {
    GridSummary grid;
    std::array<double, 3> origin{0, 0, 0};
    std::size_t voxels = 0;
    std::string fill;  // the method used
    std::size_t undecided = 0, flipped = 0, by_winding = 0;
    std::size_t by_vote = 0, winding_evaluated = 0;  // hybrid fill: voxels the vote decided, winding numbers evaluated
    std::size_t inside = 0, surface = 0, outside = 0;
    int min_layer = 0, max_layer = 0, layer_sweeps = 0;
    int band = 0;                    // narrow band in voxels, 0 for a dense voxelmap
    std::size_t band_voxels = 0;     // voxels with |layer| < band
    std::string mode_reason;         // why dense or band was chosen (text summary)
    double seconds_import = 0, seconds_prepare = 0, seconds_surface = 0, seconds_fill = 0, seconds_layers = 0,
           seconds_write = 0, seconds_total = 0;
    std::vector<std::string> warnings;
};

// What the stage returns: to_json(s) its keys (in a pipeline's manifest), to_json(s, f) the
// executable's --json, format_text its text; every fact the text prints is in both JSON forms.
nlohmann::json to_json(const VoxelizeSummary& s);
nlohmann::json to_json(const VoxelizeSummary& s, const ToolFacts& f);
std::string format_text(const VoxelizeSummary& s, const ToolFacts& f);

StageSpec voxelize_stage();
VoxelizeSummary run_voxelize(const StageContext& ctx, const VoxelizeParams& p);

}  // namespace hp::pipeline
