#pragma once
// Hashes of a file's bytes, streamed. Throws hp::Error(bad_input) naming the file when it cannot be read.
//
// hash_file: hex64 of hash64 (FNV-1a 64, core/hash.hpp): the manifest's hashes and version-1 scene.json files'.
// content_hash: "xxh3:" and hex64 of XXH3-64 (seed 0): scene.json's hashes from version 2 on,
// about 25 times faster to verify than FNV on the large field files a scene loads.
// hash_matches: whether the file's bytes have the recorded hash, in the algorithm its form names
// ("xxh3:" and 16 hex digits: XXH3-64; 16 hex digits alone: FNV-1a 64); false for any other form.
#include <filesystem>
#include <string>

namespace hp {

std::string hash_file(const std::filesystem::path& path);
std::string content_hash(const std::filesystem::path& path);
bool hash_matches(const std::filesystem::path& path, const std::string& recorded);
// Whether a recorded hash is in content_hash's form ("xxh3:" and 16 hex digits).
bool is_content_hash(const std::string& recorded);

}  // namespace hp
