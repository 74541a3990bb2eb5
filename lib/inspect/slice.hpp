#pragma once
// lib/inspect/slice — one axis-aligned slice of a voxelmap or distance field, as a colour image
// or as ASCII text (haptic-dump --slice; docs/haptic-dump.md has the colour scale).
//
// A slice `x=I` holds the voxels (I, j, k), `y=J` the voxels (i, J, k), `z=K` the voxels (i, j, K).
// The image's horizontal axis u (to the right) is the first remaining grid axis, its vertical axis
// v (upwards) the second: x=I shows (y, z), y=J (x, z), z=K (x, y). Row 0 is the top (largest v).
// Values in voxels, inside positive: a voxelmap's layer, or distance / voxel size (scaled
// encodings divided back first); the surface layer (layer 0) is marked separately.
// Colours: diverging ColorBrewer RdBu (exact RGB in slice_colour), inside warm, outside cool,
// linear in t = value / scale, saturating beyond; surface voxels black. `scale` is the largest
// |value| over the whole grid, so every slice of one file uses the same colours.
// Reads through formats/vdb.hpp (no OpenVDB here). Cost: one pass over the grid.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "inspect/inspect.hpp"

namespace hp::inspect {

struct SliceSpec {
    int axis = 2;   // 0 = x, 1 = y, 2 = z
    int index = 0;  // voxel index along that axis
};

// Parses "x=I", "y=J" or "z=K" (I >= 0). Throws hp::Error(usage) for anything else.
SliceSpec parse_slice(const std::string& text);
std::string slice_name(const SliceSpec& spec);  // "z=3"

struct Slice {
    SliceSpec spec;
    int u_axis = 0, v_axis = 1;       // grid axes shown to the right and upwards
    int width = 0, height = 0;        // voxels along u and v
    std::string field;                // "layers" or "distance"
    double voxel_size = 0;
    double scale = 1;                 // largest |value| in voxels over the whole grid (>= 1)
    std::vector<double> values;       // width * height, u fastest, row 0 = v index 0 (bottom)
    std::vector<std::uint8_t> surface;  // 1 where the voxel is in the surface layer (layer 0)

    double at(int u, int v) const { return values[static_cast<std::size_t>(v) * static_cast<std::size_t>(width) + static_cast<std::size_t>(u)]; }
    bool on_surface(int u, int v) const { return surface[static_cast<std::size_t>(v) * static_cast<std::size_t>(width) + static_cast<std::size_t>(u)] != 0; }
};

// Reads the slice of a voxelmap (`layers`) or distance field (`distance`, surface from its
// `layers`) written by hapticprep. Throws hp::Error(bad_input) for other files (naming what the
// file is) and hp::Error(usage) when the index is outside the grid.
Slice read_slice(const std::filesystem::path& path, const SliceSpec& spec);

struct Rgb {
    std::uint8_t r = 0, g = 0, b = 0;
    bool operator==(const Rgb&) const = default;
};

// The colour of a voxel with `value` (voxels, inside positive) on a map saturating at `scale`.
Rgb slice_colour(double value, double scale, bool surface);

// Each voxel becomes zoom x zoom pixels, zoom = max(1, 512 / max(width, height)) (integer
// division), so small grids give images of about 512 pixels.
int slice_zoom(const Slice& slice);

// RGB bytes (3 per pixel, rows top to bottom) of the slice image at `zoom` pixels per voxel.
std::vector<std::uint8_t> slice_rgb(const Slice& slice, int zoom);

// Writes the slice as an 8-bit RGB PNG (atomically) and returns what was written as JSON
// ({"png", "width_px", "height_px", "pixels_per_voxel", ...}). Throws hp::Error(cannot_write).
nlohmann::json write_slice_png(const Slice& slice, const std::filesystem::path& out);

// ASCII rendering, one character per voxel, top row first: '#' surface; inside '1'..'9' (the
// value rounded to whole voxels, at least 1), '+' beyond 9; outside 'a'..'i' for 1..9 voxels,
// '~' beyond. Zero off the surface counts as inside. Throws hp::Error(usage) when the slice is
// wider or taller than kMaxAsciiSlice voxels (write a PNG instead).
inline constexpr int kMaxAsciiSlice = 160;
std::vector<std::string> slice_ascii(const Slice& slice);
char ascii_cell(double value, bool surface);

// Common JSON facts of a slice (file-independent): axis, index, field, sizes, scale.
nlohmann::json slice_json(const Slice& slice);

// haptic-dump --slice SPEC [--png OUT]: reads the slice and writes the PNG (when `png` is not
// empty) or renders ASCII; returns what to print (text and JSON, the same facts).
Summary slice_command(const std::filesystem::path& path, const std::string& spec, const std::filesystem::path& png);

}  // namespace hp::inspect
