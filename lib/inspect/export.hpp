#pragma once
// lib/inspect/export — haptic-dump --export FORMAT -o OUT: writes a file's content in a format
// other tools read.
//
//   ply       pointshell or tree -> points with normals (lib/inspect/export_ply.hpp); --ascii;
//             with --level L a tree level's parent points (lib/inspect/tree.hpp).
//   json      tree -> every cluster (tree.hpp); closest feature map -> every sphere and sample
//             (export_cfm_json, inspect.hpp).
//   obj       tree with --level L -> the spheres of level L as icosahedra (export_tree_level_obj).
//   levelset  voxelmap or distance field -> standard OpenVDB level set (formats/vdb_levelset.hpp):
//             FloatGrid `surface`, class level set, inside negative, world units, background 3
//             voxels. From a distance field phi = -distance; from a voxelmap phi = -layer * voxel
//             size (surface voxels 0), a coarse level set with the layers' staircase.
//
// Adding a format for another kind: one branch in export_file (lib/inspect/export.cpp) that
// calls the kind's exporter. Errors: hp::Error(usage) for an unknown format or a missing -o,
// hp::Error(bad_input) when the file is not of a kind the format reads.
#include <filesystem>
#include <string>

#include "core/progress.hpp"
#include "inspect/inspect.hpp"

namespace hp::inspect {

struct ExportOptions {
    bool ascii = false;  // ply: text instead of binary little-endian
    int level = 0;       // ply of a tree: only the parent points of this level (1 = root); 0 = all points
};

// Runs the export and returns what to print (text and JSON with the same facts).
Summary export_file(const std::filesystem::path& path, const std::string& format, const std::filesystem::path& out,
                    const ExportOptions& options = {}, const Progress& progress = {});

// Voxelmap or distance field -> standard OpenVDB level set at `out`.
Summary export_levelset(const std::filesystem::path& path, const std::filesystem::path& out, const Progress& progress = {});

}  // namespace hp::inspect
