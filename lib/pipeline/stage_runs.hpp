#pragma once
// The stages' typed options (bound to their declarations in stage_*.cpp), typed results and run
// functions (one file each). Each does what its executable does between parsing the options and printing: same
// library calls, same metadata, same output bytes. Defaults are written here, once.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/stage.hpp"

namespace hp {
struct QueryCheckSpec;  // query/check_run.hpp
struct QueryCheck;
}

namespace hp::pipeline {

// The largest seed: 2^53 - 1, exact in every JSON reader.
constexpr std::uint64_t kMaxSeed = (std::uint64_t{1} << 53) - 1;

struct VoxelizeParams {
    std::optional<double> voxel_size;  // else from resolution
    int resolution = 128;              // voxels along the longest side
    int pad = 2;
    std::string fill = "auto";
    int max_layers = 0;
    int connectivity = 26;
    double scale = 1.0;
    std::optional<std::string> units;
    std::optional<std::string> part;  // one part of an assembly in its own frame (mesh/assembly.hpp)
    std::optional<double> linear_deflection, angular_deflection;  // STEP/IGES tessellation (docs/cad.md)
    std::optional<int> band;  // narrow band in voxels; 0 = dense; unset = dense while it fits comfortably
};

// --scale/--units/--part of the stages that read the mesh again: unset = the input file's.
struct DistanceParams {
    std::string encoding = "float";
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

struct PointshellParams {
    double alpha = 1.4142135623730951;  // sqrt 2
    std::string normals = "gradient";
    bool force = false;
    std::optional<double> scale;
    std::optional<std::string> units;
    std::optional<std::string> part;
    std::optional<double> linear_deflection, angular_deflection;
};

struct SpheretreeParams {
    int k = 4;
    std::uint64_t seed = 1;
    double threshold = 2.0;
};

struct CfmParams {
    int stacks = 16;
    int min_stacks = 4;
    std::string sampling = "adaptive";
    std::string store = "normal";
    bool force = false;
    std::optional<double> scale;
    std::optional<std::string> units;
    std::optional<std::string> part;
    std::optional<double> linear_deflection, angular_deflection;
};

struct OctreeParams {
    bool surface_only = false;
};

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

// --- Typed results: what each stage returns (to_json: the keys its executable prints with
// --json, minus file names; warnings are the caller's to print), and the text its executable
// prints (format_text), given what the executable adds (ToolFacts).

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
           seconds_sign = 0, seconds_gradient = 0, seconds_write = 0;
    std::vector<std::string> warnings;
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

struct OctreeSummary {
    bool surface_only = false;
    int levels = 0;
    std::size_t nodes = 0, voxels = 0;              // in the tree
    std::size_t solid_voxels = 0, surface_voxels = 0;  // of the voxelmap
    std::vector<std::size_t> nodes_per_level;       // levels L..1, then the voxels
    std::size_t mask_bytes = 0, memory_bytes = 0;   // stored (one byte per node); in memory (+ child index)
    double voxel_size = 0;
    int tight_smaller = 0;                          // masks whose tight sphere is smaller than the node's (of 255)
    double seconds_read = 0, seconds_build = 0, seconds_write = 0;
    std::vector<std::string> warnings;
};

struct QuerySummary {
    nlohmann::json report;  // the report of lib/query (every key but per_query)
    std::vector<std::string> warnings;
};

nlohmann::json to_json(const VoxelizeSummary& s);
nlohmann::json to_json(const DistanceSummary& s);
nlohmann::json to_json(const PointshellSummary& s);
nlohmann::json to_json(const SpheretreeSummary& s);
nlohmann::json to_json(const CfmSummary& s);
nlohmann::json to_json(const QuerySummary& s);
nlohmann::json to_json(const OctreeSummary& s);
nlohmann::json to_json(const OctreeSummary& s, const ToolFacts& f, const std::string& voxelmap_file);
std::string format_text(const OctreeSummary& s, const ToolFacts& f);

// The executables' --json: the stage's keys and what the executable adds (output, mesh, ...).
nlohmann::json to_json(const VoxelizeSummary& s, const ToolFacts& f);
nlohmann::json to_json(const DistanceSummary& s, const ToolFacts& f);
nlohmann::json to_json(const PointshellSummary& s, const ToolFacts& f);
nlohmann::json to_json(const SpheretreeSummary& s, const ToolFacts& f);
nlohmann::json to_json(const CfmSummary& s, const ToolFacts& f, const std::string& tree_file);

// The executables' text summaries.
std::string format_text(const VoxelizeSummary& s, const ToolFacts& f);
std::string format_text(const DistanceSummary& s, const ToolFacts& f);
std::string format_text(const PointshellSummary& s, const ToolFacts& f);
std::string format_text(const SpheretreeSummary& s, const ToolFacts& f);
std::string format_text(const CfmSummary& s, const ToolFacts& f);

// haptic-query's text (the check holds the report; `cfm_file` as given, empty: none).
std::string format_text(const QueryCheck& check, const QueryParams& p, const std::string& cfm_file);

// printf into a string (the formatters' helper).
std::string strf(const char* format, ...) __attribute__((format(printf, 1, 2)));

// The declarations (stage_*.cpp): name, files, options and run of each stage.
StageSpec voxelize_stage();
StageSpec distance_stage();
StageSpec pointshell_stage();
StageSpec spheretree_stage();
StageSpec cfm_stage();
StageSpec query_stage();
StageSpec octree_stage();

VoxelizeSummary run_voxelize(const StageContext& ctx, const VoxelizeParams& p);
DistanceSummary run_distance(const StageContext& ctx, const DistanceParams& p);
PointshellSummary run_pointshell(const StageContext& ctx, const PointshellParams& p);
SpheretreeSummary run_spheretree(const StageContext& ctx, const SpheretreeParams& p);
CfmSummary run_cfm(const StageContext& ctx, const CfmParams& p);
QuerySummary run_query(const StageContext& ctx, const QueryParams& p);
OctreeSummary run_octree(const StageContext& ctx, const OctreeParams& p);

// haptic-query's check for these options (the files are the caller's to add).
QueryCheckSpec query_check_spec(const QueryParams& p);

// The stage's run from a typed run function: reads the options struct, then runs.
template <class P, class R>
StageRun typed_run(std::string stage, R (*run)(const StageContext&, const P&)) {
    return [stage = std::move(stage), run](const StageContext& ctx) {
        return to_json(run(ctx, read_params<P>(*find_stage(stage), ctx.params)));
    };
}

// --scale, --units and --part of a stage that reads the mesh (as every executable spells them).
template <class P>
void declare_mesh_options(Declare<P>& d, const std::string& inherit) {
    d(&P::scale, "scale", "multiply mesh coordinates by F (after --units)" + inherit).above_zero();
    d(&P::units, "units", "unit of the mesh file; converts to metres" + inherit).one_of({"mm", "cm", "m", "in"});
    d(&P::part, "part",
      "one part of a multi-part file in its own frame: its name, its index or @G for geometry G (haptic-dump FILE "
      "--parts lists them)" + inherit);
    declare_tessellation_options(d, inherit);
}

// --linear-deflection and --angular-deflection: how a STEP or IGES file is tessellated.
template <class P>
void declare_tessellation_options(Declare<P>& d, const std::string& inherit) {
    d(&P::linear_deflection, "linear_deflection",
      "STEP/IGES: chord tolerance of the tessellation in world units (default: 0.25 x the voxel size)" + inherit)
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

}  // namespace hp::pipeline
