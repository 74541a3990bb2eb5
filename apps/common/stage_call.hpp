#pragma once
// An executable's stage: declares the stage's options on the command line from the stage's
// declaration (lib/pipeline/stage_*.cpp), and runs the stage's function with them, so that the
// executable and the pipeline share one declaration and one body. An executable adds by hand only
// its files (StageSpec::executable_only).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/declared.hpp"
#include "common/tool.hpp"
#include "mesh/mesh.hpp"
#include "pipeline/stage.hpp"
#include "pipeline/stage_common.hpp"

namespace hp::app {

class StageCall {
public:
    // Adds the options of the stage `stage` ("cfm") to tool.cli: names, defaults, ranges and
    // choices, exclusions and help, all from the declaration.
    StageCall(Tool& tool, std::string_view stage);

    // After parsing. The options as the stage reads them (every key; null = unset); the checks
    // between options run here (usage errors name the options as the command line spells them).
    const nlohmann::json& params();
    // The typed options struct of the stage (pipeline/stage_runs.hpp).
    template <class P>
    P typed() { return pipeline::read_params<P>(spec_, params()); }
    // True when the option `key` was given on the command line.
    bool given(const std::string& key) const;
    // The checks between options (StageSpec::check) take the input option `key` as given: the
    // executable has that file another way (haptic-query --scene: the octrees of scene.json).
    // Call before params().
    void waive(const std::string& key) { waived_.push_back(key); }
    // The file given for an input option (ParamSpec::input, e.g. --cfm); empty when not given.
    std::filesystem::path file(const std::string& key) const;

    // An input file by kind ("tree", "voxelmap", ...).
    StageCall& input(const std::string& kind, std::filesystem::path file);

    // Runs the stage's function (pipeline/stage_runs.hpp) on `mesh` writing `output`, with the
    // typed options; its warnings go through tool.warn.
    template <class P, class R>
    R run(R (*stage_run)(const pipeline::StageContext&, const P&), std::filesystem::path mesh, std::filesystem::path output) {
        R result = stage_run(context(std::move(mesh), std::move(output)), typed<P>());
        for (const std::string& w : result.warnings) tool_.warn(w);
        return result;
    }

    // What the executable adds to the summary: its output file (and its size, when it exists),
    // the mesh, the peak memory and the seconds since `start`.
    pipeline::ToolFacts facts(std::chrono::steady_clock::time_point start) const;

    // run(), timed from here, then its summary printed: with --json to_json(result, facts,
    // json_extra...), as text format_text(result, facts) unless the output is JSON or quiet.
    // Returns the exit code 0 (failures throw).
    template <class P, class R, class... Extra>
    int run_and_print(R (*stage_run)(const pipeline::StageContext&, const P&), std::filesystem::path mesh,
                      std::filesystem::path output, const Extra&... json_extra) {
        const auto start = std::chrono::steady_clock::now();
        const R result = run(stage_run, std::move(mesh), std::move(output));
        const pipeline::ToolFacts f = facts(start);
        tool_.print_json(to_json(result, f, json_extra...));
        if (tool_.text_output()) std::fputs(format_text(result, f).c_str(), stdout);
        return 0;
    }

    // The mesh as the stage loaded it (after run()); nullptr when the stage did not load one.
    const LoadedMesh* mesh() const { return mesh_ ? &*mesh_ : nullptr; }

private:
    const pipeline::StageContext& context(std::filesystem::path mesh, std::filesystem::path output);

    Tool& tool_;
    const pipeline::StageSpec& spec_;
    DeclaredOptions options_;
    std::optional<nlohmann::json> params_;
    std::vector<std::string> waived_;
    std::map<std::string, std::filesystem::path> inputs_;
    std::optional<LoadedMesh> mesh_;
    pipeline::StageContext ctx_;
};

}  // namespace hp::app
