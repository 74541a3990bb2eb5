#pragma once
// Declared options (pipeline::ParamSpec) on an executable's command line: the option's name,
// value type, default, range or choices, exclusions and help all come from the declaration, and
// the values come back as the declaration's JSON (every key; null = unset). StageCall puts a
// stage's declaration on the command line with it, Tool::add_mesh_options the mesh options.
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "pipeline/stage.hpp"

namespace hp::app {

class DeclaredOptions {
public:
    // Adds an option to `cli` per declaration; `params` must outlive this object.
    DeclaredOptions(CLI::App& cli, const std::vector<pipeline::ParamSpec>& params);

    // After parsing: true when the option `key` was given.
    bool given(const std::string& key) const;
    // Its text as given (input files: the file name).
    const std::string& text(const std::string& key) const { return text_.at(key); }
    // Every key: its value when given, else its declared default (null = unset); an input
    // file's key is true when the file was given.
    nlohmann::json values() const;
    // The keys given, with their values.
    nlohmann::json given_values() const;

private:
    const std::vector<pipeline::ParamSpec>& params_;
    std::map<std::string, std::string> text_;  // values of the options that take one
    std::map<std::string, bool> flags_;        // values of the flags
    std::map<std::string, CLI::Option*> options_;
};

}  // namespace hp::app
