#include "plot/plot.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <limits>

#include "formats/png.hpp"
#include "plot/canvas.hpp"
#include "plot/font.hpp"

namespace hp::plot {

namespace {

using detail::Canvas;
using detail::kBlack;
using detail::kFlagged;
using detail::kGrid;
using detail::kPad;
using detail::kScale;
using detail::kText;
using detail::kWhite;

bool finite(double v) { return std::isfinite(v); }

// One axis's mapping from values to pixels.
struct Scale {
    bool log = false;
    double lo = 0, hi = 1;        // the range in values
    int p0 = 0, p1 = 1;           // the pixels of lo and hi
    double t(double v) const { return log ? std::log10(v) : v; }
    double operator()(double v) const { return p0 + (t(v) - t(lo)) / (t(hi) - t(lo)) * (p1 - p0); }
    bool shows(double v) const { return finite(v) && (!log || v > 0); }
    std::vector<double> ticks(int max_ticks) const { return log ? log_ticks(lo, hi) : linear_ticks(lo, hi, max_ticks); }
};

// The range an axis shows for the given values: the fixed one, else the values' range widened
// a little (linear) or to whole decades, or half decades when narrow (log).
std::pair<double, double> axis_range(const Axis& axis, const std::vector<double>& values, bool from_zero = false) {
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (double v : values)
        if (finite(v) && (!axis.log || v > 0)) {
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
    if (from_zero && !axis.log) lo = std::min(lo, 0.0);
    if (!(lo <= hi)) {
        lo = axis.log ? 1 : 0;
        hi = axis.log ? 10 : 1;
    }
    if (axis.log) {
        double a = std::floor(std::log10(lo)), b = std::ceil(std::log10(hi));
        if (b - a < 2) {  // narrow: snap to the nearest 1, 2 or 5 times a power of ten
            const double steps[] = {1, 2, 5, 10};
            double l = std::pow(10.0, a), h = std::pow(10.0, b);
            for (double s : steps)
                if (s * std::pow(10.0, a) <= lo) l = s * std::pow(10.0, a);
            for (int i = 3; i >= 0; --i)
                if (steps[i] * std::pow(10.0, b - 1) >= hi) h = steps[i] * std::pow(10.0, b - 1);
            if (h <= l) h = l * 10;
            lo = l;
            hi = h;
        } else {
            lo = std::pow(10.0, a);
            hi = std::pow(10.0, b);
        }
    } else {
        if (hi == lo) {
            const double d = lo == 0 ? 1 : std::abs(lo) * 0.1;
            hi += d;
            if (!from_zero || lo != 0) lo -= d;
        } else {
            const double d = (hi - lo) * 0.04;
            hi += d;
            if (!(from_zero && lo == 0)) lo -= d;
        }
    }
    if (axis.min && (!axis.log || *axis.min > 0)) lo = *axis.min;
    if (axis.max && *axis.max > lo) hi = *axis.max;
    if (!(hi > lo)) hi = axis.log ? lo * 10 : lo + 1;
    return {lo, hi};
}

// The text cut to at most `width` pixels, ending in ".." when cut.
std::string fit(const std::string& text, int width) {
    if (text_width(text, kScale) <= width) return text;
    const int chars = std::max(0, (width / kScale + 1) / kCellWidth - 2);
    return text.substr(0, static_cast<std::size_t>(chars)) + "..";
}

int max_label_width(const std::vector<double>& ticks) {
    int w = 0;
    for (double t : ticks) w = std::max(w, text_width(tick_label(t), kScale));
    return w;
}

// The frame of an x-y chart: title, plot rectangle, grid, ticks, axis labels.
struct Frame {
    int left = 0, top = 0, right = 0, bottom = 0;   // the plot rectangle, inclusive
    Scale x, y;
};

Frame draw_frame(Canvas& cv, const std::string& title, const Axis& xaxis, std::pair<double, double> xr,
                 const Axis& yaxis, std::pair<double, double> yr, int legend_width, int label_band = -1) {
    // label_band < 0: numbered x ticks under the plot; else that many pixels left free there.
    const bool x_ticks = label_band < 0;
    Frame f;
    const int th = text_height(kScale);
    f.y.log = yaxis.log;
    f.y.lo = yr.first;
    f.y.hi = yr.second;
    f.x.log = xaxis.log;
    f.x.lo = xr.first;
    f.x.hi = xr.second;
    f.top = kPad + (title.empty() ? 0 : th + kPad);
    f.bottom = cv.height() - 1 - kPad - (xaxis.label.empty() ? 0 : th + kPad) - (x_ticks ? th + kPad : label_band);
    const int rows = std::max(2, (f.bottom - f.top) / (3 * th));
    f.y.p0 = f.bottom;
    f.y.p1 = f.top;
    const std::vector<double> yticks = f.y.ticks(rows);
    f.left = kPad + (yaxis.label.empty() ? 0 : th + kPad) + max_label_width(yticks) + kPad;
    // Room on the right for half the last x tick's label (or the legend).
    const int half_label = x_ticks ? text_width(tick_label(f.x.hi), kScale) / 2 + kPad : 0;
    f.right = cv.width() - 1 - std::max(3 * kPad, half_label) - (legend_width > 0 ? legend_width + kPad : 0);
    f.x.p0 = f.left;
    f.x.p1 = f.right;

    if (!title.empty()) {
        const std::string shown = fit(title, cv.width() - 2 * kPad);
        cv.text((cv.width() - text_width(shown, kScale)) / 2, kPad, shown, kText);
    }
    // Grid and y ticks.
    for (double t : yticks) {
        const int py = static_cast<int>(std::lround(f.y(t)));
        cv.fill(f.left, py, f.right, py, kGrid);
        cv.fill(f.left - 5, py, f.left, py, kBlack);
        const std::string s = tick_label(t);
        cv.text(f.left - kPad - text_width(s, kScale), py - th / 2 + 1, s, kText);
    }
    if (x_ticks) {
        const int cols = std::max(2, (f.right - f.left) / (max_label_width(linear_ticks(f.x.lo, f.x.hi, 8)) + 5 * kPad));
        std::vector<double> xticks = f.x.ticks(cols);
        if (f.x.log && xticks.size() > 1) {
            // Keep the labels apart: drop the 2 and 5 multiples when they would touch.
            int widest = max_label_width(xticks) + 2 * kPad;
            double narrowest = 1e9;
            for (std::size_t i = 1; i < xticks.size(); ++i) narrowest = std::min(narrowest, f.x(xticks[i]) - f.x(xticks[i - 1]));
            if (narrowest < widest) {
                std::vector<double> decades;
                for (double t : xticks)
                    if (std::abs(std::log10(t) - std::round(std::log10(t))) < 1e-9) decades.push_back(t);
                xticks = decades;
            }
        }
        for (double t : xticks) {
            const int px = static_cast<int>(std::lround(f.x(t)));
            cv.fill(px, f.top, px, f.bottom, kGrid);
            cv.fill(px, f.bottom, px, f.bottom + 5, kBlack);
            const std::string s = tick_label(t);
            cv.text(px - text_width(s, kScale) / 2, f.bottom + kPad, s, kText);
        }
    }
    cv.frame(f.left, f.top, f.right, f.bottom, kBlack);
    if (!xaxis.label.empty())
        cv.text((f.left + f.right - text_width(xaxis.label, kScale)) / 2, cv.height() - kPad - th, xaxis.label, kText);
    if (!yaxis.label.empty())
        cv.text(kPad, (f.top + f.bottom + text_width(yaxis.label, kScale)) / 2, yaxis.label, kText, kScale, true);
    return f;
}

void draw_marks(Canvas& cv, const Frame& f, const std::vector<Mark>& xm, const std::vector<Mark>& ym) {
    const int th = text_height(kScale);
    cv.clip(f.left + 1, f.top + 1, f.right - 1, f.bottom - 1);
    // Lines first, then labels on top, stacked downwards so that close marks stay readable.
    for (const Mark& m : xm)
        if (f.x.shows(m.at)) cv.line(f.x(m.at), f.top, f.x(m.at), f.bottom, m.color, 2, m.dashed);
    for (const Mark& m : ym)
        if (f.y.shows(m.at)) cv.line(f.left, f.y(m.at), f.right, f.y(m.at), m.color, 2, m.dashed);
    int row = 0;
    for (const Mark& m : xm) {
        if (!f.x.shows(m.at) || m.label.empty()) continue;
        const int px = static_cast<int>(std::lround(f.x(m.at)));
        const int w = text_width(m.label, kScale);
        const int lx = px + kPad + w < f.right ? px + kPad : px - kPad - w;
        cv.label(lx, f.top + kPad + row * (th + kPad), m.label, m.color);
        ++row;
    }
    // Labels of horizontal marks side by side from the left, so that close marks stay readable.
    int lx = f.left + kPad;
    for (const Mark& m : ym) {
        if (!f.y.shows(m.at) || m.label.empty()) continue;
        const int py = static_cast<int>(std::lround(f.y(m.at)));
        const int ly = py - th - 2 > f.top ? py - th - 2 : py + kPad;
        cv.label(lx, ly, m.label, m.color);
        lx += text_width(m.label, kScale) + 2 * kPad;
    }
    cv.reset_clip();
}

using Legend = std::vector<std::pair<std::string, Rgb>>;
constexpr int kSwatch = 28;

// The legend's width: a swatch and the longest name (0 without entries).
int legend_width(const Legend& entries) {
    if (entries.empty()) return 0;
    int w = 0;
    for (const auto& e : entries) w = std::max(w, text_width(e.first, kScale));
    return kPad + kSwatch + kPad + w + kPad;
}

// The legend box right of the plot, level with its top: a swatch and the name of each entry.
// Outside the plot so that it never hides data.
void draw_legend(Canvas& cv, const Frame& f, const Legend& entries, bool patches) {
    if (entries.empty()) return;
    const int th = text_height(kScale);
    const int swatch = kSwatch;
    const int bw = legend_width(entries), bh = kPad + static_cast<int>(entries.size()) * (th + 4) + kPad - 4;
    const int x0 = f.right + kPad, y0 = f.top;
    cv.fill(x0, y0, x0 + bw, y0 + bh, kWhite);
    cv.frame(x0, y0, x0 + bw, y0 + bh, Rgb{150, 150, 150});
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const int y = y0 + kPad + static_cast<int>(i) * (th + 4);
        const Rgb c = entries[i].second;
        if (patches)
            cv.fill(x0 + kPad, y + 2, x0 + kPad + swatch, y + th - 4, c);
        else
            cv.fill(x0 + kPad, y + th / 2 - 2, x0 + kPad + swatch, y + th / 2 + 1, c);
        cv.text(x0 + 2 * kPad + swatch, y, entries[i].first, kText);
    }
}

void draw(Canvas& cv, const LineChart& c) {
    std::vector<double> xs, ys;
    for (const Series& s : c.series) {
        assert(s.x.size() == s.y.size());
        xs.insert(xs.end(), s.x.begin(), s.x.end());
        ys.insert(ys.end(), s.y.begin(), s.y.end());
    }
    for (const Mark& m : c.x_marks) xs.push_back(m.at);
    for (const Mark& m : c.y_marks) ys.push_back(m.at);
    Legend legend;
    for (std::size_t k = 0; k < c.series.size(); ++k)
        if (!c.series[k].name.empty()) legend.emplace_back(c.series[k].name, c.series[k].color.value_or(palette(k)));
    const Frame f = draw_frame(cv, c.title, c.x, axis_range(c.x, xs), c.y, axis_range(c.y, ys), legend_width(legend));
    cv.clip(f.left + 1, f.top + 1, f.right - 1, f.bottom - 1);
    for (std::size_t k = 0; k < c.series.size(); ++k) {
        const Series& s = c.series[k];
        const Rgb color = s.color.value_or(palette(k));
        const std::size_t n = std::min(s.x.size(), s.y.size());
        bool have_prev = false;
        double px = 0, py = 0;
        for (std::size_t i = 0; i < n; ++i) {
            if (!f.x.shows(s.x[i]) || !f.y.shows(s.y[i])) {
                have_prev = false;  // a gap in the line
                continue;
            }
            const double qx = f.x(s.x[i]), qy = f.y(s.y[i]);
            if (s.style == Style::points) {
                const int ix = static_cast<int>(std::lround(qx)), iy = static_cast<int>(std::lround(qy));
                cv.fill(ix - 1, iy - 1, ix + 1, iy + 1, color);
            } else if (have_prev) {
                cv.line(px, py, qx, qy, color);
            } else if (i + 1 == n || !f.x.shows(s.x[i + 1]) || !f.y.shows(s.y[i + 1])) {
                cv.line(qx, qy, qx, qy, color);  // a lone point still shows
            }
            px = qx;
            py = qy;
            have_prev = true;
        }
    }
    cv.reset_clip();
    draw_marks(cv, f, c.x_marks, c.y_marks);
    draw_legend(cv, f, legend, false);
}

void draw(Canvas& cv, const Histogram& h) {
    std::vector<double> range_values = h.values;
    for (const Mark& m : h.x_marks) range_values.push_back(m.at);
    const Axis& xaxis = h.x;
    const auto xr = axis_range(xaxis, range_values);  // spans the values and the marks
    const Bins bins = histogram_bins(h.values, h.bins, xaxis.log, xr.first, xr.second);
    std::size_t top = 1;
    for (std::size_t c : bins.counts) top = std::max(top, c);
    Axis yaxis{h.y_label, h.log_count, {}, {}};
    std::pair<double, double> yr = h.log_count ? std::pair<double, double>{0.8, 0} : std::pair<double, double>{0, 0};
    if (h.log_count) {
        yr.second = std::pow(10.0, std::ceil(std::log10(static_cast<double>(top) * 1.2)));
    } else {
        const auto t = linear_ticks(0, static_cast<double>(top) * 1.08, 6);
        yr.second = std::max(static_cast<double>(top) * 1.08, t.empty() ? 1.0 : t.back());
    }
    const Frame f = draw_frame(cv, h.title, xaxis, xr, yaxis, yr, 0);
    cv.clip(f.left + 1, f.top + 1, f.right - 1, f.bottom - 1);
    const Rgb edge{static_cast<std::uint8_t>(h.color.r / 2), static_cast<std::uint8_t>(h.color.g / 2),
                   static_cast<std::uint8_t>(h.color.b / 2)};
    for (std::size_t i = 0; i < bins.counts.size(); ++i) {
        if (bins.counts[i] == 0) continue;
        const int x0 = static_cast<int>(std::lround(f.x(bins.edges[i])));
        const int x1 = static_cast<int>(std::lround(f.x(bins.edges[i + 1])));
        // At least 3 pixels high, so that a bin of one outlier among thousands still shows.
        const int y1 = std::min(static_cast<int>(std::lround(f.y(static_cast<double>(bins.counts[i])))), f.bottom - 3);
        cv.fill(x0, y1, x1, f.bottom, h.color);
        cv.frame(x0, y1, x1, f.bottom + 1, edge);
    }
    cv.reset_clip();
    draw_marks(cv, f, h.x_marks, {});
}

void draw(Canvas& cv, const BarChart& b) {
    const std::size_t n = b.categories.size();
    std::vector<double> sums(n, 0.0);
    for (const auto& part : b.values)
        for (std::size_t i = 0; i < n && i < part.size(); ++i)
            if (finite(part[i]) && part[i] > 0) sums[i] += part[i];
    const int th = text_height(kScale);
    // Category labels: across when they fit under their bars, else turned upright (bottom to top)
    // and cut to a third of the picture's height.
    Legend legend;
    for (std::size_t k = 0; k < b.parts.size(); ++k) legend.emplace_back(b.parts[k], palette(k));
    int widest = 0;
    for (const std::string& s : b.categories) widest = std::max(widest, text_width(s, kScale));
    const int plot_width_guess = cv.width() - 120 - legend_width(legend);
    const bool upright = n > 0 && widest + kPad > plot_width_guess / static_cast<int>(n);
    const int label_band = upright ? std::min(widest, cv.height() / 3) + kPad : th + kPad;
    const std::size_t max_chars = static_cast<std::size_t>((label_band - kPad + kScale) / (kCellWidth * kScale));
    std::vector<std::string> names;
    for (const std::string& s : b.categories)
        names.push_back(!upright || s.size() <= max_chars ? s : s.substr(0, max_chars > 2 ? max_chars - 2 : 0) + "..");
    Axis xaxis{"", false, 0.0, static_cast<double>(std::max<std::size_t>(n, 1))};
    Axis yaxis{b.y_label, false, {}, {}};
    std::vector<double> ys = sums;
    ys.push_back(0);
    Frame f = draw_frame(cv, b.title, xaxis, {0.0, static_cast<double>(std::max<std::size_t>(n, 1))}, yaxis,
                         axis_range(yaxis, ys, true), legend_width(legend), label_band);
    const double slot = (f.right - f.left) / static_cast<double>(std::max<std::size_t>(n, 1));
    cv.clip(f.left + 1, f.top + 1, f.right - 1, f.bottom - 1);
    for (std::size_t i = 0; i < n; ++i) {
        const int x0 = static_cast<int>(std::lround(f.left + slot * (static_cast<double>(i) + 0.15)));
        const int x1 = static_cast<int>(std::lround(f.left + slot * (static_cast<double>(i) + 0.85)));
        double base = 0;
        for (std::size_t k = 0; k < b.values.size(); ++k) {
            const double v = i < b.values[k].size() && finite(b.values[k][i]) && b.values[k][i] > 0 ? b.values[k][i] : 0;
            if (v <= 0) continue;
            const int ya = static_cast<int>(std::lround(f.y(base))), yb = static_cast<int>(std::lround(f.y(base + v)));
            cv.fill(x0, yb, x1, ya - 1, palette(k));  // the base row belongs to the part below
            base += v;
        }
    }
    cv.reset_clip();
    // Too many bars for a label each: every k-th bar is labelled.
    const std::size_t every = std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil((th + 2) / std::max(slot, 1e-9))));
    for (std::size_t i = 0; i < n; i += every) {
        const int cx = static_cast<int>(std::lround(f.left + slot * (static_cast<double>(i) + 0.5)));
        const Rgb color = i < b.flagged.size() && b.flagged[i] ? kFlagged : kText;
        if (upright)
            cv.text(cx - th / 2, f.bottom + kPad + text_width(names[i], kScale), names[i], color, kScale, true);
        else
            cv.text(cx - text_width(names[i], kScale) / 2, f.bottom + kPad, names[i], color);
    }
    draw_legend(cv, f, legend, true);
}

}  // namespace

