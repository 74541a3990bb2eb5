#pragma once
// lib/scene/scene_file — scene.json: an assembly of prepared parts (docs/scene.md).
//
// haptic-pipeline --assembly prepares every distinct geometry of a multi-part file once, in its
// own frame, and writes OUTDIR/scene.json: the parts (name, geometry, rigid placement as position
// + quaternion and as a 4x4 matrix, world bounds, bounding sphere) and per geometry its files
// with their sizes and hashes (version 2: "xxh3:" and XXH3-64 of the bytes; version 1: hex64 of
// FNV-1a, as the manifest, still verified; core/file_hash.hpp). Paths are relative to the
// scene file's folder. Units: metres when the assembly was read with --units, else the file's.
// The format key "hapticprep-scene" tells it from haptic-sim's scene files; a version newer than
// kSceneVersion is refused.
// read_scene() validates every key and throws hp::Error(bad_input) naming the file and the key
// (or part); verify_scene_files() checks that each file exists with its recorded size and hash.
#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "math/vec.hpp"
#include "mesh/assembly.hpp"

namespace hp::scene {

inline constexpr const char* kSceneFormat = "hapticprep-scene";
inline constexpr int kSceneVersion = 2;

struct FileRef {
    std::string file;  // relative to the scene's folder
    std::uint64_t bytes = 0;
    std::string hash;  // content_hash ("xxh3:..."), or hash_file's FNV hex64 (version 1)
};

struct SceneGeometry {
    std::string id;          // "g0"
    std::string part;        // the selector its files were made with ("@0")
    std::string first_part;  // the name of its first part
    std::size_t instances = 0;
    std::size_t triangles = 0;
    std::string baked;       // what its placements' bake put into it ("" none)
    Aabb local_bounds;       // of its mesh, in its own frame
    bool ok = true;
    std::string error;       // when !ok
    std::map<std::string, FileRef> files;  // by kind: voxelmap, distance, pointshell, tree, cfm, octree
};

struct ScenePart {
    std::string name;
    std::size_t geometry = 0;  // index into geometries
    Placement placement;
    Aabb world_bounds;
    Vec3d sphere_center;
    double sphere_radius = 0;
};

struct Scene {
    std::string source_file, source_name, source_hash;
    std::string units;  // "m", or "file units"
    double voxel_size = 0;
    std::string pipeline_name, params_hash;
    std::vector<SceneGeometry> geometries;
    std::vector<ScenePart> parts;
    std::vector<std::string> notes;

    // The part named `name` (or its index); hp::Error(bad_input) naming `where` and listing parts.
    std::size_t find_part(const std::string& name, const std::string& where) const;
};

nlohmann::json to_json(const Scene& scene);
// Throws hp::Error(bad_input) "WHERE: key K: problem" for a missing or mistyped key, an unknown
// format or a newer version, a part naming an unknown geometry, a non-finite or non-rigid placement.
Scene from_json(const nlohmann::json& j, const std::string& where);

Scene read_scene(const std::filesystem::path& path);
// Whether the file's first bytes hold the scene format key (what haptic-dump dispatches on).
bool looks_like_scene(const std::filesystem::path& path);
// Writes atomically (2-space JSON and a newline); hp::Error(cannot_write) when it cannot.
void write_scene(const std::filesystem::path& path, const Scene& scene);

// Checks the files of every geometry that is ok (or of `only` when given): present, their size
// and hash as recorded. Throws hp::Error(bad_input) "SCENE: part P: FILE: ..." for the first that
// is not, naming a part of the geometry and saying what to do.
// The files are hashed on all threads; the error is the first in geometry order, as one by one.
// `size_only(g, kind)`, when given and true: that file is checked for presence and size only (a
// field the query does not read because it maps the field's prepared sampler).
void verify_scene_files(const std::filesystem::path& scene_path, const Scene& scene,
                        const std::vector<std::size_t>& only = {},
                        const std::function<bool(std::size_t, const std::string&)>& size_only = {});
// The same message verify_scene_files gives for geometry g's file `file` (absolute): "SCENE: part
// P: FILE: missing (...)" or ": changed since the scene was prepared (...)".
[[noreturn]] void fail_scene_file(const std::filesystem::path& scene_path, const Scene& scene, std::size_t geometry,
                                  const std::filesystem::path& file, bool missing);
// Sets each ok geometry's file sizes and hashes from the files (content_hash, XXH3): what
// haptic-pipeline --assembly records in scene.json. A file whose recorded hash is already XXH3
// (the manifest's, from this run or checked by its --resume) keeps it; FNV hashes of earlier
// manifests are replaced.
void hash_scene_files(const std::filesystem::path& scene_path, Scene& scene);

// The absolute path of a geometry's file of `kind`; hp::Error(bad_input) when the geometry has none.
std::filesystem::path geometry_file(const std::filesystem::path& scene_path, const Scene& scene, std::size_t geometry,
                                    const std::string& kind);

// "SCENE: part 'NAME'": how every message about one part of a scene names it.
std::string part_where(const std::filesystem::path& scene_path, const std::string& part);

// A part's scene entry from its assembly part and its geometry's local bounds (world bounds from
// the 8 corners, the sphere around the local box's centre with its half diagonal).
ScenePart make_scene_part(const AssemblyPart& part, const Aabb& local_bounds);

}  // namespace hp::scene
