#pragma once
// formats/sampler — prepared sampler files (.hsmp): a distance field in the layout its sampler
// reads (lib/field: bricks of samples, the bound pyramid, a narrow band's tables, the scalars),
// in the project's container (kind "prepared sampler"), every array at a 64-byte boundary so that
// a mapped file is read in place, without decoding. Sections and validation: formats/sampler.md.
#include <cstddef>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/mapped_file.hpp"
#include "field/field.hpp"

namespace hp {

inline constexpr const char* kSamplerExtension = ".hsmp";

// Writes `sampler`'s layout atomically; `metadata` (provenance: tool, the field file it was made
// from with its hash) becomes the "meta" section. Deterministic bytes: the same field gives the
// same file, whatever the threads that built the sampler.
void write_sampler_file(const std::filesystem::path& path, const nlohmann::json& metadata, const DistanceSampler& sampler);

// The same file as write_sampler_file(path, metadata, DistanceSampler(grid, values)), byte for
// byte, made while it is written (lib/field/field_stream.hpp): the samples go into the file a
// layer of bricks at a time, never held whole, their CRC-32 taken while they are in cache.
// Memory: the pyramid and a few MiB. One thread.
void write_dense_sampler_file(const std::filesystem::path& path, const nlohmann::json& metadata, const GridSpec& grid,
                              std::span<const float> values);
void write_dense_sampler_file(const std::filesystem::path& path, const nlohmann::json& metadata, const GridSpec& grid,
                              std::span<const double> values);

struct SamplerFile {
    nlohmann::json metadata;
    DistanceSampler sampler;  // reads the mapped file's arrays, and keeps the file mapped
    std::size_t file_size = 0;
};

// Validates a mapped file: the container's checks (header, every section's header and payload
// CRC-32, the kind), then the structure (one scalars record, known flags, the arrays' sizes
// against the grid, a narrow band's brick numbers) before the sampler reads it. Throws
// hp::Error(bad_input) naming `where` and the damage.
SamplerFile read_sampler_file(std::shared_ptr<const MappedFile> file, const std::string& where);
// The same over bytes held elsewhere (a test's or a fuzzer's buffer, 64-byte aligned): `keep`
// holds them alive for the sampler.
SamplerFile read_sampler(std::string_view bytes, std::shared_ptr<const void> keep, const std::string& where);
// MappedFile::open, then read_sampler_file.
SamplerFile map_sampler_file(const std::filesystem::path& path);

}  // namespace hp
