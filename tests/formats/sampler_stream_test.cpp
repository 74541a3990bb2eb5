// A dense field's prepared sampler written while it is made (write_dense_sampler_file,
// lib/field/field_stream.hpp) is byte for byte the file written from the sampler built whole
// (write_sampler_file of DistanceSampler(grid, values)), and both are the file a brute-force
// construction gives from formats/sampler.md alone: bricks placed sample by sample, every pyramid
// entry from the cells of the blocks it covers, the scalars record and the container's sections.
// Grids of every size class (multiples of 4 or not, 4 k + 1 voxels, axes of 2 and of 1 voxel),
// float, double values that are floats, doubles; zeros of both signs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include "core/atomic_file.hpp"
#include "field/field.hpp"
#include "formats/container.hpp"
#include "formats/sampler.hpp"
#include "math/float_round.hpp"
#include "sampler_scalars.hpp"

namespace fs = std::filesystem;

namespace {

fs::path temp_dir() {
    const fs::path d = fs::temp_directory_path() / ("hp_sampler_stream_test_" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
}

// A signed distance to a ball (inside positive) with a random perturbation and some exact zeros,
// of both signs when `negative_zeros`; `as_float`: every value a float.
std::vector<double> field(const hp::GridSpec& g, bool as_float, unsigned seed, bool negative_zeros = true) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> noise(-0.004, 0.004);
    std::vector<double> v(g.count());
    for (int k = 0; k < g.dims[2]; ++k)
        for (int j = 0; j < g.dims[1]; ++j)
            for (int i = 0; i < g.dims[0]; ++i) {
                double d = 0.1 - hp::length(g.center(i, j, k) - hp::Vec3d{0.05, 0.04, 0.03}) + noise(rng);
                if ((i + 2 * j + 3 * k) % 17 == 0) d = negative_zeros && (i + j + k) % 2 ? -0.0 : 0.0;
                v[g.index(i, j, k)] = as_float ? static_cast<double>(static_cast<float>(d)) : d;
            }
    return v;
}

// The sampler file of a dense field from its definition (formats/sampler.md, docs/field.md), one
// sample, cell and block at a time, no shortcut shared with the library.
std::string brute_force_file(const hp::GridSpec& g, const std::vector<double>& values, const nlohmann::json& meta) {
    const auto& d = g.dims;
    bool as_float = true;
    double largest = 0;
    for (double v : values) {
        as_float = as_float && static_cast<double>(static_cast<float>(v)) == v;
        largest = std::max(largest, v);
    }
    auto at = [&](int i, int j, int k) {  // clamped to the grid (a one-voxel axis repeats its voxel)
        return values[g.index(std::min(i, d[0] - 1), std::min(j, d[1] - 1), std::min(k, d[2] - 1))];
    };
    // Samples in bricks of 4^3: brick (i/4, j/4, k/4) x fastest, place (i%4) + 4 (j%4) + 16 (k%4).
    const int b[3] = {(d[0] + 3) / 4, (d[1] + 3) / 4, (d[2] + 3) / 4};
    const std::size_t count = static_cast<std::size_t>(b[0]) * b[1] * b[2] * 64;
    std::vector<float> sf(as_float ? count : 0, 0.0f);
    std::vector<double> sd(as_float ? 0 : count, 0.0);
    for (int k = 0; k < d[2]; ++k)
        for (int j = 0; j < d[1]; ++j)
            for (int i = 0; i < d[0]; ++i) {
                const std::size_t n = ((static_cast<std::size_t>(k / 4) * b[1] + j / 4) * b[0] + i / 4) * 64 + (i % 4) + 4 * (j % 4) + 16 * (k % 4);
                if (as_float) sf[n] = static_cast<float>(values[g.index(i, j, k)]);
                else sd[n] = values[g.index(i, j, k)];
            }
    // Cells between centres, one degenerate cell on a one-voxel axis; per cell its largest corner
    // gradient (edge differences, squared and summed x, y, z) and its largest corner.
    const int cells[3] = {std::max(1, d[0] - 1), std::max(1, d[1] - 1), std::max(1, d[2] - 1)};
    auto cell_bound = [&](int i, int j, int k, double& slope, double& top) {
        double g2 = 0;
        top = -std::numeric_limits<double>::infinity();
        for (int n = 0; n < 8; ++n) {
            const int a = n & 1, bb = (n >> 1) & 1, c = n >> 2;
            const double dx = at(i + 1, j + bb, k + c) - at(i, j + bb, k + c);
            const double dy = at(i + a, j + 1, k + c) - at(i + a, j, k + c);
            const double dz = at(i + a, j + bb, k + 1) - at(i + a, j + bb, k);
            g2 = std::max(g2, dx * dx + dy * dy + dz * dz);
            top = std::max(top, at(i + a, j + bb, k + c));
        }
        slope = std::sqrt(g2) / g.voxel_size;
    };
    double inside = 0;
    for (int k = 0; k < cells[2]; ++k)
        for (int j = 0; j < cells[1]; ++j)
            for (int i = 0; i < cells[0]; ++i) {
                double slope = 0, top = 0;
                cell_bound(i, j, k, slope, top);
                inside = std::max(inside, slope);
            }
    // The pyramid: level m has blocks of 4 * 2^m cells per axis, up to one block; an entry per
    // block and axis mask bounds the cells of the block and of its next blocks along the mask's
    // axes (clipped to the level).
    std::vector<hp::DistanceSampler::PyramidEntry> pyramid;
    int dims[3] = {(cells[0] + 3) / 4, (cells[1] + 3) / 4, (cells[2] + 3) / 4};
    for (int edge = 4;; edge *= 2) {
        for (int k = 0; k < dims[2]; ++k)
            for (int j = 0; j < dims[1]; ++j)
                for (int i = 0; i < dims[0]; ++i) {
                    hp::DistanceSampler::PyramidEntry e{};
                    for (int mask = 0; mask < 8; ++mask) {
                        const int lo[3] = {i * edge, j * edge, k * edge};
                        int hi[3];
                        const int at_block[3] = {i, j, k};
                        for (int a = 0; a < 3; ++a) {
                            const int last = std::min(dims[a] - 1, at_block[a] + ((mask >> a) & 1));
                            hi[a] = std::min(cells[a], (last + 1) * edge);
                        }
                        float slope_bound = 0, top_bound = -std::numeric_limits<float>::infinity();
                        for (int z = lo[2]; z < hi[2]; ++z)
                            for (int y = lo[1]; y < hi[1]; ++y)
                                for (int x = lo[0]; x < hi[0]; ++x) {
                                    double slope = 0, top = 0;
                                    cell_bound(x, y, z, slope, top);
                                    slope_bound = std::max(slope_bound, hp::float_above(slope * (1 + 1e-9)));
                                    top_bound = std::max(top_bound, hp::float_above(top));
                                }
                        e.by_mask[mask] = {slope_bound, top_bound};
                    }
                    pyramid.push_back(e);
                }
        if (dims[0] == 1 && dims[1] == 1 && dims[2] == 1) break;
        for (int a = 0; a < 3; ++a) dims[a] = (dims[a] + 1) / 2;
    }
    hp_test::SamplerScalars s{};
    for (int a = 0; a < 3; ++a) {
        s.dims[a] = d[a];
        s.origin[a] = g.origin[a];
    }
    s.flags = as_float ? 0 : 2;
    s.voxel_size = g.voxel_size;
    s.lipschitz = std::sqrt(inside * inside + 1.0) * (1 + 1e-9);
    s.max_value = largest;
    s.samples = count;
    s.pyramid = pyramid.size();
    hp::container::Writer w(hp::container::Kind::sampler, meta);
    w.add_array("scalars", std::vector<hp_test::SamplerScalars>{s}, 64);
    if (as_float) w.add_array("samples", sf, 64);
    else w.add_array("samples", sd, 64);
    w.add_array("pyramid", pyramid, 64);
    return w.serialize();
}

}  // namespace

