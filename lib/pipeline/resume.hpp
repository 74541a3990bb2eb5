#pragma once
// --resume: which meshes of an earlier run in the same OUTDIR need not run again.
#include <filesystem>
#include <map>
#include <string>

#include "pipeline/batch.hpp"

namespace hp::pipeline {

// The "ok" entries of OUTDIR/manifest.json and of this shard's manifest (when sharded), by mesh
// name; a file that is absent gives none. Throws hp::Error(bad_input) naming the file and the key
// for a manifest that cannot be read (read_manifest).
std::map<std::string, MeshEntry> previous_entries(const std::filesystem::path& outdir, const Shard& shard);

// True when `prev` was made from this input and these parameters (hashes) and its outputs, one
// per stage, are on disk with the recorded sizes and hashes (each file is read and hashed).
bool still_valid(const MeshEntry& prev, const std::string& input_hash, const std::string& params_hash,
                 const std::filesystem::path& outdir, const Pipeline& pipeline);

}  // namespace hp::pipeline
