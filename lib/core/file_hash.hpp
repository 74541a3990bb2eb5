#pragma once
// hex64 of hash64 (core/hash.hpp) over a file's bytes, streamed: the hashes of the manifest and
// of scene.json. Throws hp::Error(bad_input) naming the file when it cannot be read.
#include <filesystem>
#include <string>

namespace hp {

std::string hash_file(const std::filesystem::path& path);

}  // namespace hp
