// Slices of voxelmaps and distance fields: values per axis, colours, the PNG decoded back with
// libpng and compared pixel by pixel with colours taken from the documented table, ASCII.
#include "inspect/slice.hpp"

#include <cmath>
#include <filesystem>
#include <map>

#include <gtest/gtest.h>
#include <png.h>

#include "core/error.hpp"
#include "formats/vdb.hpp"
#include "../core/temp_dir.hpp"

namespace fs = std::filesystem;

namespace {

fs::path temp_dir() { return hp::test::temp_dir("hp_slice_test_"); }

hp::GridSpec tiny_grid() {
    hp::GridSpec g;
    g.origin = {1, 2, 3};
    g.voxel_size = 0.5;
    g.dims = {5, 4, 3};
    return g;
}

// Every layer value -3..3 occurs; the largest |layer| is 3.
int layer(int i, int j, int k) { return (i + 2 * j + 3 * k) % 7 - 3; }
double dist(int i, int j, int k) { return 0.25 * (i - 2) + 0.1 * j - 0.05 * k; }  // world units

fs::path write_voxelmap(const fs::path& p) {
    const hp::GridSpec g = tiny_grid();
    hp::vdb::GridOut out{"layers", hp::vdb::ValueType::int32, [&](int z, void* o) {
                             auto* v = static_cast<std::int32_t*>(o);
                             for (int j = 0; j < g.dims[1]; ++j)
                                 for (int i = 0; i < g.dims[0]; ++i) v[j * g.dims[0] + i] = layer(i, j, z);
                         }, -4};
    hp::vdb::write(p, g, {out}, {{"kind", "voxelmap"}}, "hapticprep test");
    return p;
}

// A distance file in the scaled encoding (round(d * 1000)) with its layers.
fs::path write_scaled_distance(const fs::path& p) {
    const hp::GridSpec g = tiny_grid();
    hp::vdb::GridOut d{"distance", hp::vdb::ValueType::int32, [&](int z, void* o) {
                           auto* v = static_cast<std::int32_t*>(o);
                           for (int j = 0; j < g.dims[1]; ++j)
                               for (int i = 0; i < g.dims[0]; ++i) v[j * g.dims[0] + i] = static_cast<std::int32_t>(std::lround(dist(i, j, z) * 1000));
                       }, -2000};
    hp::vdb::GridOut l{"layers", hp::vdb::ValueType::int32, [&](int z, void* o) {
                           auto* v = static_cast<std::int32_t*>(o);
                           for (int j = 0; j < g.dims[1]; ++j)
                               for (int i = 0; i < g.dims[0]; ++i) v[j * g.dims[0] + i] = layer(i, j, z);
                       }, -4};
    hp::vdb::write(p, g, {d, l}, {{"kind", "distance"}, {"encoding", "scaled"}, {"precision", 3}, {"scale_factor", 1000.0}},
                   "hapticprep test");
    return p;
}

// The documented colours (docs/haptic-dump.md) for layer values on a scale of 3: each value
// falls exactly on a stop of the map.
const std::map<int, hp::inspect::Rgb> kLayerColour{
    {-3, {33, 102, 172}}, {-2, {67, 147, 195}}, {-1, {146, 197, 222}}, {0, {0, 0, 0}},
    {1, {244, 165, 130}},  {2, {214, 96, 77}},   {3, {178, 24, 43}}};

}  // namespace

TEST(Slice, ParseAcceptsAxisIndexAndRefusesTheRest) {
    EXPECT_EQ(hp::inspect::parse_slice("x=0").axis, 0);
    EXPECT_EQ(hp::inspect::parse_slice("y=12").index, 12);
    EXPECT_EQ(hp::inspect::parse_slice("z=7").axis, 2);
    for (const char* bad : {"", "z", "z=", "w=1", "z=-1", "z=1.5", "x=99999999999", "z =3", "Z=3"}) {
        try {
            hp::inspect::parse_slice(bad);
            ADD_FAILURE() << "accepted " << bad;
        } catch (const hp::Error& e) {
            EXPECT_EQ(e.code(), hp::ExitCode::usage) << bad;
        }
    }
}

TEST(Slice, ValuesAlongEachAxisOfAVoxelmap) {
    const fs::path p = write_voxelmap(temp_dir() / "map.vdb");
    for (int axis = 0; axis < 3; ++axis) {
        const hp::GridSpec g = tiny_grid();
        for (int index = 0; index < g.dims[static_cast<std::size_t>(axis)]; ++index) {
            const hp::inspect::Slice s = hp::inspect::read_slice(p, {axis, index});
            EXPECT_EQ(s.field, "layers");
            EXPECT_EQ(s.scale, 3.0);
            const int w = axis == 0 ? 4 : 5, h = axis == 2 ? 4 : 3;
            ASSERT_EQ(s.width, w);
            ASSERT_EQ(s.height, h);
            for (int v = 0; v < h; ++v)
                for (int u = 0; u < w; ++u) {
                    const int want = axis == 0 ? layer(index, u, v) : axis == 1 ? layer(u, index, v) : layer(u, v, index);
                    EXPECT_EQ(s.at(u, v), want) << axis << " " << index << " " << u << " " << v;
                    EXPECT_EQ(s.on_surface(u, v), want == 0);
                }
        }
    }
    try {
        hp::inspect::read_slice(p, {2, 3});
        ADD_FAILURE() << "z=3 is outside a grid of 3 slices";
    } catch (const hp::Error& e) {
        EXPECT_EQ(e.code(), hp::ExitCode::usage);
        EXPECT_NE(std::string(e.what()).find("0..2"), std::string::npos) << e.what();
    }
}

