#pragma once
// Text for people from a batch manifest (batch.hpp): the summary table haptic-pipeline prints
// at the end, the one line per finished mesh of its progress display, and the stage list of
// --list-stages. Every fact here is in the manifest (or stage table) JSON too.
#include <string>

#include <nlohmann/json.hpp>

#include "pipeline/manifest.hpp"

namespace hp::pipeline {

// One row per mesh (status, triangles, seconds per stage, total, output size; the error of a
// failed mesh on its own line) and a closing line with the counts and the manifest's path.
std::string format_summary(const Manifest& manifest, const std::string& manifest_file);

// "ok      peg               voxelize 0.12 s, distance 0.31 s" or "failed  broken  <error>".
std::string format_mesh_line(const MeshEntry& entry);

// The stages of this build with their parameters (key, option, type, default, help), as text
// and as JSON ({"stages": [{"stage", "tool", "available", "output", "needs", "params": [...]}]}).
std::string format_stages();
nlohmann::json stages_json();

}  // namespace hp::pipeline
