#pragma once
// lib/pipeline — the stages of a haptic pipeline, run in-process (SPEC §1 haptic-pipeline).
//
// A stage is one executable of the toolchain seen from the library: its name ("voxelize"), the
// executable it mirrors ("haptic-voxelize"), its parameters, the kinds of files it needs and
// makes, and a run function that calls the library (never the executable) and writes its output
// file atomically. The parameters are exactly the executable's options: the JSON key is the long
// option name with '_' for '-' ("--voxel-size" -> "voxel_size"), the type, default, range and
// choices are the option's. The table of every stage lives in stage.cpp (one place); the
// command-line test checks that each key is an option of the executable.
//
// Stages pass files, not memory: a stage reads the files of earlier stages (the same bytes the
// executables would read), so that a pipeline's artifacts are byte-identical to those of the
// executables run one after the other with the same options, and --resume can trust the files.
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/memory.hpp"
#include "core/progress.hpp"
#include "mesh/mesh.hpp"

namespace hp::pipeline {

enum class ParamType { integer, number, string, flag };
const char* type_name(ParamType t);

struct ParamSpec {
    std::string key;                     // JSON key and --set name: "voxel_size"
    std::string option;                  // the executable's option: "--voxel-size"
    ParamType type = ParamType::number;
    nlohmann::json default_value;        // null: unset (the executable decides, see help)
    std::string help;
    std::vector<nlohmann::json> choices;  // allowed values; empty: any of the type
    std::optional<double> min, max;       // inclusive range for integer/number
    bool positive = false;                // number > 0
    std::vector<std::string> excludes;    // keys that may not be given together with this one
};

// What a stage run sees. Files of earlier stages are found by kind ("voxelmap", "distance"...).
struct StageContext {
    std::filesystem::path mesh;                          // the input mesh as given
    std::filesystem::path output;                        // the file this stage writes
    const std::map<std::string, std::filesystem::path>* inputs = nullptr;  // kind -> file
    nlohmann::json params;                               // every key of the stage: given or default (null = unset)
    nlohmann::json given;                                // the keys the pipeline set
    Progress progress;
    // Loads the mesh with these options once per mesh run (stages share it).
    std::function<const LoadedMesh&(const MeshLoadOptions&)> load_mesh;
    // True when the stage runs for its executable (apps/common/stage_call.hpp): messages then
    // name options as the executable spells them.
    bool executable = false;
    // A parameter as the user wrote it: "--min-stacks" for the executable, "min_stacks" in a pipeline.
    std::string option_name(const std::string& key) const;
};

// A stage's summary facts (what its executable prints with --json, minus file names).
using StageRun = std::function<nlohmann::json(const StageContext&)>;

struct StageSpec {
    std::string name;                 // "voxelize"
    std::string tool;                 // "haptic-voxelize"
    std::string description;
    std::string output_name;          // file name in the mesh's folder: "voxelize.vdb"
    std::string produces;             // kind of the output: "voxelmap"
    std::vector<std::string> needs;   // kinds of earlier outputs it reads ("mesh" is always there);
                                      // "a|b": either, the first one a stage made preferred
    std::vector<ParamSpec> params;
    bool available = false;           // false: the library is not in this build; validation rejects it
    bool deterministic = true;        // false: the output holds measurements (timings) that vary per run
    bool runs_alone = false;          // true: it times itself, so in a batch no other stage runs
                                      // meanwhile (stage_gate.hpp)
    // Checks between keys the executable makes at run time (e.g. --min-stacks <= --stacks), made
    // at validation instead: returns "" or {key, what is wrong}.
    std::function<std::pair<std::string, std::string>(const nlohmann::json& params)> check;
    StageRun run;

    const ParamSpec* param(std::string_view key) const;
};

// Every stage hapticprep knows, in pipeline order; unavailable ones included (so that validation
// can say "not available in this build" instead of "unknown").
const std::vector<StageSpec>& stages();
const StageSpec* find_stage(std::string_view name);

// Normalises a parameter name as users write it: "--voxel-size", "voxel-size" -> "voxel_size".
std::string normalize_key(std::string_view key);

// Checks one value against its spec; returns an empty string when it is valid, else what is
// wrong ("must be an integer in [0, 1000] (got 2000)").
std::string check_value(const ParamSpec& spec, const nlohmann::json& value);

// Parses a command-line value ("0.001", "true", "mm") into the parameter's type; nullopt when
// it cannot be read as that type.
std::optional<nlohmann::json> parse_value(const ParamSpec& spec, std::string_view text);

}  // namespace hp::pipeline
