#pragma once
// lib/plot — the built-in bitmap font: printable ASCII in 5 x 9 pixel glyphs (cap height 7,
// two rows of descenders), drawn in a 6 x 10 cell.
#include <cstdint>

namespace hp::plot {

inline constexpr int kGlyphColumns = 5;
inline constexpr int kGlyphRows = 9;
inline constexpr int kCellWidth = 6;
inline constexpr int kCellHeight = 10;

// The glyph's rows, top first; bit 4 is the leftmost column. A byte outside printable ASCII
// gives a box.
const std::uint8_t* glyph_rows(char c);

}  // namespace hp::plot
