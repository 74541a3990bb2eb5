// lib/plot: ticks, tick labels and histogram bins against values worked out by hand; the font's
// glyphs; pictures checked through their pixels (a line at 5 lies halfway between marks at 2
// and 8, on a log axis 10^1.5 halfway between 10 and 100, stacked bars as tall as their values);
// the PNG decoded back with libpng equals the rendered picture.
#include "plot/plot.hpp"

#include <array>
#include <cmath>
#include <filesystem>
#include <set>

#include <gtest/gtest.h>
#include <png.h>
#include <unistd.h>

#include "core/error.hpp"
#include "plot/font.hpp"

namespace fs = std::filesystem;
using namespace hp::plot;

namespace {

fs::path temp_dir() {
    fs::path d = fs::temp_directory_path() / ("hp_plot_test_" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
}

void expect_values(const std::vector<double>& got, const std::vector<double>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12 * std::max(1.0, std::abs(want[i]))) << i;
}

// The rows of column x that have colour c.
std::vector<int> rows_with(const Image& im, int x, Rgb c) {
    std::vector<int> rows;
    for (int y = 0; y < im.height; ++y)
        if (im.at(x, y) == c) rows.push_back(y);
    return rows;
}

double mean(const std::vector<int>& v) {
    double s = 0;
    for (int x : v) s += x;
    return v.empty() ? -1 : s / static_cast<double>(v.size());
}

}  // namespace

TEST(Plot, LinearTicks) {
    // (9.3 - 0) / 5 = 1.86: the step is 2.
    expect_values(linear_ticks(0, 9.3, 5), {0, 2, 4, 6, 8});
    // 0.6 / 6 = 0.1: the step is 0.1, and -0.0 prints as 0.
    expect_values(linear_ticks(-0.3, 0.3, 6), {-0.3, -0.2, -0.1, 0, 0.1, 0.2, 0.3});
    // 730 / 4 = 182.5: the step is 200.
    expect_values(linear_ticks(15, 745, 4), {200, 400, 600});
    EXPECT_TRUE(linear_ticks(1, 1, 5).empty());
}

TEST(Plot, LogTicks) {
    expect_values(log_ticks(1, 1000), {1, 10, 100, 1000});                 // three decades: powers only
    expect_values(log_ticks(2, 50), {2, 5, 10, 20, 50});                   // narrower: 2 and 5 too
    expect_values(log_ticks(0.001, 10000), {0.001, 0.01, 0.1, 1, 10, 100, 1000, 10000});
    EXPECT_TRUE(log_ticks(0, 10).empty());
}

TEST(Plot, TickLabels) {
    EXPECT_EQ(tick_label(0), "0");
    EXPECT_EQ(tick_label(0.5), "0.5");
    EXPECT_EQ(tick_label(2500), "2500");
    EXPECT_EQ(tick_label(20000), "20000");
    EXPECT_EQ(tick_label(1e6), "1e6");
    EXPECT_EQ(tick_label(2e6), "2e6");
    EXPECT_EQ(tick_label(1e-4), "1e-4");
    EXPECT_EQ(tick_label(-0.25), "-0.25");
    EXPECT_EQ(tick_label(0.001), "0.001");
}

TEST(Plot, HistogramBins) {
    // Four bins over [0, 4]: edges 0 1 2 3 4; a value on an edge counts in the bin above it,
    // the last bin is closed.
    const Bins b = histogram_bins({0.5, 1.5, 1.5, 2.5, 3.9, 4, 1}, 4, false, 0.0, 4.0);
    expect_values(b.edges, {0, 1, 2, 3, 4});
    EXPECT_EQ(b.counts, (std::vector<std::size_t>{1, 3, 1, 2}));
    // Two logarithmic bins over [1, 100]: edges 1 10 100; zero, negative and NaN values are left out.
    const Bins l = histogram_bins({1, 5, 10, 50, 99, 100, 0, -3, std::nan("")}, 2, true);
    expect_values(l.edges, {1, 10, 100});
    EXPECT_EQ(l.counts, (std::vector<std::size_t>{2, 4}));
    // Outside a given range: not counted.
    const Bins r = histogram_bins({-1, 0.5, 7}, 1, false, 0.0, 1.0);
    EXPECT_EQ(r.counts, (std::vector<std::size_t>{1}));
}

TEST(Plot, FontGlyphsAreDistinctAndInked) {
    std::set<std::array<std::uint8_t, kGlyphRows>> seen;
    for (int c = 33; c < 127; ++c) {
        const std::uint8_t* rows = glyph_rows(static_cast<char>(c));
        std::array<std::uint8_t, kGlyphRows> a{};
        int ink = 0;
        for (int r = 0; r < kGlyphRows; ++r) {
            a[static_cast<std::size_t>(r)] = rows[r];
            ink += rows[r] != 0;
            EXPECT_LT(rows[r], 1 << kGlyphColumns);
        }
        EXPECT_GT(ink, 0) << static_cast<char>(c);
        EXPECT_TRUE(seen.insert(a).second) << "glyph '" << static_cast<char>(c) << "' repeats another";
    }
    for (int r = 0; r < kGlyphRows; ++r) EXPECT_EQ(glyph_rows(' ')[r], 0);
    // Outside printable ASCII: the box, which is none of the glyphs.
    std::array<std::uint8_t, kGlyphRows> box{};
    for (int r = 0; r < kGlyphRows; ++r) box[static_cast<std::size_t>(r)] = glyph_rows('\x01')[r];
    EXPECT_EQ(seen.count(box), 0u);
    EXPECT_EQ(text_width("abc", 2), (3 * 6 - 1) * 2);
    EXPECT_EQ(text_width("", 2), 0);
}

