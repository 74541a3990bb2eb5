#pragma once
// lib/inspect/export_ply — points with normals as PLY, for viewers (MeshLab, CloudCompare, Blender).
//
// Layout: "ply", "format binary_little_endian 1.0" (or "ascii 1.0"), an optional comment line,
// "element vertex N", float properties x y z nx ny nz, then N records of 6 float32 values (24
// bytes each, little-endian) or N text lines. Values are rounded to float (PLY viewers read
// floats); ASCII writes 9 significant digits, which read back to the same float. Written
// atomically (lib/core/atomic_file). Throws hp::Error(cannot_write) when the file cannot be
// written; std::invalid_argument when the two spans differ in length (a programming error).
#include <filesystem>
#include <span>
#include <string>

#include "math/vec.hpp"

namespace hp::inspect {

// `comment` (one line, no newline) goes into the header, e.g. the source file's name.
void write_ply(const std::filesystem::path& path, std::span<const Vec3d> points, std::span<const Vec3d> normals,
               bool ascii = false, const std::string& comment = "");

// The points and normals of a pointshell or tree file (formats/shell) as PLY; returns the point
// count. Throws hp::Error(bad_input) when `input` is not such a file.
std::size_t export_shell_ply(const std::filesystem::path& input, const std::filesystem::path& output, bool ascii);

}  // namespace hp::inspect
