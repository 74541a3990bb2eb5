// Prepared sampler files (.hsmp, formats/sampler.md): the sampler read in place from a written
// file gives the values, gradients and bounds of the sampler it was written from, bit for bit
// (dense float and double, narrow band), at random points inside and outside the grid; the bytes
// do not depend on the threads that built the sampler; every truncation, every bit flip of a
// small file and a file of another kind are refused with bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <tbb/global_control.h>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "field/field.hpp"
#include "formats/container.hpp"
#include "formats/sampler.hpp"
#include "sampler_scalars.hpp"
#include "voxel/brick.hpp"

namespace fs = std::filesystem;

namespace {

// Signed distance to a ball (inside positive) on a grid whose sizes are not multiples of the
// 4- and 8-voxel blocks; `as_float`: every value a float.
struct BallField {
    hp::GridSpec grid;
    std::vector<double> values;
    bool as_float = false;
    BallField(std::array<int, 3> dims, bool as_float) : as_float(as_float) {
        grid.voxel_size = 0.02;
        grid.origin = {-0.31, -0.27, -0.22};
        grid.dims = dims;
        values.resize(grid.count());
        for (int k = 0; k < dims[2]; ++k)
            for (int j = 0; j < dims[1]; ++j)
                for (int i = 0; i < dims[0]; ++i) {
                    const double d = 0.2 - hp::length(grid.center(i, j, k) - hp::Vec3d{0.03, -0.02, 0.01});
                    values[grid.index(i, j, k)] = as_float ? static_cast<double>(static_cast<float>(d)) : d;
                }
    }
    // The same field as a narrow band of `band` voxels: blocks whose voxels all lie beyond +-band s
    // are tiles of that value.
    hp::BrickField<double> band(int band) const {
        hp::BrickField<double> b;
        b.reset(grid, 0);
        const double far = as_float ? static_cast<double>(static_cast<float>(band * grid.voxel_size)) : band * grid.voxel_size;
        for (std::size_t n = 0; n < b.block_count(); ++n) {
            const std::size_t bx = n % static_cast<std::size_t>(b.blocks[0]);
            const std::size_t by = (n / static_cast<std::size_t>(b.blocks[0])) % static_cast<std::size_t>(b.blocks[1]);
            const std::size_t bz = n / (static_cast<std::size_t>(b.blocks[0]) * static_cast<std::size_t>(b.blocks[1]));
            std::vector<double> v(hp::kBrickVoxels, 0.0);
            bool tile = true;
            for (int z = 0; z < 8; ++z)
                for (int y = 0; y < 8; ++y)
                    for (int x = 0; x < 8; ++x) {
                        const int i = std::min(static_cast<int>(bx) * 8 + x, grid.dims[0] - 1);
                        const int j = std::min(static_cast<int>(by) * 8 + y, grid.dims[1] - 1);
                        const int k = std::min(static_cast<int>(bz) * 8 + z, grid.dims[2] - 1);
                        const double w = values[grid.index(i, j, k)];
                        v[hp::BrickField<double>::offset_in(x, y, z)] = std::max(-far, std::min(far, w));
                        tile = tile && std::abs(w) >= far && (w > 0) == (v[0] > 0);
                    }
            if (tile) {
                b.tile[n] = v[0] > 0 ? far : -far;
            } else {
                b.index[n] = static_cast<std::uint32_t>(b.brick_count());
                b.bricks.insert(b.bricks.end(), v.begin(), v.end());
            }
        }
        return b;
    }
};

fs::path temp_dir() {
    const fs::path d = fs::temp_directory_path() / ("hp_sampler_test_" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
}

std::string read_bytes(const fs::path& p) { return hp::read_file(p); }

// A 64-byte aligned copy of `bytes` that the sampler keeps alive.
std::shared_ptr<const void> aligned_copy(const std::string& bytes, std::string_view& view) {
    const std::size_t size = (bytes.size() + 63) / 64 * 64 + 64;
    std::shared_ptr<char> buf(static_cast<char*>(std::aligned_alloc(64, size)), [](char* p) { std::free(p); });
    std::memcpy(buf.get(), bytes.data(), bytes.size());
    view = std::string_view(buf.get(), bytes.size());
    return buf;
}

// The message of the reader's refusal of `bytes` (as file `where`), which must be bad input; "" if
// it read them.
std::string refusal(const std::string& bytes, const std::string& where = "test.hsmp") {
    std::string_view view;
    auto keep = aligned_copy(bytes, view);
    try {
        (void)hp::read_sampler(view, keep, where);
    } catch (const hp::Error& e) {
        EXPECT_EQ(e.code(), hp::ExitCode::bad_input) << e.what();
        return e.what();
    }
    return "";
}

hp::ExitCode parse_error(const std::string& bytes) { return refusal(bytes).empty() ? hp::ExitCode::ok : hp::ExitCode::bad_input; }

bool same(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Both samplers at `count` random points of a box twice the grid's (so about 7 in 8 lie outside
// the centre box) and balls of random radii: value, gradient, eq. 5's value, the ball bounds.
void expect_same_sampler(const hp::DistanceSampler& a, const hp::DistanceSampler& b, int count) {
    EXPECT_EQ(a.grid().dims, b.grid().dims);
    EXPECT_EQ(a.float_samples(), b.float_samples());
    EXPECT_EQ(a.sparse(), b.sparse());
    EXPECT_TRUE(same(a.lipschitz(), b.lipschitz()));
    EXPECT_TRUE(same(a.max_value(), b.max_value()));
    EXPECT_TRUE(same(a.border_max_value(), b.border_max_value()));
    EXPECT_EQ(a.memory_bytes(), b.memory_bytes());
    const hp::GridSpec& g = a.grid();
    const hp::Vec3d size{g.dims[0] * g.voxel_size, g.dims[1] * g.voxel_size, g.dims[2] * g.voxel_size};
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> u(-0.5, 1.5), r(0.0, 0.3);
    int differ = 0;
    for (int n = 0; n < count; ++n) {
        const hp::Vec3d p = g.origin + hp::Vec3d{u(rng) * size.x, u(rng) * size.y, u(rng) * size.z};
        const double radius = r(rng);
        const hp::Vec3d ga = a.gradient(p), gb = b.gradient(p);
        const hp::BallBound ba = a.ball_bound(p, radius), bb = b.ball_bound(p, radius);
        hp::DistanceSampler::SphereProbe pa, pb;
        a.probe_sphere(p, radius, pa);
        b.probe_sphere(p, radius, pb);
        const bool ok = same(a.value(p), b.value(p)) && same(ga.x, gb.x) && same(ga.y, gb.y) && same(ga.z, gb.z) &&
                        same(a.gradient_value(p), b.gradient_value(p)) && same(a.upper_bound(p, radius), b.upper_bound(p, radius)) &&
                        same(a.upper_bound(pa), b.upper_bound(pb)) && same(ba.lipschitz, bb.lipschitz) &&
                        same(ba.interior_lipschitz, bb.interior_lipschitz) && same(ba.max_value, bb.max_value) &&
                        same(a.lipschitz(p, radius), b.lipschitz(p, radius));
        differ += !ok;
    }
    EXPECT_EQ(differ, 0) << "of " << count << " points";
}

}  // namespace

TEST(SamplerFormat, MappedSamplerIsTheBuiltOneBitForBit) {
    const fs::path dir = temp_dir();
    struct Case {
        const char* name;
        bool as_float, sparse;
    };
    for (const Case c : {Case{"dense float", true, false}, Case{"dense double", false, false}, Case{"band float", true, true},
                         Case{"band double", false, true}}) {
        SCOPED_TRACE(c.name);
        const BallField f({37, 29, 22}, c.as_float);
        const hp::DistanceSampler built = c.sparse ? hp::DistanceSampler(f.band(3)) : hp::DistanceSampler(f.grid, f.values);
        const fs::path path = dir / "ball.hsmp";
        hp::write_sampler_file(path, {{"tool", "test"}}, built);
        const hp::SamplerFile mapped = hp::map_sampler_file(path);
        EXPECT_EQ(mapped.metadata.value("tool", ""), "test");
        EXPECT_EQ(mapped.file_size, fs::file_size(path));
        ASSERT_EQ(mapped.sampler.sparse(), c.sparse);
        ASSERT_EQ(mapped.sampler.float_samples(), c.as_float);
        expect_same_sampler(built, mapped.sampler, 20000);
        // Every stored sample (the layout's own read), and a copy of the mapped sampler (sharing the mapping).
        const hp::DistanceSampler copy = mapped.sampler;
        int samples_differ = 0;
        for (int k = 0; k < f.grid.dims[2]; ++k)
            for (int j = 0; j < f.grid.dims[1]; ++j)
                for (int i = 0; i < f.grid.dims[0]; ++i) samples_differ += !same(built.sample(i, j, k), copy.sample(i, j, k));
        EXPECT_EQ(samples_differ, 0);
    }
    fs::remove_all(dir);
}

TEST(SamplerFormat, SectionsAreAlignedAndTheBytesDoNotDependOnTheThreads) {
    const fs::path dir = temp_dir();
    const BallField f({41, 23, 19}, true);
    const hp::DistanceSampler many(f.grid, f.values);
    hp::write_sampler_file(dir / "many.hsmp", {{"tool", "test"}}, many);
    {
        const tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
        const hp::DistanceSampler single(f.grid, f.values);
        hp::write_sampler_file(dir / "one.hsmp", {{"tool", "test"}}, single);
        const hp::DistanceSampler band(f.band(2));
        hp::write_sampler_file(dir / "band-one.hsmp", {{"tool", "test"}}, band);
    }
    const hp::DistanceSampler band(f.band(2));
    hp::write_sampler_file(dir / "band-many.hsmp", {{"tool", "test"}}, band);
    EXPECT_EQ(read_bytes(dir / "many.hsmp"), read_bytes(dir / "one.hsmp"));
    EXPECT_EQ(read_bytes(dir / "band-many.hsmp"), read_bytes(dir / "band-one.hsmp"));
    const hp::container::Reader r = hp::container::Reader::open(dir / "band-many.hsmp");
    EXPECT_EQ(r.kind(), hp::container::Kind::sampler);
    for (const char* name : {"scalars", "samples", "pyramid", "blocks", "gaps"}) {
        ASSERT_TRUE(r.has(name)) << name;
        for (const auto& s : r.sections())
            if (s.name == name) {
                EXPECT_EQ(s.offset % 64, 0u) << name;
            }
    }
    fs::remove_all(dir);
}

TEST(SamplerFormat, EveryTruncationAndEveryBitFlipIsRefused) {
    const fs::path dir = temp_dir();
    for (bool sparse : {false, true}) {
        SCOPED_TRACE(sparse ? "band" : "dense");
        const BallField f({9, 7, 6}, true);
        const hp::DistanceSampler s = sparse ? hp::DistanceSampler(f.band(1)) : hp::DistanceSampler(f.grid, f.values);
        const fs::path path = dir / "small.hsmp";
        hp::write_sampler_file(path, {{"tool", "test"}}, s);
        const std::string bytes = read_bytes(path);
        ASSERT_EQ(parse_error(bytes), hp::ExitCode::ok);
        for (std::size_t n = 0; n < bytes.size(); ++n)
            ASSERT_EQ(parse_error(bytes.substr(0, n)), hp::ExitCode::bad_input) << "truncated to " << n << " bytes";
        for (std::size_t byte = 0; byte < bytes.size(); ++byte)
            for (int bit = 0; bit < 8; ++bit) {
                std::string bad = bytes;
                bad[byte] = static_cast<char>(bad[byte] ^ (1 << bit));
                ASSERT_EQ(parse_error(bad), hp::ExitCode::bad_input) << "flip at byte " << byte << " bit " << bit;
            }
    }
    fs::remove_all(dir);
}

TEST(SamplerFormat, OtherKindsAndStructuralDamageAreRefusedWithTheFile) {
    const fs::path dir = temp_dir();
    // Another kind of container.
    hp::container::Writer octree(hp::container::Kind::octree, {{"tool", "test"}});
    octree.add_array("masks", std::vector<std::uint8_t>{1, 2, 3});
    octree.write(dir / "octree.hoct");
    try {
        (void)hp::map_sampler_file(dir / "octree.hoct");
        ADD_FAILURE() << "an octree file was read as a prepared sampler";
    } catch (const hp::Error& e) {
        EXPECT_EQ(e.code(), hp::ExitCode::bad_input);
        EXPECT_NE(std::string(e.what()).find("is a octree, expected a prepared sampler"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("octree.hoct"), std::string::npos) << e.what();
    }
    // An empty file, a text file, a missing file.
    std::ofstream(dir / "empty.hsmp").close();
    std::ofstream(dir / "text.hsmp") << "not a sampler\n";
    for (const char* name : {"empty.hsmp", "text.hsmp", "missing.hsmp"}) {
        try {
            (void)hp::map_sampler_file(dir / name);
            ADD_FAILURE() << name << " was read";
        } catch (const hp::Error& e) {
            EXPECT_EQ(e.code(), hp::ExitCode::bad_input) << name;
            EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
        }
    }
    // Valid checksums, inconsistent structure: a pyramid one entry short, samples of another grid.
    const BallField f({9, 7, 6}, true);
    const hp::DistanceSampler s(f.grid, f.values);
    const hp::DistanceSampler::Layout l = s.layout();
    auto expect_refused = [&](hp::DistanceSampler::Layout bad, const std::string& what) {
        try {
            (void)hp::DistanceSampler(bad, nullptr);
            ADD_FAILURE() << what << " was accepted";
        } catch (const hp::Error& e) {
            EXPECT_EQ(e.code(), hp::ExitCode::bad_input) << what;
        }
    };
    hp::DistanceSampler::Layout short_pyramid = l;
    short_pyramid.pyramid = l.pyramid.first(l.pyramid.size() - 1);
    expect_refused(short_pyramid, "a short pyramid");
    hp::DistanceSampler::Layout other_grid = l;
    other_grid.grid.dims[0] += 4;
    expect_refused(other_grid, "samples of another grid");
    hp::DistanceSampler::Layout both = l;
    std::vector<double> doubles(l.samples_f.size());
    both.samples_d = doubles;
    expect_refused(both, "float and double samples");
    hp::DistanceSampler::Layout nan_bound = l;
    nan_bound.lipschitz = std::nan("");
    expect_refused(nan_bound, "a NaN slope bound");
    EXPECT_NO_THROW((void)hp::DistanceSampler(l, nullptr));
    fs::remove_all(dir);
}

namespace {

using Scalars = hp_test::SamplerScalars;

// A sampler file assembled by container::Writer (so every CRC is right) from a layout's arrays,
// with the scalars record `s` and the arrays as given.
std::string craft(const Scalars& s, const hp::DistanceSampler::Layout& l, const std::vector<std::uint32_t>& blocks) {
    hp::container::Writer w(hp::container::Kind::sampler, {{"tool", "test"}});
    w.add_array("scalars", std::vector<Scalars>{s}, 64);
    w.add_array("samples", std::vector<float>(l.samples_f.begin(), l.samples_f.end()), 64);
    w.add_array("pyramid", std::vector<hp::DistanceSampler::PyramidEntry>(l.pyramid.begin(), l.pyramid.end()), 64);
    w.add_array("blocks", blocks, 64);
    w.add_array("gaps", std::vector<float>(l.gap.begin(), l.gap.end()), 64);
    return w.serialize();
}

}  // namespace

// A narrow band's file with right CRCs and a wrong layout: each is refused, naming the damage,
// before the sampler reads a table entry or a brick past its array.
TEST(SamplerFormat, BandLayoutsWithRightCrcsAreRefused) {
    const BallField f({17, 9, 12}, true);
    const hp::DistanceSampler band(f.band(1));
    const hp::DistanceSampler::Layout l = band.layout();
    ASSERT_TRUE(l.sparse);
    const std::vector<std::uint32_t> blocks(l.block_brick.begin(), l.block_brick.end());
    const std::uint64_t held = l.samples_f.size() / 512;  // bricks of 8^3 samples
    Scalars s{};
    for (int a = 0; a < 3; ++a) {
        s.dims[a] = f.grid.dims[static_cast<std::size_t>(a)];
        s.origin[a] = f.grid.origin[a];
    }
    s.flags = 1;
    s.voxel_size = f.grid.voxel_size;
    s.lipschitz = l.lipschitz;
    s.max_value = l.max_value;
    s.floor_sample = l.floor_sample;
    s.first_tile_brick = l.first_tile_brick;
    s.samples = l.samples_f.size();
    s.pyramid = l.pyramid.size();
    s.blocks = blocks.size();
    s.gaps = l.gap.size();
    // 3 x 2 x 2 blocks of 8^3 voxels; sub-blocks of 4^3 cells over 16 x 8 x 11 cells.
    ASSERT_EQ(blocks.size(), 12u);
    ASSERT_EQ(l.gap.size(), std::size_t{4 * 2 * 3});
    EXPECT_EQ(refusal(craft(s, l, blocks), "crafted.hsmp"), "");  // the record as the writer makes it
    auto expect = [&](const Scalars& bad, const std::vector<std::uint32_t>& table, const std::string& what) {
        const std::string message = refusal(craft(bad, l, table), "crafted.hsmp");
        EXPECT_NE(message.find("crafted.hsmp: corrupt prepared sampler: " + what), std::string::npos) << message;
    };
    std::vector<std::uint32_t> past = blocks;
    past[5] = static_cast<std::uint32_t>(held);  // one past the last brick
    expect(s, past, "its brick table names a brick it does not hold");
    Scalars t = s;
    t.first_tile_brick = static_cast<std::uint32_t>(held + 1);
    expect(t, blocks, "its first tile brick lies beyond its bricks");
    t = s;
    t.floor_sample = -INFINITY;
    expect(t, blocks, "the band's floor is not a number or -inf");
    t = s;
    t.gaps = s.gaps - 1;
    expect(t, blocks, "section 'gaps' has 96 bytes, not 23 elements");
    t = s;
    t.blocks = s.blocks + 1;
    expect(t, blocks, "section 'blocks' has 48 bytes, not 13 elements");
    t = s;
    t.dims[2] = 17;  // one more block layer: the table and the bounds no longer fit the grid
    expect(t, blocks, "its brick table does not have one entry per block of its grid");
    t = s;
    t.voxel_size = 0;
    expect(t, blocks, "the voxel size is not positive and finite");
}
