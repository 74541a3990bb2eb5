// vdb::Reader: one verification per open, and the distance field decoded the same way from every
// encoding (float, double, scaled Int32).
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "formats/vdb.hpp"

namespace fs = std::filesystem;

namespace {

fs::path temp_dir() {
    fs::path d = fs::temp_directory_path() / ("hp_vdb_reader_test_" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
}

hp::GridSpec grid() {
    hp::GridSpec g;
    g.origin = {0.5, -1.0, 2.0};
    g.voxel_size = 0.25;
    g.dims = {11, 7, 10};  // partial leaves along every axis
    return g;
}

// Distances of the test files as integers in thousandths: exact in Int32, and the float and
// double files store raw / 1000 rounded to their type, so each expected value below is computed
// by the same one division, independently of the reader.
std::int32_t raw(int i, int j, int k) { return 37 * i - 53 * j + 11 * k - 150; }

fs::path write_distance(const std::string& file, hp::vdb::ValueType type, const nlohmann::json& meta) {
    const hp::GridSpec g = grid();
    const fs::path p = temp_dir() / file;
    hp::vdb::GridOut layers{"layers", hp::vdb::ValueType::int32, [&](int z, void* out) {
                                auto* v = static_cast<std::int32_t*>(out);
                                for (int j = 0; j < g.dims[1]; ++j)
                                    for (int i = 0; i < g.dims[0]; ++i) v[j * g.dims[0] + i] = raw(i, j, z) > 0 ? 1 : -1;
                            }};
    hp::vdb::GridOut distance{"distance", type, [&](int z, void* out) {
                                  for (int j = 0; j < g.dims[1]; ++j)
                                      for (int i = 0; i < g.dims[0]; ++i) {
                                          const std::size_t n = static_cast<std::size_t>(j * g.dims[0] + i);
                                          const std::int32_t r = raw(i, j, z);
                                          if (type == hp::vdb::ValueType::int32) static_cast<std::int32_t*>(out)[n] = r;
                                          if (type == hp::vdb::ValueType::float32) static_cast<float*>(out)[n] = static_cast<float>(r / 1000.0);
                                          if (type == hp::vdb::ValueType::float64) static_cast<double*>(out)[n] = r / 1000.0;
                                      }
                              }};
    nlohmann::json m = meta;
    m["kind"] = "distance";
    hp::vdb::write(p, g, {distance, layers}, m, "hapticprep test");
    return p;
}

}  // namespace

TEST(VdbReader, DistanceInEveryEncoding) {
    const hp::GridSpec g = grid();
    const fs::path f = write_distance("f.vdb", hp::vdb::ValueType::float32, {{"encoding", "float"}});
    const fs::path d = write_distance("d.vdb", hp::vdb::ValueType::float64, {{"encoding", "double"}});
    const fs::path s = write_distance("s.vdb", hp::vdb::ValueType::int32, {{"encoding", "scaled"}, {"scale_factor", 1000.0}});
    const std::vector<double> vf = hp::vdb::Reader::open(f).read_distance();
    const std::vector<double> vd = hp::vdb::Reader::open(d).read_distance();
    const std::vector<double> vs = hp::vdb::Reader::open(s).read_distance();
    ASSERT_EQ(vf.size(), g.count());
    ASSERT_EQ(vd.size(), g.count());
    ASSERT_EQ(vs.size(), g.count());
    for (int k = 0; k < g.dims[2]; ++k)
        for (int j = 0; j < g.dims[1]; ++j)
            for (int i = 0; i < g.dims[0]; ++i) {
                const std::size_t n = g.index(i, j, k);
                const double exact = raw(i, j, k) / 1000.0;
                ASSERT_EQ(vf[n], static_cast<double>(static_cast<float>(exact))) << i << " " << j << " " << k;
                ASSERT_EQ(vd[n], exact);
                ASSERT_EQ(vs[n], exact);
            }
}

TEST(VdbReader, EncodingAndGridTypeMustAgree) {
    const fs::path float_said_scaled =
        write_distance("fs.vdb", hp::vdb::ValueType::float32, {{"encoding", "scaled"}, {"scale_factor", 1000.0}});
    EXPECT_THROW(hp::vdb::Reader::open(float_said_scaled).read_distance(), hp::Error);
    const fs::path int_said_float = write_distance("if.vdb", hp::vdb::ValueType::int32, {{"encoding", "float"}});
    EXPECT_THROW(hp::vdb::Reader::open(int_said_float).read_distance(), hp::Error);
    const fs::path no_factor = write_distance("nf.vdb", hp::vdb::ValueType::int32, {{"encoding", "scaled"}});
    try {
        hp::vdb::Reader::open(no_factor).read_distance();
        FAIL();
    } catch (const hp::Error& e) {
        EXPECT_NE(std::string(e.what()).find("scale_factor"), std::string::npos) << e.what();
    }
}

// The checks run in open() and only there: damage to the trailer after open() goes unnoticed by
// the reads of that reader (they do not hash the file again), while a new open() refuses the file.
TEST(VdbReader, OpenVerifiesOnceAndReadsDoNotHashAgain) {
    const fs::path p = write_distance("once.vdb", hp::vdb::ValueType::float64, {{"encoding", "double"}});
    const hp::vdb::Reader reader = hp::vdb::Reader::open(p);
    {
        std::fstream f(p, std::ios::binary | std::ios::in | std::ios::out);
        const auto last = static_cast<std::streamoff>(fs::file_size(p) - 1);  // of the stored hash; OpenVDB never reads it
        f.seekg(last);
        const char c = static_cast<char>(f.get());
        f.seekp(last);
        f.put(static_cast<char>(c ^ 0x5a));
    }
    EXPECT_EQ(reader.read_distance().size(), grid().count());
    EXPECT_EQ(reader.read_int32("layers").size(), grid().count());
    try {
        hp::vdb::Reader::open(p);
        FAIL();
    } catch (const hp::Error& e) {
        EXPECT_NE(std::string(e.what()).find("checksum mismatch"), std::string::npos) << e.what();
    }
}

// Files written before XXH3 carry an FNV-1a 64 trailer ("HPVDBSUM"): still verified and read.
// The FNV-1a trailer is computed here independently of lib/core/hash.
TEST(VdbReader, FilesWithTheOlderFnvTrailerStillVerify) {
    const fs::path p = write_distance("new.vdb", hp::vdb::ValueType::float64, {{"encoding", "double"}});
    std::string bytes;
    {
        std::ifstream in(p, std::ios::binary);
        bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    const std::size_t body = bytes.size() - 16;
    ASSERT_EQ(bytes.substr(body, 8), "HPVDBXH3");
    EXPECT_EQ(hp::vdb::Reader::open(p).info().checksum, "xxh3-64");
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (std::size_t i = 0; i < body; ++i) h = (h ^ static_cast<unsigned char>(bytes[i])) * 0x100000001b3ULL;
    std::string old = bytes.substr(0, body) + "HPVDBSUM";
    for (int i = 0; i < 8; ++i) old.push_back(static_cast<char>((h >> (8 * i)) & 0xFF));
    const fs::path q = temp_dir() / "old.vdb";
    auto save = [](const fs::path& path, const std::string& data) {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out.write(data.data(), static_cast<std::streamsize>(data.size()));
    };
    save(q, old);
    const hp::vdb::Reader reader = hp::vdb::Reader::open(q);
    EXPECT_EQ(reader.info().checksum, "fnv1a-64");
    EXPECT_EQ(reader.read_distance(), hp::vdb::Reader::open(p).read_distance());
    old[body / 2] = static_cast<char>(old[body / 2] ^ 0x10);  // one bit of the body
    save(q, old);
    EXPECT_THROW(hp::vdb::Reader::open(q), hp::Error);
}
