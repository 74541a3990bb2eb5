#pragma once
// lib/plot — the canvas the charts are drawn on (plot.cpp): pixels, lines, rectangles and text in
// the built-in font on a part of an Image, every write clipped. Internal to the plot module.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string_view>

#include "plot/font.hpp"
#include "plot/plot.hpp"

namespace hp::plot::detail {

// The charts' colours and sizes.
inline constexpr Rgb kWhite{255, 255, 255};
inline constexpr Rgb kBlack{0, 0, 0};
inline constexpr Rgb kGrid{225, 225, 225};
inline constexpr Rgb kText{20, 20, 20};
inline constexpr Rgb kFlagged{200, 30, 30};
inline constexpr int kScale = 2;            // text is drawn at twice the font's size
inline constexpr int kPad = 8;

// A picture with drawing primitives; every pixel write is clipped to the clip rectangle.
class Canvas {
public:
    Canvas(Image& image, int x0, int y0, int width, int height)
        : image_(image), ox_(x0), oy_(y0), w_(width), h_(height) { reset_clip(); }

    int width() const { return w_; }
    int height() const { return h_; }
    void clip(int x0, int y0, int x1, int y1) { cx0_ = x0; cy0_ = y0; cx1_ = x1; cy1_ = y1; }
    void reset_clip() { clip(0, 0, w_ - 1, h_ - 1); }

    void set(int x, int y, Rgb c) {
        if (x < cx0_ || x > cx1_ || y < cy0_ || y > cy1_ || x < 0 || y < 0 || x >= w_ || y >= h_) return;
        const std::size_t i = (static_cast<std::size_t>(oy_ + y) * static_cast<std::size_t>(image_.width) +
                               static_cast<std::size_t>(ox_ + x)) * 3;
        image_.rgb[i] = c.r;
        image_.rgb[i + 1] = c.g;
        image_.rgb[i + 2] = c.b;
    }

    void fill(int x0, int y0, int x1, int y1, Rgb c) {  // inclusive corners, any order
        if (x0 > x1) std::swap(x0, x1);
        if (y0 > y1) std::swap(y0, y1);
        x0 = std::max(x0, std::max(cx0_, 0));
        y0 = std::max(y0, std::max(cy0_, 0));
        x1 = std::min(x1, std::min(cx1_, w_ - 1));
        y1 = std::min(y1, std::min(cy1_, h_ - 1));
        for (int y = y0; y <= y1; ++y)
            for (int x = x0; x <= x1; ++x) set(x, y, c);
    }

    void frame(int x0, int y0, int x1, int y1, Rgb c) {
        fill(x0, y0, x1, y0, c);
        fill(x0, y1, x1, y1, c);
        fill(x0, y0, x0, y1, c);
        fill(x1, y0, x1, y1, c);
    }

    // A line of the given thickness between two points in pixel coordinates (doubles, clipped
    // to the clip rectangle first so far-away points cost nothing); dashed: 8 on, 6 off.
    void line(double x0, double y0, double x1, double y1, Rgb c, int thickness = 2, bool dashed = false) {
        if (!clip_segment(x0, y0, x1, y1)) return;
        const double dx = x1 - x0, dy = y1 - y0;
        const int steps = std::max(1, static_cast<int>(std::ceil(std::max(std::abs(dx), std::abs(dy)))));
        const int lo = -(thickness - 1) / 2, hi = thickness / 2;
        for (int i = 0; i <= steps; ++i) {
            if (dashed && i % 14 >= 8) continue;
            const int x = static_cast<int>(std::lround(x0 + dx * i / steps));
            const int y = static_cast<int>(std::lround(y0 + dy * i / steps));
            for (int oy = lo; oy <= hi; ++oy)
                for (int ox = lo; ox <= hi; ++ox) set(x + ox, y + oy, c);
        }
    }

    // Text with its top-left corner at (x, y); vertical: turned a quarter left (read bottom to
    // top), (x, y) then is its bottom-left corner.
    void text(int x, int y, std::string_view s, Rgb c, int scale = kScale, bool vertical = false) {
        for (std::size_t k = 0; k < s.size(); ++k) {
            const std::uint8_t* rows = glyph_rows(s[k]);
            const int cell = static_cast<int>(k) * kCellWidth * scale;
            for (int r = 0; r < kGlyphRows; ++r)
                for (int col = 0; col < kGlyphColumns; ++col) {
                    if (!(rows[r] & (1u << (kGlyphColumns - 1 - col)))) continue;
                    for (int sy = 0; sy < scale; ++sy)
                        for (int sx = 0; sx < scale; ++sx) {
                            const int tx = cell + col * scale + sx, ty = r * scale + sy;
                            if (vertical)
                                set(x + ty, y - tx, c);
                            else
                                set(x + tx, y + ty, c);
                        }
                }
        }
    }

    // Text on a white box with a margin of 2 pixels.
    void label(int x, int y, std::string_view s, Rgb c) {
        fill(x - 3, y - 3, x + text_width(s, kScale) + 2, y + text_height(kScale) - kScale + 2, kWhite);
        text(x, y, s, c);
    }

private:
    bool clip_segment(double& x0, double& y0, double& x1, double& y1) const {
        // Liang-Barsky against the clip rectangle widened by the line's thickness.
        const double xmin = cx0_ - 2, xmax = cx1_ + 2, ymin = cy0_ - 2, ymax = cy1_ + 2;
        double t0 = 0, t1 = 1;
        const double dx = x1 - x0, dy = y1 - y0;
        const double p[4] = {-dx, dx, -dy, dy};
        const double q[4] = {x0 - xmin, xmax - x0, y0 - ymin, ymax - y0};
        for (int i = 0; i < 4; ++i) {
            if (p[i] == 0) {
                if (q[i] < 0) return false;
                continue;
            }
            const double t = q[i] / p[i];
            if (p[i] < 0)
                t0 = std::max(t0, t);
            else
                t1 = std::min(t1, t);
            if (t0 > t1) return false;
        }
        const double ax = x0, ay = y0;
        x0 = ax + t0 * dx;
        y0 = ay + t0 * dy;
        x1 = ax + t1 * dx;
        y1 = ay + t1 * dy;
        return true;
    }

    Image& image_;
    int ox_, oy_, w_, h_;
    int cx0_ = 0, cy0_ = 0, cx1_ = 0, cy1_ = 0;
};

}  // namespace hp::plot::detail
