#pragma once
// The frame every executable shares: CLI11 set-up with the common flags, error reporting with
// the exit codes (README, "Common to every tool"), the thread limit, warnings and the terminal
// progress bar.
//
//   int main(int argc, char** argv) {
//       hp::app::Tool tool("haptic-x", "What it does.", "Examples:\n  haptic-x in.stl -o out.vdb\n");
//       std::string in; tool.cli.add_option("MESH", in, "input mesh")->required();
//       return tool.run(argc, argv, [&] { ...; return 0; });
//   }
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "core/memory.hpp"
#include "core/progress.hpp"
#include "mesh/mesh.hpp"

namespace hp::app {

class Tool {
public:
    Tool(std::string name, const std::string& description, const std::string& examples);
    ~Tool();

    CLI::App cli;
    bool json = false;   // --json: machine-readable summary on stdout
    bool quiet = false;  // --quiet: no progress, no warnings, no text summary
    int threads = 0;     // --threads N (0: all cores)
    // Whether -o/--output names a file, so that "-o -" sends it to stdout (and the summary to
    // stderr). Tools whose -o is a folder set it to false before run().
    bool output_is_file = true;
    // After a successful run, end the process at once (output flushed) instead of freeing what
    // the body left to its callers' destructors and the static destructors: a tool that built a
    // large field would otherwise spend its last fraction of a second giving pages back that the
    // exit returns anyway. Set by tools whose every file is closed when the body returns. Not in a
    // sanitizer build, whose leak check runs at exit.
    bool exit_without_freeing = false;

    // Adds the mesh options (--scale, --units, --part, the STEP/IGES tessellation) as the stages
    // declare them (pipeline::mesh_params), filling `options` after parsing.
    void add_mesh_options(MeshLoadOptions& options);

    // Parses argv, applies --threads, runs `body` and maps exceptions to exit codes:
    // hp::Error → its code with "name: message"; CLI11 errors → 2; bad_alloc → 3.
    int run(int argc, char** argv, const std::function<int()>& body);

    // "name: warning: ..." on stderr unless --quiet or --json... (warnings still go to stderr
    // with --json, since stdout carries the JSON).
    void warn(const std::string& message) const;
    // Text for humans on stdout, unless --quiet or --json.
    bool text_output() const { return !quiet && !json; }
    // A progress reporter that draws a bar on stderr when it is a terminal, not in --quiet or
    // --json mode, and only once the work has taken longer than about a second.
    Progress progress();
    // Prints `j` on stdout (pretty, 2 spaces) when --json was given.
    void print_json(const nlohmann::json& j) const;

    const std::string& name() const { return name_; }

    // The ways the executable runs (haptic-query: a timing check, --validate exact, --scene) and
    // the options that serve only some of them: an option given outside its modes is a usage error
    // (exit 2) before the body runs, so that no option is accepted and then ignored. `current`
    // names the mode the parsed command line selects. The options between stage keys
    // (ParamSpec::applies) are checked by StageCall.
    struct Mode {
        std::string name;               // as messages name it: "--validate exact"
        std::vector<std::string> args;  // what selects it on a command line (the CLI test's)
    };
    void set_modes(std::vector<Mode> modes, std::function<std::string()> current);
    // `option` ("--csv") serves only these modes (names of set_modes); `why_not` may say, per mode it
    // does not serve, what that mode lacks for it (the end of the usage error).
    void applies(const std::string& option, std::vector<std::string> modes, std::map<std::string, std::string> why_not = {});

    // Every option of `cli` (name, flag, type, default, checks, excludes), read from the App: what
    // --help-json prints.
    nlohmann::json options_json();

private:
    std::string name_;
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace hp::app