TEST(SamplerStream, WrittenWhileMadeIsTheBuiltFileAndTheBruteForceOne) {
    const fs::path dir = temp_dir();
    const nlohmann::json meta = {{"tool", "test"}, {"field", {{"file", "distance.vdb"}}}};
    const std::array<int, 3> grids[] = {{37, 29, 22}, {16, 12, 8}, {9, 13, 17}, {2, 5, 7}, {6, 2, 3}, {1, 6, 5}, {5, 1, 1}, {3, 4, 1}};
    unsigned seed = 1;
    for (const auto& dims : grids)
        for (int kind = 0; kind < 3; ++kind) {  // float, double values that are floats, double
            SCOPED_TRACE(std::to_string(dims[0]) + " x " + std::to_string(dims[1]) + " x " + std::to_string(dims[2]) + ", kind " +
                         std::to_string(kind));
            hp::GridSpec g;
            g.voxel_size = 0.01;
            g.origin = {-0.03, 0.02, -0.01};
            g.dims = dims;
            // The brute force folds its maxima in another order: a largest sample of +0 and -0
            // alike may keep either, so it is compared on a field without -0.
            for (bool negative_zeros : {true, false}) {
                const std::vector<double> values = field(g, kind < 2, seed++, negative_zeros);
                const fs::path built = dir / "built.hsmp", streamed = dir / "streamed.hsmp";
                if (kind == 0) {
                    const std::vector<float> f(values.begin(), values.end());
                    hp::write_sampler_file(built, meta, hp::DistanceSampler(g, std::span<const float>(f)));
                    hp::write_dense_sampler_file(streamed, meta, g, std::span<const float>(f));
                } else {
                    hp::write_sampler_file(built, meta, hp::DistanceSampler(g, std::span<const double>(values)));
                    hp::write_dense_sampler_file(streamed, meta, g, std::span<const double>(values));
                }
                const std::string a = hp::read_file(built), b = hp::read_file(streamed);
                EXPECT_TRUE(a == b) << "the streamed file differs from the built one (" << a.size() << " and " << b.size() << " bytes)";
                if (!negative_zeros) {
                    EXPECT_TRUE(brute_force_file(g, values, meta) == b) << "the streamed file differs from the brute-force one";
                }
            }
            const fs::path streamed = dir / "streamed.hsmp";
            EXPECT_NO_THROW((void)hp::map_sampler_file(streamed));
        }
    fs::remove_all(dir);
}

TEST(SamplerStream, ALargerFieldCrossesTheWritersPagesByteForByte) {
    // More than the writer's 8 MiB of staging and several 2 MiB pages of the file: float samples
    // of a 130 x 150 x 140 grid (12 MB) and double ones (24 MB).
    const fs::path dir = temp_dir();
    hp::GridSpec g;
    g.voxel_size = 0.002;
    g.origin = {-0.1, -0.1, -0.1};
    g.dims = {130, 150, 140};
    for (bool as_float : {true, false}) {
        const std::vector<double> values = field(g, as_float, 99);
        const nlohmann::json meta = {{"tool", "test"}};
        hp::write_sampler_file(dir / "built.hsmp", meta, hp::DistanceSampler(g, std::span<const double>(values)));
        hp::write_dense_sampler_file(dir / "streamed.hsmp", meta, g, std::span<const double>(values));
        EXPECT_TRUE(hp::read_file(dir / "built.hsmp") == hp::read_file(dir / "streamed.hsmp")) << (as_float ? "float" : "double");
    }
    fs::remove_all(dir);
}
