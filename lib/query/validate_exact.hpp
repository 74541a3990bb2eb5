#pragma once
// lib/query/validate_exact — haptic-query --validate exact: VPS scored against the exact
// continuous contact between the meshes themselves (lib/exact, docs/exact.md) on a trajectory
// sampled at 1 kHz. For each step (pose k-1 to pose k): the exact first contact in the step
// (fraction 0 when the meshes already overlap at its start) and VPS at pose k. Counted and listed:
//  early       VPS reports contact at pose k, the meshes have not touched in the step and do not
//              overlap at pose k; with the true distance between the meshes there;
//  late        the meshes overlap at pose k, VPS reports no contact; with the penetration depth
//              there (exact/penetration.hpp: the deepest vertex of either mesh inside the other,
//              a lower bound on the translational depth; 0 with vertices_inside 0 when only edges
//              cross faces) and, under its own key, the path length the moving mesh's centre
//              travelled since the meshes first touched (an upper bound for translations);
//  tunnelling  the meshes are apart at poses k - 1 and k but touched within the step, and VPS
//              reported no contact at either pose: the contact fell between two samples.
// The moving mesh must be in the frame of the moving tree's points (the mesh the pointshell was
// made from, same units). General steps are split into translation and rotation (docs/exact.md).
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/progress.hpp"
#include "contact/query.hpp"
#include "query/scenario.hpp"

namespace hp {

// The value of haptic-query --validate (and of the report's "validate") that runs this check.
inline constexpr const char* kValidateExact = "exact";

struct ExactValidationSpec {
    std::filesystem::path static_path, moving_path;            // the field and the tree (as haptic-query)
    std::filesystem::path static_mesh_path, moving_mesh_path;  // the meshes
    PoseSource poses;                                          // the trajectory, or a scenario
    bool fail_on_tunnel = false;
    bool file_names_only = false;
};

struct ExactValidation {
    nlohmann::json report;
    std::vector<Pose> poses;
    std::size_t early = 0, late = 0, tunnel = 0;
    bool pass = true;  // false: tunnelling with fail_on_tunnel
    std::vector<std::string> warnings;  // for the caller to print (a mesh that is not the file's source)
};

// Throws hp::Error: usage for a missing mesh or fewer than two poses, bad_input for files that
// fail their readers.
ExactValidation run_exact_validation(const ExactValidationSpec& spec, const Progress& progress = {});

// The table of the text output: the counts, then up to `rows` entries of each list.
std::string format_exact_validation(const ExactValidation& v, std::size_t rows = 10);

}  // namespace hp