Rgb palette(std::size_t i) {
    static constexpr Rgb colors[] = {{31, 119, 180}, {255, 127, 14}, {44, 160, 44},  {214, 39, 40},  {148, 103, 189},
                                     {140, 86, 75},  {227, 119, 194}, {110, 110, 110}, {188, 189, 34}, {23, 190, 207}};
    return colors[i % 10];
}

Rgb Image::at(int x, int y) const {
    assert(x >= 0 && y >= 0 && x < width && y < height);
    const std::size_t i = (static_cast<std::size_t>(y) * static_cast<std::size_t>(width) + static_cast<std::size_t>(x)) * 3;
    return {rgb[i], rgb[i + 1], rgb[i + 2]};
}

int text_width(std::string_view text, int scale) {
    return text.empty() ? 0 : (static_cast<int>(text.size()) * kCellWidth - 1) * scale;
}

int text_height(int scale) { return kCellHeight * scale; }

Image render(const Chart& chart, int width, int height) {
    return render_panels({chart}, width, height);
}

Image render_panels(const std::vector<Chart>& charts, int width, int panel_height) {
    assert(width >= 200 && panel_height >= 150);
    Image image;
    image.width = width;
    image.height = panel_height * static_cast<int>(std::max<std::size_t>(charts.size(), 1));
    image.rgb.assign(static_cast<std::size_t>(image.width) * static_cast<std::size_t>(image.height) * 3, 255);
    for (std::size_t i = 0; i < charts.size(); ++i) {
        Canvas cv(image, 0, static_cast<int>(i) * panel_height, width, panel_height);
        std::visit([&](const auto& c) { draw(cv, c); }, charts[i]);
    }
    return image;
}

void write_png(const std::filesystem::path& path, const Image& image) {
    png::write_rgb(path, image.width, image.height, image.rgb);
}

void write_png(const std::filesystem::path& path, const std::vector<Chart>& charts, int width, int panel_height) {
    write_png(path, render_panels(charts, width, panel_height));
}

}  // namespace hp::plot
