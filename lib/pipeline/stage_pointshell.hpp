#pragma once
// lib/pipeline — the pointshell stage: its typed options (bound to their declaration in
// stage_pointshell.cpp; the defaults are written here, once), its typed result, and its run, which
// does what haptic-pointshell does between parsing the options and printing: same library calls,
// same metadata, same output bytes.
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/stage_common.hpp"
#include "pointshell/pointshell.hpp"

namespace hp {
struct ShellField;
namespace vdb {
struct FileInfo;
}
}  // namespace hp

namespace hp::pipeline {

// The sampling input through the VDB reader, as the other stages read theirs: a voxelmap file
// (grid "layers") or a distance file ("distance" in any encoding, scaled ones divided by their
// scale factor, plus its copy of "layers"), and its metadata into `info`. Throws
// hp::Error(bad_input) naming the file when it is neither.
ShellField read_shell_field(const std::filesystem::path& path, vdb::FileInfo& info);

struct PointshellParams {
    double alpha = 1.4142135623730951;  // sqrt 2
    std::string normals = shell_normals_name(ShellNormals::gradient);
    bool force = false;
    std::optional<double> scale;
    std::optional<std::string> units;
    std::optional<std::string> part;
    std::optional<double> linear_deflection, angular_deflection;
};

struct PointshellSummary {
    nlohmann::json statistics;  // shell_statistics_json: points, spacing, coverage, normal deviation
    GridSummary grid;
    std::array<double, 3> origin{0, 0, 0};
    double alpha = 0;
    std::string normals_mode, normal_source;
    std::size_t surface_fallbacks = 0, dropped_no_normal = 0, components = 0, inverted_components = 0;
    std::size_t candidates = 0, colours = 0;
    double seconds_read = 0, seconds_sample = 0, seconds_statistics = 0, seconds_write = 0;
    std::vector<std::string> warnings;
};

nlohmann::json to_json(const PointshellSummary& s);
nlohmann::json to_json(const PointshellSummary& s, const ToolFacts& f);
std::string format_text(const PointshellSummary& s, const ToolFacts& f);

StageSpec pointshell_stage();
PointshellSummary run_pointshell(const StageContext& ctx, const PointshellParams& p);

}  // namespace hp::pipeline
