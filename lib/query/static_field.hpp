#pragma once
// lib/query/static_field — the static object of a query from its file.
//
// A distance field of haptic-distance (kind "distance"; float, double or scaled Int32 encoding,
// scaled values divided by the file's scale_factor) gives V directly. A layered voxelmap of
// haptic-voxelize (kind "voxelmap") gives V = layer x voxel size: a coarser distance (Sagardia et
// al. 2014's global penetration, eq. 4 with sigma = s), exact to about one voxel. Inside positive, world units.
// Memory: a dense file, one sample per voxel of the grid (float or double, DistanceSampler); a
// narrow-band file (haptic:band > 0), its bricks only, in the sparse sampler.
// A prepared sampler file (.hsmp, formats/sampler.md) made from such a file gives the same
// sampler, read in place from the mapped file: no decoding, and its pages are the page cache's.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "core/mapped_file.hpp"
#include "field/field.hpp"

namespace hp {

struct StaticField {
    DistanceSampler field;
    std::string kind;       // "distance" or "voxelmap"
    std::string encoding;   // distance: float, double or scaled; voxelmap: "layers"
    nlohmann::json metadata;  // the file's haptic: metadata
    // A mapped prepared sampler: the record of the field file it was made from (file, bytes,
    // hash, kind, encoding, metadata); null for a field read from its own file.
    nlohmann::json made_from;
};

// Throws hp::Error(bad_input) for a file that is not ours, damaged, or of another kind.
StaticField load_static_field(const std::filesystem::path& path);

// The field of a prepared sampler file, mapped (formats/sampler.hpp: every check of the file);
// kind, encoding and metadata as the file records them of the field it was made from ("field").
// Throws hp::Error(bad_input) naming `where` for a damaged file or one of another kind.
StaticField map_static_field(std::shared_ptr<const MappedFile> file, const std::string& where);
// The "field" record of a prepared sampler's metadata: the field file it is made from (its name,
// size and content hash, core/file_hash.hpp) and that field's kind, encoding and metadata, as
// map_static_field gives them back (StaticField::made_from).
nlohmann::json sampler_field_record(const std::string& file_name, std::uint64_t bytes, const std::string& hash,
                                    const StaticField& field);
// The metadata of a prepared sampler made by haptic-pipeline from `field` (whose sampler need not
// be built): the tool and the field file it was made from (sampler_field_record).
nlohmann::json static_sampler_metadata(const std::string& file_name, std::uint64_t bytes, const std::string& hash,
                                       const StaticField& field);
// Writes `field`'s prepared sampler file (formats/sampler.hpp) at `path`, its metadata naming
// haptic-pipeline as the tool and the field file it was made from (static_sampler_metadata).
void write_static_sampler(const std::filesystem::path& path, const std::string& file_name, std::uint64_t bytes,
                          const std::string& hash, const StaticField& field);

}  // namespace hp
