#pragma once
// lib/scene/scene_sampler — a geometry's prepared sampler (formats/sampler.md), mapped for the
// scene query and checked against scene.json.
//
// The file is mapped read-only; its size and XXH3 hash are compared with scene.json's record (one
// pass over the mapped bytes, which also brings its pages in), then the file's own checks run
// (container CRCs, the layout against the grid), then its record of the field it was made from
// (size and hash) is compared with scene.json's record of the geometry's field of `kind`, its
// voxel size with the scene's, its grid with the geometry's bounds. Throws hp::Error(bad_input)
// "SCENE: part P: FILE: ..." (scene_file.hpp's messages for a missing or changed file).
#include <cstddef>
#include <filesystem>
#include <string>

#include "query/static_field.hpp"
#include "scene/scene_file.hpp"

namespace hp::scene {

StaticField map_scene_sampler(const std::filesystem::path& scene_path, const Scene& scene, std::size_t geometry,
                              const std::string& kind);

}  // namespace hp::scene
