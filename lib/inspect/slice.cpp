#include "inspect/slice.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "core/error.hpp"
#include "formats/container.hpp"
#include "formats/png.hpp"
#include "formats/vdb.hpp"

namespace hp::inspect {
namespace fs = std::filesystem;

namespace {

const char* const kAxisNames[3] = {"x", "y", "z"};

// Copies the slice's values of one z-slice of the grid (`values` as read, converted by `get`)
// into `plane` (u fastest), and returns the largest |value| of the whole z-slice.
template <class Get>
double take(const GridSpec& g, const SliceSpec& spec, int z, Get&& get, std::vector<double>& plane) {
    const int nx = g.dims[0], ny = g.dims[1];
    double largest = 0;
    for (std::size_t n = 0, end = static_cast<std::size_t>(nx) * static_cast<std::size_t>(ny); n < end; ++n)
        largest = std::max(largest, std::abs(get(n)));
    auto idx = [&](int i, int j) { return static_cast<std::size_t>(j) * static_cast<std::size_t>(nx) + static_cast<std::size_t>(i); };
    if (spec.axis == 2) {
        if (z == spec.index)
            for (int j = 0; j < ny; ++j)
                for (int i = 0; i < nx; ++i) plane[idx(i, j)] = get(idx(i, j));
    } else if (spec.axis == 1) {  // u = x, v = z
        for (int i = 0; i < nx; ++i) plane[static_cast<std::size_t>(z) * static_cast<std::size_t>(nx) + static_cast<std::size_t>(i)] = get(idx(i, spec.index));
    } else {  // u = y, v = z
        for (int j = 0; j < ny; ++j) plane[static_cast<std::size_t>(z) * static_cast<std::size_t>(ny) + static_cast<std::size_t>(j)] = get(idx(spec.index, j));
    }
    return largest;
}

// Reads grid `name` (of OpenVDB value type `value_type`) into `plane`, each value multiplied by
// `factor`; returns the largest |value * factor| over the grid.
double read_plane(const vdb::Reader& reader, const std::string& name, const std::string& value_type, double factor,
                  const GridSpec& g, const SliceSpec& spec, std::vector<double>& plane) {
    double largest = 0;
    if (value_type == "int32") {
        reader.read_slices(name, vdb::ValueType::int32, [&](int z, const void* p) {
            const auto* v = static_cast<const std::int32_t*>(p);
            largest = std::max(largest, take(g, spec, z, [&](std::size_t n) { return v[n] * factor; }, plane));
        });
    } else if (value_type == "float") {
        reader.read_slices(name, vdb::ValueType::float32, [&](int z, const void* p) {
            const auto* v = static_cast<const float*>(p);
            largest = std::max(largest, take(g, spec, z, [&](std::size_t n) { return v[n] * factor; }, plane));
        });
    } else if (value_type == "double") {
        reader.read_slices(name, vdb::ValueType::float64, [&](int z, const void* p) {
            const auto* v = static_cast<const double*>(p);
            largest = std::max(largest, take(g, spec, z, [&](std::size_t n) { return v[n] * factor; }, plane));
        });
    } else {
        fail_input(reader.path().string(), "grid '" + name + "' holds " + value_type + " values, expected int32, float or double");
    }
    return largest;
}

// Linear interpolation between ColorBrewer RdBu stops; `stops` run from t = 0+ to t = 1.
Rgb blend(const std::array<Rgb, 4>& stops, double t) {
    const double x = std::clamp(t, 0.0, 1.0) * 3.0;
    const int k = std::min(2, static_cast<int>(x));
    const double f = x - k;
    const Rgb& a = stops[static_cast<std::size_t>(k)];
    const Rgb& b = stops[static_cast<std::size_t>(k) + 1];
    auto mix = [f](std::uint8_t p, std::uint8_t q) { return static_cast<std::uint8_t>(std::lround(p + (q - p) * f)); };
    return {mix(a.r, b.r), mix(a.g, b.g), mix(a.b, b.b)};
}

}  // namespace

SliceSpec parse_slice(const std::string& text) {
    SliceSpec s;
    const auto bad = [&] { fail_usage("--slice " + text + ": expected AXIS=INDEX with AXIS x, y or z and INDEX a voxel index >= 0 (e.g. --slice z=10)"); };
    if (text.size() < 3 || text[1] != '=') bad();
    const char a = text[0];
    if (a != 'x' && a != 'y' && a != 'z') bad();
    s.axis = a - 'x';
    const std::string digits = text.substr(2);
    if (digits.empty() || digits.size() > 10 || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
        bad();
    const long long v = std::stoll(digits);
    if (v > 2147483647LL) bad();
    s.index = static_cast<int>(v);
    return s;
}

std::string slice_name(const SliceSpec& spec) { return std::string(kAxisNames[spec.axis]) + "=" + std::to_string(spec.index); }

Slice read_slice(const fs::path& path, const SliceSpec& spec) {
    if (container::looks_like_container(path)) {
        container::Reader r = container::Reader::open(path);
        fail_input(path.string(), std::string("is a ") + container::kind_name(r.kind()) +
                                      "; --slice works on voxelmaps and distance fields");
    }
    if (!vdb::looks_like_vdb(path)) {
        std::error_code ec;
        if (fs::exists(path, ec) && !fs::is_directory(path, ec) && fs::file_size(path, ec) == 0)
            fail_input(path.string(), "the file is empty (0 bytes)");
        fail_input(path.string(), "not a voxelmap or distance field (no OpenVDB magic number); --slice works on those only");
    }
    const vdb::Reader reader = vdb::Reader::open(path);  // verified once for both grids
    const vdb::FileInfo& info = reader.info();
    if (!info.ours) fail_input(path.string(), "is a VDB file but not one written by hapticprep (no haptic: metadata); --slice needs a voxelmap or distance field");
    auto grid_type = [&](const std::string& name) -> std::string {
        for (const auto& g : info.grids)
            if (g.name == name) return g.value_type;
        return "";
    };
    const std::string distance_type = grid_type("distance"), layers_type = grid_type("layers");
    if (distance_type.empty() && layers_type.empty())
        fail_input(path.string(), "has neither a 'layers' nor a 'distance' grid (damaged file?)");
    const GridSpec& g = info.grid;
    if (spec.index >= g.dims[static_cast<std::size_t>(spec.axis)])
        fail_usage("--slice " + slice_name(spec) + ": the grid has " + kAxisNames[spec.axis] + " indices 0.." +
                   std::to_string(g.dims[static_cast<std::size_t>(spec.axis)] - 1));

    Slice s;
    s.spec = spec;
    s.u_axis = spec.axis == 0 ? 1 : 0;
    s.v_axis = spec.axis == 2 ? 1 : 2;
    s.width = g.dims[static_cast<std::size_t>(s.u_axis)];
    s.height = g.dims[static_cast<std::size_t>(s.v_axis)];
    s.voxel_size = g.voxel_size;
    const std::size_t n = static_cast<std::size_t>(s.width) * static_cast<std::size_t>(s.height);
    s.values.assign(n, 0.0);
    s.surface.assign(n, 0);
    std::vector<double> layers(n, 0.0);
    double largest = 0;
    if (!layers_type.empty()) largest = read_plane(reader, "layers", layers_type, 1.0, g, spec, layers);
    if (!distance_type.empty()) {
        s.field = "distance";
        const double factor = distance_type == "int32" ? info.metadata.value("scale_factor", 1.0) : 1.0;
        if (!(factor > 0)) fail_input(path.string(), "its haptic:scale_factor is not a positive number (damaged file?)");
        largest = read_plane(reader, "distance", distance_type, 1.0 / (factor * g.voxel_size), g, spec, s.values);
        if (!layers_type.empty())
            for (std::size_t k = 0; k < n; ++k) s.surface[k] = layers[k] == 0;
    } else {
        s.field = "layers";
        s.values = layers;
        for (std::size_t k = 0; k < n; ++k) s.surface[k] = layers[k] == 0;
    }
    s.scale = std::max(1.0, largest);
    return s;
}

Rgb slice_colour(double value, double scale, bool surface) {
    // ColorBrewer RdBu (11 classes): near-surface tints first so that the side of a voxel one
    // step from the surface is visible even when the scale spans hundreds of voxels.
    static const std::array<Rgb, 4> warm{{{253, 219, 199}, {244, 165, 130}, {214, 96, 77}, {178, 24, 43}}};
    static const std::array<Rgb, 4> cool{{{209, 229, 240}, {146, 197, 222}, {67, 147, 195}, {33, 102, 172}}};
    if (surface) return {0, 0, 0};
    const double t = scale > 0 ? value / scale : 0.0;
    return t >= 0 ? blend(warm, t) : blend(cool, -t);
}

int slice_zoom(const Slice& slice) { return std::max(1, 512 / std::max(slice.width, slice.height)); }

std::vector<std::uint8_t> slice_rgb(const Slice& slice, int zoom) {
    const std::size_t w = static_cast<std::size_t>(slice.width) * static_cast<std::size_t>(zoom);
    const std::size_t h = static_cast<std::size_t>(slice.height) * static_cast<std::size_t>(zoom);
    std::vector<std::uint8_t> rgb(w * h * 3);
    for (std::size_t row = 0; row < h; ++row) {
        const int v = slice.height - 1 - static_cast<int>(row / static_cast<std::size_t>(zoom));
        std::uint8_t* out = rgb.data() + row * w * 3;
        for (std::size_t col = 0; col < w; ++col) {
            const int u = static_cast<int>(col / static_cast<std::size_t>(zoom));
            const Rgb c = slice_colour(slice.at(u, v), slice.scale, slice.on_surface(u, v));
            out[3 * col] = c.r;
            out[3 * col + 1] = c.g;
            out[3 * col + 2] = c.b;
        }
    }
    return rgb;
}

nlohmann::json slice_json(const Slice& slice) {
    return {{"slice", slice_name(slice.spec)},
            {"axis", kAxisNames[slice.spec.axis]},
            {"index", slice.spec.index},
            {"field", slice.field},
            {"right", kAxisNames[slice.u_axis]},
            {"up", kAxisNames[slice.v_axis]},
            {"width", slice.width},
            {"height", slice.height},
            {"voxel_size", slice.voxel_size},
            {"scale_voxels", slice.scale},
            {"surface_voxels", std::count(slice.surface.begin(), slice.surface.end(), std::uint8_t{1})}};
}

nlohmann::json write_slice_png(const Slice& slice, const fs::path& out) {
    const int zoom = slice_zoom(slice);
    const double w = static_cast<double>(slice.width) * zoom, h = static_cast<double>(slice.height) * zoom;
    if (w * h > 1.0e9)
        fail_usage("--slice " + slice_name(slice.spec) + ": the image would have " + std::to_string(w * h) + " pixels; too large");
    png::write_rgb(out, static_cast<int>(w), static_cast<int>(h), slice_rgb(slice, zoom));
    nlohmann::json j = slice_json(slice);
    j["png"] = out.string();
    j["width_px"] = static_cast<int>(w);
    j["height_px"] = static_cast<int>(h);
    j["pixels_per_voxel"] = zoom;
    return j;
}

char ascii_cell(double value, bool surface) {
    if (surface) return '#';
    const long n = std::max(1L, std::lround(std::abs(value)));
    if (value >= 0) return n <= 9 ? static_cast<char>('0' + n) : '+';
    return n <= 9 ? static_cast<char>('a' + n - 1) : '~';
}

std::vector<std::string> slice_ascii(const Slice& slice) {
    if (slice.width > kMaxAsciiSlice || slice.height > kMaxAsciiSlice)
        fail_usage("--slice " + slice_name(slice.spec) + ": the slice is " + std::to_string(slice.width) + " x " +
                   std::to_string(slice.height) + " voxels, too large for ASCII (at most " + std::to_string(kMaxAsciiSlice) +
                   " x " + std::to_string(kMaxAsciiSlice) + "); write an image with --png OUT.png");
    std::vector<std::string> rows;
    for (int v = slice.height - 1; v >= 0; --v) {
        std::string row(static_cast<std::size_t>(slice.width), ' ');
        for (int u = 0; u < slice.width; ++u) row[static_cast<std::size_t>(u)] = ascii_cell(slice.at(u, v), slice.on_surface(u, v));
        rows.push_back(std::move(row));
    }
    return rows;
}

}  // namespace hp::inspect

namespace hp::inspect {

Summary slice_command(const fs::path& path, const std::string& spec_text, const fs::path& png_out) {
    const SliceSpec spec = parse_slice(spec_text);
    const Slice slice = read_slice(path, spec);
    Summary s;
    char scale[64];
    std::snprintf(scale, sizeof scale, "%.6g", slice.scale);
    const std::string what = "slice " + slice_name(spec) + " of " + path.string() + " (" + slice.field + "): " +
                             std::to_string(slice.width) + " x " + std::to_string(slice.height) + " voxels, " +
                             kAxisNames[slice.u_axis] + " to the right, " + kAxisNames[slice.v_axis] + " up";
    if (!png_out.empty()) {
        s.json = write_slice_png(slice, png_out);
        s.text = "wrote " + png_out.string() + ": " + what + ", " + std::to_string(s.json["pixels_per_voxel"].get<int>()) +
                 " px per voxel; colours: surface black, inside warm, outside cool, saturating at " + scale + " voxels\n";
    } else {
        const std::vector<std::string> rows = slice_ascii(slice);
        s.json = slice_json(slice);
        s.json["rows"] = rows;  // top row first
        const std::string legend = std::string("# surface, 1-9 inside, a-i outside (") +
                                   (slice.field == "layers" ? "layers" : "voxels") + " from the surface), + ~ farther";
        s.json["legend"] = legend;
        s.text = what + "\n" + legend + "\n";
        for (const auto& r : rows) s.text += r + "\n";
    }
    s.json["file"] = path.string();
    return s;
}

}  // namespace hp::inspect