TEST(Plot, LineLiesWhereItsValueIs) {
    const Rgb line{10, 200, 10}, mark{200, 10, 10};
    LineChart c;
    c.x = {"x", false, 0.0, 10.0};
    c.y = {"y", false, 0.0, 10.0};
    c.series.push_back({"five", {0, 10}, {5, 5}, Style::line, line});
    c.y_marks = {{2, "", mark, false}, {8, "", mark, false}};
    const Image im = render(c, 600, 400);
    const int x = 300;  // a column inside the plot, away from the legend (top right)
    const std::vector<int> at_line = rows_with(im, x, line), at_marks = rows_with(im, x, mark);
    ASSERT_EQ(at_line.size(), 2u);      // 2 pixels thick
    ASSERT_EQ(at_marks.size(), 4u);     // two marks, 2 pixels each
    const double low = (at_marks[2] + at_marks[3]) / 2.0, high = (at_marks[0] + at_marks[1]) / 2.0;
    EXPECT_NEAR(mean(at_line), (low + high) / 2, 1.0);
    EXPECT_GT(low - high, 100);         // the plot is most of the picture's height

    // Logarithmic: 10^1.5 lies halfway between 10 and 100.
    c.y = {"y", true, 1.0, 1000.0};
    c.series[0].y = {std::pow(10.0, 1.5), std::pow(10.0, 1.5)};
    c.y_marks = {{10, "", mark, false}, {100, "", mark, false}};
    const Image lg = render(c, 600, 400);
    const std::vector<int> l2 = rows_with(lg, x, line), m2 = rows_with(lg, x, mark);
    ASSERT_EQ(l2.size(), 2u);
    ASSERT_EQ(m2.size(), 4u);
    EXPECT_NEAR(mean(l2), (m2[0] + m2[1] + m2[2] + m2[3]) / 4.0, 1.0);
}

TEST(Plot, StackedBarsAreAsTallAsTheirValues) {
    BarChart b;
    b.title = "time per stage";
    b.y_label = "s";
    b.categories = {"one", "two", "none"};  // the legend sits over the empty third bar
    b.parts = {"a", "b"};
    b.values = {{1, 3, 0}, {1, 0, 0}};
    const Image im = render(b, 900, 500);
    int a_first = 0, a_second = 0, b_first = 0, b_columns = 0;
    for (int x = 0; x < 600; ++x) {
        const int na = static_cast<int>(rows_with(im, x, palette(0)).size());
        const int nb = static_cast<int>(rows_with(im, x, palette(1)).size());
        if (nb > 0) {
            ++b_columns;
            b_first = std::max(b_first, nb);
            a_first = std::max(a_first, na);
        } else {
            a_second = std::max(a_second, na);
        }
    }
    EXPECT_GT(b_columns, 100);              // the first bar is 70 % of a 250-pixel slot
    EXPECT_GT(b_first, 50);
    EXPECT_NEAR(a_first, b_first, 1);       // 1 and 1
    EXPECT_NEAR(a_second, 3 * b_first, 2);  // 3 and 1
}

TEST(Plot, HistogramPanelsAndPngFile) {
    Histogram h;
    h.title = "latency";
    h.x = {"us", true, {}, {}};
    for (int i = 1; i <= 1000; ++i) h.values.push_back(i * 0.1);
    h.x_marks = {{50, "p50 50 us"}, {99, "p99 99 us"}};
    LineChart c;
    c.title = "latency per pose";
    c.y = {"us", true, {}, {}};
    c.series.push_back({"latency", {1, 2, 3}, {5, 7, 6}, Style::points, {}});
    const Image im = render_panels({h, c}, 700, 300);
    EXPECT_EQ(im.width, 700);
    EXPECT_EQ(im.height, 600);
    // The histogram's bars are drawn in the upper panel only.
    int upper = 0, lower = 0;
    for (int y = 0; y < im.height; ++y)
        for (int x = 0; x < im.width; ++x)
            if (im.at(x, y) == h.color) ++(y < 300 ? upper : lower);
    EXPECT_GT(upper, 1000);
    EXPECT_EQ(lower, 0);

    const fs::path dir = temp_dir();
    const fs::path file = dir / "panels.png";
    write_png(file, {h, c}, 700, 300);
    png_image decoded{};
    decoded.version = PNG_IMAGE_VERSION;
    ASSERT_TRUE(png_image_begin_read_from_file(&decoded, file.c_str())) << decoded.message;
    decoded.format = PNG_FORMAT_RGB;
    std::vector<std::uint8_t> pixels(PNG_IMAGE_SIZE(decoded));
    ASSERT_TRUE(png_image_finish_read(&decoded, nullptr, pixels.data(), 0, nullptr)) << decoded.message;
    EXPECT_EQ(decoded.width, 700u);
    EXPECT_EQ(decoded.height, 600u);
    EXPECT_TRUE(pixels == im.rgb);
    // Atomic: nothing else is left in the folder; a folder that does not exist is exit 4.
    EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
    try {
        write_png(dir / "missing" / "x.png", im);
        ADD_FAILURE() << "no error";
    } catch (const hp::Error& e) {
        EXPECT_EQ(e.code(), hp::ExitCode::cannot_write);
    }
    fs::remove_all(dir);
}
