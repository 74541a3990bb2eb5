#pragma once
// lib/inspect — what haptic-dump says about a file.
//
// describe() identifies a file by its content (container magic, OpenVDB magic, else a mesh that
// Assimp reads), never by its extension, and returns the same facts as text and as JSON.
// Per-kind describers live in their own files (describe_*.cpp). Errors: hp::Error(bad_input)
// for unreadable, damaged or unknown files.
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "mesh/mesh.hpp"

namespace hp::inspect {

struct Summary {
    std::string text;     // aligned lines for people
    nlohmann::json json;  // {"file": ..., "kind": ..., ...}
};

Summary describe(const std::filesystem::path& path, const MeshLoadOptions& mesh_options = {});

// Fails (bad input, naming the file) when `path` does not exist, is a folder or is empty: the
// first check of describe() and check().
void require_file(const std::filesystem::path& path);

// Per-kind describers (dispatched by describe()).
Summary describe_mesh(const std::filesystem::path& path, const MeshLoadOptions& options);
// --parts: the parts of a mesh file (mesh/assembly.hpp): name, geometry, placement, triangles,
// local and world bounds, instances.
Summary describe_parts(const std::filesystem::path& path, const MeshLoadOptions& options);
Summary describe_vdb(const std::filesystem::path& path);
Summary describe_container(const std::filesystem::path& path);
// Adds a pointshell's facts (count, spacing, bounds, normals) to its container summary `s`.
void describe_shell(const std::filesystem::path& path, Summary& s);
Summary describe_cfm(const std::filesystem::path& path);
Summary describe_scene(const std::filesystem::path& path);  // scene.json (describe_scene.cpp)
Summary describe_octree(const std::filesystem::path& path);  // describe_octree.cpp
// --export obj --level L of an octree: the level's spheres (tight spheres; level 0: the voxels'
// circumspheres) as icosahedra; returns the sphere count.
std::size_t export_octree_level_obj(const std::filesystem::path& input, const std::filesystem::path& output, int level);

// --export json of a closest feature map: {"spheres": [{"cluster", "level", "center", "radius",
// "stacks", "single_feature", "samples": [{"dir", "feature": {"type", "index"}, "point",
// "normal"}]}]} (feature and point null with store normal; a single_feature sphere lists one
// sample, its sample 0, which answers every direction), written atomically to `output`.
void export_cfm_json(const std::filesystem::path& path, const std::filesystem::path& output);

}  // namespace hp::inspect
