#pragma once
// lib/plot — charts written as PNG images: line charts (several series, legend, optional
// logarithmic axes, marker lines with labels), histograms (optionally logarithmic bins, for
// latencies) and stacked bar charts (a part per stage, a bar per mesh).
//
// Rendering path: our own rasteriser (lines, rectangles, a built-in 5x9 bitmap font drawn at
// twice its size) on top of the libpng writer of formats/png. No plotting library: the pictures
// are the same bytes on every machine (no font hinting, no antialiasing that changes with a
// library's version), the executables keep their Debian dependencies, and nothing runs after the
// tool (no SVG converter). docs/plot.md gives the reasons in full.
//
// Text is printable ASCII; any other byte is drawn as a box. Values that are not finite (and
// values <= 0 on a logarithmic axis) are left out of a chart.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace hp::plot {

struct Rgb {
    std::uint8_t r = 0, g = 0, b = 0;
    bool operator==(const Rgb&) const = default;
};

// The i-th colour of the series palette (ten colours that stay apart in colour and lightness,
// repeating after the tenth).
Rgb palette(std::size_t i);

struct Axis {
    std::string label;
    bool log = false;                 // logarithmic, base 10
    std::optional<double> min, max;   // a fixed range; else the data's range (and the marks')
};

// A marker line across the plot: vertical at x = `at` (x_marks) or horizontal at y = `at`
// (y_marks), labelled with `label` (e.g. "p99 41.2 us") next to the line, inside the plot.
struct Mark {
    double at = 0;
    std::string label;
    Rgb color{200, 30, 30};
    bool dashed = true;
};

enum class Style { line, points };

struct Series {
    std::string name;                 // the legend's entry; empty: not in the legend
    std::vector<double> x, y;         // the same length
    Style style = Style::line;
    std::optional<Rgb> color;         // else palette(index of the series)
};

struct LineChart {
    std::string title;
    Axis x, y;
    std::vector<Series> series;
    std::vector<Mark> x_marks, y_marks;
};

struct Histogram {
    std::string title;
    Axis x;                           // x.log: bins of equal width in log10(value)
    std::string y_label = "count";
    bool log_count = false;           // logarithmic count axis (empty bins are not drawn)
    std::vector<double> values;
    int bins = 40;
    std::vector<Mark> x_marks;
    Rgb color{70, 120, 190};
};

// Stacked bars: one bar per category (left to right), made of the parts (bottom first).
struct BarChart {
    std::string title;
    std::string y_label;
    std::vector<std::string> categories;
    std::vector<std::string> parts;               // the legend, bottom part first
    std::vector<std::vector<double>> values;      // values[part][category], >= 0
};

using Chart = std::variant<LineChart, Histogram, BarChart>;

struct Image {
    int width = 0, height = 0;
    std::vector<std::uint8_t> rgb;                // 3 bytes a pixel, rows top to bottom
    Rgb at(int x, int y) const;
};

// One chart on a white picture of width x height pixels (at least 200 x 150).
Image render(const Chart& chart, int width, int height);
// The charts one below the other, each panel_height pixels high.
Image render_panels(const std::vector<Chart>& charts, int width, int panel_height);
// Writes the picture as an 8-bit RGB PNG, atomically (formats/png). Throws hp::Error(cannot_write).
void write_png(const std::filesystem::path& path, const Image& image);
// render_panels + write_png.
void write_png(const std::filesystem::path& path, const std::vector<Chart>& charts, int width = 1000,
               int panel_height = 540);

// --- Building blocks, exposed for the tests ---

// Tick positions for [lo, hi]: the multiples inside [lo, hi] of the smallest step of 1, 2 or 5
// times a power of ten that is at least (hi - lo) / max_ticks (so at most max_ticks + 1 ticks).
std::vector<double> linear_ticks(double lo, double hi, int max_ticks);
// Tick positions on a logarithmic axis [lo, hi] (0 < lo < hi): the powers of ten inside, and
// 2 and 5 times them when the range spans less than three decades.
std::vector<double> log_ticks(double lo, double hi);
// A tick's text: at most four significant digits, no trailing zeros, powers of ten as 1e5.
std::string tick_label(double value);

struct Bins {
    std::vector<double> edges;                    // bins + 1 edges, increasing
    std::vector<std::size_t> counts;              // values in [edges[i], edges[i+1]) (last: closed)
};
// The histogram of the finite values (of the positive ones when log) over [lo, hi] (default:
// their range); values outside [lo, hi] are not counted.
Bins histogram_bins(const std::vector<double>& values, int bins, bool log, std::optional<double> lo = {},
                    std::optional<double> hi = {});

// The width and height in pixels of a line of text at the given scale (a glyph cell is 6 x 10
// pixels at scale 1).
int text_width(std::string_view text, int scale);
int text_height(int scale);

}  // namespace hp::plot