TEST(Slice, ScaledDistanceIsInVoxelsWithSurfaceFromLayers) {
    const fs::path p = write_scaled_distance(temp_dir() / "dist.vdb");
    const hp::inspect::Slice s = hp::inspect::read_slice(p, {1, 2});  // y = 2: u = x, v = z
    EXPECT_EQ(s.field, "distance");
    double largest = 0;  // |d| / s over the whole grid, by brute force
    for (int k = 0; k < 3; ++k)
        for (int j = 0; j < 4; ++j)
            for (int i = 0; i < 5; ++i) largest = std::max(largest, std::abs(std::lround(dist(i, j, k) * 1000) / 1000.0) / 0.5);
    EXPECT_NEAR(s.scale, std::max(1.0, largest), 1e-12);
    for (int v = 0; v < 3; ++v)
        for (int u = 0; u < 5; ++u) {
            EXPECT_NEAR(s.at(u, v), dist(u, 2, v) / 0.5, 1e-3 / 0.5);
            EXPECT_EQ(s.on_surface(u, v), layer(u, 2, v) == 0);
        }
}

TEST(Slice, ColoursFollowTheDocumentedStops) {
    using hp::inspect::Rgb;
    using hp::inspect::slice_colour;
    for (const auto& [value, rgb] : kLayerColour) EXPECT_EQ(slice_colour(value, 3, value == 0), rgb) << value;
    EXPECT_EQ(slice_colour(0.0, 3, false), (Rgb{253, 219, 199}));   // zero off the surface: inside side
    EXPECT_EQ(slice_colour(1e-9, 10, false), (Rgb{253, 219, 199}));  // one step in on a large scale
    EXPECT_EQ(slice_colour(-1e-9, 10, false), (Rgb{209, 229, 240}));
    EXPECT_EQ(slice_colour(50, 10, false), (Rgb{178, 24, 43}));       // saturates
    EXPECT_EQ(slice_colour(-50, 10, false), (Rgb{33, 102, 172}));
    // Halfway between the stops #fddbc7 and #f4a582: (253+244)/2 = 248.5 -> 249, (219+165)/2 = 192, (199+130)/2 = 164.5 -> 165.
    EXPECT_EQ(slice_colour(0.5, 3, false), (Rgb{249, 192, 165}));
}

TEST(Slice, PngDecodedByLibpngMatchesPixelByPixel) {
    const fs::path dir = temp_dir();
    const fs::path p = write_voxelmap(dir / "map.vdb");
    const fs::path out = dir / "z1.png";
    const hp::inspect::Slice s = hp::inspect::read_slice(p, {2, 1});
    const nlohmann::json j = hp::inspect::write_slice_png(s, out);
    const int zoom = 512 / 5;  // 102 pixels per voxel for a 5 x 4 slice
    EXPECT_EQ(j["pixels_per_voxel"], zoom);

    png_image image{};
    image.version = PNG_IMAGE_VERSION;
    ASSERT_TRUE(png_image_begin_read_from_file(&image, out.c_str())) << image.message;
    image.format = PNG_FORMAT_RGB;
    ASSERT_EQ(image.width, 5u * zoom);
    ASSERT_EQ(image.height, 4u * zoom);
    std::vector<std::uint8_t> rgb(PNG_IMAGE_SIZE(image));
    ASSERT_TRUE(png_image_finish_read(&image, nullptr, rgb.data(), 0, nullptr)) << image.message;
    std::size_t wrong = 0;
    for (std::size_t row = 0; row < image.height; ++row)
        for (std::size_t col = 0; col < image.width; ++col) {
            const int x = static_cast<int>(col) / zoom, y = 3 - static_cast<int>(row) / zoom;  // top row = largest y
            const hp::inspect::Rgb want = kLayerColour.at(layer(x, y, 1));
            const std::uint8_t* px = &rgb[(row * image.width + col) * 3];
            wrong += px[0] != want.r || px[1] != want.g || px[2] != want.b;
        }
    EXPECT_EQ(wrong, 0u);
}

TEST(Slice, AsciiRowsTopFirstAndRefusedForLargeSlices) {
    const fs::path p = write_voxelmap(temp_dir() / "map.vdb");
    const hp::inspect::Slice s = hp::inspect::read_slice(p, {0, 4});  // u = y (4), v = z (3)
    const std::vector<std::string> rows = hp::inspect::slice_ascii(s);
    ASSERT_EQ(rows.size(), 3u);
    const std::string cells = "cba#123";  // layers -3..3
    for (int v = 0; v < 3; ++v)
        for (int u = 0; u < 4; ++u)
            EXPECT_EQ(rows[static_cast<std::size_t>(2 - v)][static_cast<std::size_t>(u)],
                      cells[static_cast<std::size_t>(layer(4, u, v) + 3)]);
    EXPECT_EQ(hp::inspect::ascii_cell(12.4, false), '+');
    EXPECT_EQ(hp::inspect::ascii_cell(-10, false), '~');
    EXPECT_EQ(hp::inspect::ascii_cell(-0.2, false), 'a');

    hp::inspect::Slice big = s;
    big.width = hp::inspect::kMaxAsciiSlice + 1;
    big.values.assign(static_cast<std::size_t>(big.width * big.height), 1.0);
    big.surface.assign(big.values.size(), 0);
    try {
        hp::inspect::slice_ascii(big);
        ADD_FAILURE() << "a slice wider than the limit was rendered";
    } catch (const hp::Error& e) {
        EXPECT_EQ(e.code(), hp::ExitCode::usage);
        EXPECT_NE(std::string(e.what()).find("--png"), std::string::npos);
    }
}
