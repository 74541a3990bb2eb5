#pragma once
// lib/mesh/import — the one place a mesh file meets Assimp (internal to lib/mesh): the file read
// once, its declared counts checked, the scene imported with the flags every reader uses. An OBJ
// file that lib/mesh/obj_native reads exactly as Assimp would is read there instead (no Assimp
// importer is made); every other file, and every OBJ file it declines, goes to Assimp.
// Errors: hp::Error(bad_input) naming the file (missing, empty, unreadable, not a mesh).
#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include <assimp/Importer.hpp>
#include <assimp/scene.h>

#include "mesh/obj_native.hpp"

namespace hp {

struct ImportedFile {
    std::string bytes;                           // the file as read
    std::unique_ptr<Assimp::Importer> importer;  // owns `scene`
    const aiScene* scene = nullptr;              // null exactly when `obj` holds the file
    std::optional<ObjScene> obj;                 // an OBJ file read natively
};

ImportedFile import_file(const std::filesystem::path& path);

// For tests that compare the two readings of an OBJ file: false sends every OBJ file to Assimp
// (the native reading is on by default). Not for the tools.
void set_native_obj(bool enabled);

// A COLLADA file is read first in a forked child while this process's resident anonymous memory
// is at most `bytes` (import.cpp, read_collada_in_child); above, only here. Default 256 MiB; 0 never
// forks. For tests; not for the tools.
void set_collada_child_limit(std::size_t bytes);
inline constexpr std::size_t kColladaChildLimit = std::size_t{256} << 20;

}  // namespace hp
