#pragma once
// lib/mesh/import — the one place a mesh file meets Assimp (internal to lib/mesh): the file read
// once, its declared counts checked, the scene imported with the flags every reader uses.
// Errors: hp::Error(bad_input) naming the file (missing, empty, unreadable, not a mesh).
#include <filesystem>
#include <memory>
#include <string>

#include <assimp/Importer.hpp>
#include <assimp/scene.h>

namespace hp {

struct ImportedFile {
    std::string bytes;                           // the file as read
    std::unique_ptr<Assimp::Importer> importer;  // owns `scene`
    const aiScene* scene = nullptr;              // never null on return
};

ImportedFile import_file(const std::filesystem::path& path);

}  // namespace hp
