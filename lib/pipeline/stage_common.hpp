#pragma once
// lib/pipeline — what the stages share beside their declaration (stage.hpp): what an executable
// adds to a stage's summary, the declarations of the mesh options, and the helpers of the stages
// that read the mesh. Each stage's options, result and run are in its own header
// (stage_voxelize.hpp ...), beside its stage_<name>.cpp.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/stage.hpp"

namespace hp::pipeline {

// The largest seed: 2^53 - 1, exact in every JSON reader.
constexpr std::uint64_t kMaxSeed = (std::uint64_t{1} << 53) - 1;

// What the executable adds to a stage's summary (its --json and text).
struct ToolFacts {
    std::string output;                 // the file written
    const LoadedMesh* mesh = nullptr;   // as the stage loaded it (nullptr: none)
    std::uintmax_t file_bytes = 0;
    std::size_t peak_rss_bytes = 0;
    double total_seconds = 0;
};

struct GridSummary {
    std::array<int, 3> dims{0, 0, 0};
    double voxel_size = 0;
};

// printf into a string (the formatters' helper).
std::string strf(const char* format, ...) __attribute__((format(printf, 1, 2)));

// The stage's run from a typed run function: reads the options struct, then runs.
template <class P, class R>
StageRun typed_run(std::string stage, R (*run)(const StageContext&, const P&)) {
    return [stage = std::move(stage), run](const StageContext& ctx) {
        return to_json(run(ctx, read_params<P>(*find_stage(stage), ctx.params)));
    };
}

template <class P>
void declare_tessellation_options(Declare<P>& d, const std::string& inherit, const std::string& chord_default);

// What a STEP/IGES chord tolerance defaults to in a stage (it knows its voxel size).
inline const std::string kStageChordDefault = "0.25 x the voxel size";

// --scale, --units and --part of a stage that reads the mesh (as every executable spells them),
// and of haptic-dump (mesh_params, whose chord tolerance defaults to a fraction of the file's size).
template <class P>
void declare_mesh_options(Declare<P>& d, const std::string& inherit, const std::string& chord_default = kStageChordDefault) {
    d(&P::scale, "scale", "multiply mesh coordinates by F (after --units)" + inherit).above_zero();
    d(&P::units, "units", "unit of the mesh file; converts to metres" + inherit).one_of({"mm", "cm", "m", "in"});
    d(&P::part, "part",
      "one part of a multi-part file in its own frame: its name, its index or @G for geometry G (haptic-dump FILE "
      "--parts lists them)" + inherit);
    declare_tessellation_options(d, inherit, chord_default);
}

// --linear-deflection and --angular-deflection: how a STEP or IGES file is tessellated.
template <class P>
void declare_tessellation_options(Declare<P>& d, const std::string& inherit, const std::string& chord_default) {
    d(&P::linear_deflection, "linear_deflection",
      "STEP/IGES: chord tolerance of the tessellation in world units (default: " + chord_default + ")" + inherit)
        .above_zero();
    d(&P::angular_deflection, "angular_deflection", "STEP/IGES: angular tolerance of the tessellation in radians (default: 0.35)" + inherit)
        .above_zero();
}

// The tessellation of a stage that reads the mesh again: the option when given, else what the
// input file `recorded` in its parameters (the voxelmap's, the field's, the tree's), so that every
// stage meshes a STEP/IGES file as the first one did.
template <class P>
void tessellation_or(MeshLoadOptions& mopt, const P& p, const nlohmann::json& recorded) {
    auto pick = [&](const std::optional<double>& given, const char* key, double& out) {
        if (given) out = *given;
        else if (recorded.is_object() && recorded.contains(key) && recorded[key].is_number()) out = recorded[key].get<double>();
    };
    pick(p.linear_deflection, "linear_deflection", mopt.linear_deflection);
    pick(p.angular_deflection, "angular_deflection", mopt.angular_deflection);
}

// A STEP/IGES mesh's tessellation into a file's parameters (nothing for other meshes).
inline void record_tessellation(nlohmann::json& params, const LoadedMesh& m) {
    if (m.tessellation.linear_deflection <= 0) return;
    params["linear_deflection"] = m.tessellation.linear_deflection;
    params["angular_deflection"] = m.tessellation.angular_deflection;
}

// What import said about a STEP/IGES file, as the stage's warnings.
inline void add_import_notes(std::vector<std::string>& warnings, const std::string& mesh, const LoadedMesh& m) {
    for (const std::string& n : m.notes) warnings.push_back(mesh + ": " + n);
}

// The part the stage reads: the option when given, else the one `recorded` in the input file's
// parameters ("" = the whole file).
inline std::string part_or(const std::optional<std::string>& given, const nlohmann::json& recorded) {
    if (given) return *given;
    return recorded.is_object() && recorded.contains("part") && recorded["part"].is_string() ? recorded["part"].get<std::string>()
                                                                                            : std::string();
}

// The mesh options of a tool that reads a mesh outside a stage (haptic-dump): unset = the
// MeshLoadOptions default.
struct MeshParams {
    std::optional<double> scale;
    std::optional<std::string> units;
    std::optional<std::string> part;
    std::optional<double> linear_deflection, angular_deflection;
};
// Their declaration (declare_mesh_options on MeshParams).
const std::vector<ParamSpec>& mesh_params();
// The given ones into `options`.
void apply(const MeshParams& p, MeshLoadOptions& options);

}  // namespace hp::pipeline
