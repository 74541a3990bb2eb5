#pragma once
// formats/png — 8-bit RGB PNG images through libpng (haptic-dump --slice --png).
#include <cstdint>
#include <filesystem>
#include <vector>

namespace hp::png {

// Writes `rgb` (3 bytes per pixel, rows top to bottom, width * height pixels) to `path`
// atomically as an 8-bit RGB PNG without time or text chunks, so the same pixels give the same
// bytes. Throws hp::Error(cannot_write).
void write_rgb(const std::filesystem::path& path, int width, int height, const std::vector<std::uint8_t>& rgb);

}  // namespace hp::png
