#pragma once
// Pipeline files: parsing, --set overrides and validation before any work.
//
//   {"name": "vps-default", "description": "...",
//    "stages": [{"stage": "voxelize", "resolution": 128}, {"stage": "distance", "gradient": true}]}
//
// Validation (all before any mesh is touched) throws hp::Error(usage) whose message names the
// pipeline file, the stage and the key: unknown top-level key, missing "name"/"stages", unknown
// stage, a stage not available in this build, a stage given twice, an unknown or ill-typed
// parameter, a value out of range or not among the choices, two parameters that exclude each
// other, and a stage whose input no earlier stage makes ("distance" needs a "voxelize" before).
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipeline/stage.hpp"

namespace hp::pipeline {

struct StageConfig {
    const StageSpec* spec = nullptr;
    nlohmann::json given;   // the keys the pipeline (and --set) gave
    nlohmann::json params;  // every key of the stage: given, else the default (null = unset)
};

struct Pipeline {
    std::string source;       // the file it came from (for messages)
    std::string name, description;
    std::vector<StageConfig> stages;
    bool assembly = false;    // "assembly": true: each mesh file is an assembly (haptic-pipeline --assembly)

    // {"name":..,"description":..,"stages":[{"stage":..,<given keys>}]}: the pipeline as run.
    nlohmann::json to_json() const;
    // hex64 of the resolved stage parameters and the tool version: what --resume compares.
    std::string params_hash() const;
};

// One --set assignment "stage.key=value".
struct Override {
    std::string stage, key, value;
    bool unset = false;  // "stage.key=" : back to the default
};
// Parses "stage.key=value"; throws hp::Error(usage) naming the assignment when it is malformed.
Override parse_override(std::string_view assignment);

// Applies overrides to the raw pipeline JSON (before validation): the value is read as the
// parameter's type; setting a key removes the keys it excludes (the command line wins over the
// file). Throws hp::Error(usage) for an unknown stage or key, a stage not in the pipeline, or a
// value of the wrong type; messages name the stage and key.
void apply_overrides(nlohmann::json& raw, const std::vector<Override>& overrides, const std::string& source);

// Validates and resolves. `source` names the file in messages.
Pipeline parse_pipeline(const nlohmann::json& raw, const std::string& source);

// Reads the file (JSON syntax errors are usage errors naming line and column), applies the
// overrides and validates.
Pipeline load_pipeline(const std::filesystem::path& path, const std::vector<Override>& overrides = {});

}  // namespace hp::pipeline
