#pragma once
// Runs a pipeline stage's function (lib/pipeline/stage_*.cpp) for its executable, so that the
// executable and the pipeline share one body: the executable parses its options into the stage's
// parameters, calls the stage and prints what it returns.
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/tool.hpp"
#include "mesh/mesh.hpp"
#include "pipeline/stage.hpp"

namespace hp::app {

class StageCall {
public:
    // `stage`: the stage's name ("cfm"); its parameters start at their defaults (stage.cpp).
    StageCall(Tool& tool, std::string_view stage, std::filesystem::path mesh, std::filesystem::path output);

    // Sets one parameter (its key as in stage.cpp: "min_stacks").
    StageCall& set(const std::string& key, nlohmann::json value);
    // An input file by kind ("tree", "voxelmap", ...).
    StageCall& input(const std::string& kind, std::filesystem::path file);

    // Runs the stage: its warnings go through tool.warn (and are removed from the result).
    nlohmann::json run();

    // The mesh as the stage loaded it (after run()); nullptr when the stage did not load one.
    const LoadedMesh* mesh() const { return mesh_ ? &*mesh_ : nullptr; }

private:
    Tool& tool_;
    const pipeline::StageSpec& spec_;
    pipeline::StageContext ctx_;
    std::map<std::string, std::filesystem::path> inputs_;
    std::optional<LoadedMesh> mesh_;
};

}  // namespace hp::app
