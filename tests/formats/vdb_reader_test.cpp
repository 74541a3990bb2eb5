// vdb::Reader: one verification per open, the distance field decoded the same way from every
// encoding (float, double, scaled Int32), and damage behind a valid trailer read cleanly or refused.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <openvdb/io/File.h>
#include <openvdb/openvdb.h>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/hash.hpp"
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
    const hp::BrickField<double> bf = hp::vdb::Reader::open(f).read_distance_bricks();
    const hp::BrickField<double> bd = hp::vdb::Reader::open(d).read_distance_bricks();
    const hp::BrickField<double> bs = hp::vdb::Reader::open(s).read_distance_bricks();
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
                ASSERT_EQ(bf.at(i, j, k), vf[n]);  // the sparse reads: the same values
                ASSERT_EQ(bd.at(i, j, k), vd[n]);
                ASSERT_EQ(bs.at(i, j, k), vs[n]);
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

// Damage that the checksum cannot see, because the trailer was recomputed after it: the grids'
// bytes are then parsed as they are (OpenVDB through the reader's windowed file buffer). Every
// outcome must be a clean read or hp::Error(bad_input), each within two seconds.
TEST(VdbReader, DamageBehindAValidTrailerReadsCleanlyOrIsBadInput) {
    // As in Vdb.DamagedForeignFilesNeverCrashOrHang: under ASan, OpenVDB's exabyte requests abort.
    if (std::getenv("HP_SANITIZED")) GTEST_SKIP() << "needs the normal allocator";
    hp::GridSpec g = grid();
    g.dims = {41, 23, 30};  // about 80 leaves per grid, partial ones on every axis
    std::vector<float> fbrick(512);
    std::vector<std::int32_t> ibrick(512);
    hp::vdb::GridOut distance{"distance", hp::vdb::ValueType::float32, nullptr, -1.0};
    distance.blocks = [&](std::size_t b, void* tile) -> const void* {
        if (b % 4 == 3) {
            *static_cast<float*>(tile) = 0.75f;
            return nullptr;
        }
        for (int o = 0; o < 512; ++o) fbrick[static_cast<std::size_t>(o)] = 0.001f * static_cast<float>((o * 37 + static_cast<int>(b) * 11) % 997);
        return fbrick.data();
    };
    hp::vdb::GridOut layers{"layers", hp::vdb::ValueType::int32, nullptr, -9};
    layers.blocks = [&](std::size_t b, void* tile) -> const void* {
        if (b % 4 == 3) {
            *static_cast<std::int32_t*>(tile) = 3;
            return nullptr;
        }
        for (int o = 0; o < 512; ++o) ibrick[static_cast<std::size_t>(o)] = (o + static_cast<int>(b)) % 7 - 3;
        return ibrick.data();
    };
    const fs::path good_path = temp_dir() / "damage-good.vdb", bad = temp_dir() / "damage-bad.vdb";
    hp::vdb::write(good_path, g, {distance, layers}, {{"kind", "distance"}}, "hapticprep test");
    const std::string good = hp::read_file(good_path);
    const std::size_t body = good.size() - 16;
    ASSERT_EQ(good.substr(body, 8), "HPVDBXH3");
    std::mt19937 rng(11);
    int rejected = 0, read = 0;
    auto attempt = [&](std::string bytes, const std::string& what) {
        const std::uint64_t h = hp::xxh3_64(bytes.data(), body);
        std::memcpy(bytes.data() + body + 8, &h, 8);
        { std::ofstream(bad, std::ios::binary | std::ios::trunc) << bytes; }
        const auto t0 = std::chrono::steady_clock::now();
        try {
            const hp::vdb::Reader reader = hp::vdb::Reader::open(bad);
            std::size_t blocks = 0;
            reader.read_blocks("distance", hp::vdb::ValueType::float32, [&](std::size_t, const void*, const void*) { ++blocks; });
            reader.read_blocks("layers", hp::vdb::ValueType::int32, [&](std::size_t, const void*, const void*) { ++blocks; });
            EXPECT_EQ(blocks, 2 * std::size_t{6 * 3 * 4}) << what;
            // The sparse reads, which fill their bricks on all threads.
            EXPECT_EQ(reader.read_distance_bricks().block_count(), std::size_t{6 * 3 * 4}) << what;
            EXPECT_EQ(reader.read_int16_bricks("layers", 2).block_count(), std::size_t{6 * 3 * 4}) << what;
            (void)reader.stored_grid("layers");  // null or a layout; never a crash
            ++read;
        } catch (const hp::Error& e) {
            EXPECT_EQ(e.code(), hp::ExitCode::bad_input) << what;
            ++rejected;
        }
        EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 2.0) << what;
    };
    for (int flip = 0; flip < 400; ++flip) {
        std::string bytes = good;
        const std::size_t at = rng() % body;
        bytes[at] = static_cast<char>(bytes[at] ^ (1 << (rng() % 8)));
        attempt(bytes, "bit flip at " + std::to_string(at));
    }
    // Runs of zeros and of 0xff over the leaf buffers (lengths, masks, compressed blocks).
    for (int run = 0; run < 100; ++run) {
        std::string bytes = good;
        const std::size_t at = body / 2 + rng() % (body / 2), n = std::min<std::size_t>(1 + rng() % 64, body - at);
        std::memset(bytes.data() + at, run % 2 ? 0xff : 0, n);
        attempt(bytes, "run at " + std::to_string(at));
    }
    EXPECT_GT(rejected, 0);
    EXPECT_GT(read, 0);  // many flips land in values, which no check can see
    std::printf("damage behind a valid trailer: %d rejected, %d read\n", rejected, read);
}

// `bytes` (a file of ours changed behind its trailer) with the XXH3-64 trailer recomputed, written to
// `path`, opened and its layers read: the message of the refusal (which must be bad input), or ""
// when it was read.
std::string refusal_behind_trailer(std::string bytes, const fs::path& path) {
    const std::size_t body = bytes.size() - 16;
    const std::uint64_t h = hp::xxh3_64(bytes.data(), body);
    std::memcpy(bytes.data() + body + 8, &h, 8);
    { std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes; }
    try {
        (void)hp::vdb::Reader::open(path).read_blocks("layers", hp::vdb::ValueType::int32, [](std::size_t, const void*, const void*) {});
    } catch (const hp::Error& e) {
        EXPECT_EQ(e.code(), hp::ExitCode::bad_input);
        return e.what();
    }
    return "";
}

// A grid's root counts that its topology's bytes cannot hold (damage behind a recomputed trailer):
// OpenVDB would read that many tiles and children from a stream that has ended (up to a minute
// per file); the reader refuses the file first, at once. The counts are found independently of
// the reader: the topology begins after the grid's transform as OpenVDB itself serializes it,
// with the buffer count (int32), the background (4 bytes for these float and int32 grids), then
// the tile and the child count (uint32 each).
TEST(VdbReader, RootCountsBeyondTheTopologyAreRefused) {
    hp::GridSpec g = grid();
    g.dims = {41, 23, 30};
    hp::vdb::GridOut distance{"distance", hp::vdb::ValueType::float32, [&](int z, void* out) {
                                  for (int n = 0; n < g.dims[0] * g.dims[1]; ++n) static_cast<float*>(out)[n] = 0.01f * float(n % 17 - z);
                              }};
    hp::vdb::GridOut layers{"layers", hp::vdb::ValueType::int32, [&](int z, void* out) {
                                for (int n = 0; n < g.dims[0] * g.dims[1]; ++n) static_cast<std::int32_t*>(out)[n] = n % 5 - 2 + z % 2;
                            }};
    const fs::path good_path = temp_dir() / "counts-good.vdb", bad = temp_dir() / "counts-bad.vdb";
    hp::vdb::write(good_path, g, {distance, layers}, {{"kind", "distance"}, {"encoding", "float"}}, "hapticprep test");
    const std::string good = hp::read_file(good_path);
    openvdb::initialize();
    openvdb::io::File file(good_path.string());
    file.open(false);
    std::ostringstream transform;
    file.readGrid("layers")->transform().write(transform);
    file.close();
    std::vector<std::size_t> counts_at;  // of every grid (they share the transform)
    for (std::size_t at = good.find(transform.str()); at != std::string::npos; at = good.find(transform.str(), at + 1))
        counts_at.push_back(at + transform.str().size() + 8);
    ASSERT_EQ(counts_at.size(), 2u);
    for (std::size_t at : counts_at) {
        std::uint32_t tiles = 0, children = 0;
        std::memcpy(&tiles, good.data() + at, 4);
        std::memcpy(&children, good.data() + at + 4, 4);
        ASSERT_GE(children, 1u);  // the grid spans one child of the root at least
        for (const auto& [t, c] : {std::pair<std::uint32_t, std::uint32_t>{0xffffffffu, children}, {tiles, 0xffffffffu},
                                   {tiles, 0x01000000u}, {0x6c65686fu, 0x756f795fu}}) {
            std::string bytes = good;
            std::memcpy(bytes.data() + at, &t, 4);
            std::memcpy(bytes.data() + at + 4, &c, 4);
            const std::string message = refusal_behind_trailer(bytes, bad);
            EXPECT_NE(message.find("claims " + std::to_string(t) + " tiles and " + std::to_string(c) + " children"), std::string::npos)
                << t << " tiles and " << c << " children at byte " << at << ": " << message;
        }
    }
    EXPECT_NO_THROW((void)hp::vdb::Reader::open(good_path).read_int32("layers"));
}

// OpenVDB reads its delayed-load metadata (a leaf count, then a mask byte and a compressed size
// per leaf, raw or Blosc-compressed) by that layout, not by the value's size: a layout that runs
// past the value, a count beyond the leaves the grid can hold, or a compressed buffer shorter than
// Blosc's header is refused. The value is found by its type name; its layout as OpenVDB's
// DelayedLoadMetadata::writeValue writes it (every written value here has raw arrays).
TEST(VdbReader, DelayedLoadMetadataOfAnotherLayoutIsRefused) {
    const fs::path good_path = write_distance("delayed.vdb", hp::vdb::ValueType::float32, {{"encoding", "float"}});
    const fs::path bad = temp_dir() / "delayed-bad.vdb";
    const std::string good = hp::read_file(good_path);
    const std::size_t type_at = good.find("__delayedload");
    ASSERT_NE(type_at, std::string::npos);
    const std::size_t value = type_at + 13 + 4;  // after the type name and the value's size
    std::uint32_t size = 0, count = 0, mask_length = 0;
    std::memcpy(&size, good.data() + type_at + 13, 4);
    std::memcpy(&count, good.data() + value, 4);
    std::memcpy(&mask_length, good.data() + value + 4, 4);
    ASSERT_EQ(mask_length, 0u);  // a raw mask: count bytes
    ASSERT_EQ(size, 4 + 4 + count + 4 + 8 * count);  // and raw compressed sizes
    EXPECT_EQ(refusal_behind_trailer(good, bad), "");
    auto patched = [&](std::size_t at, std::uint32_t v) {
        std::string bytes = good;
        std::memcpy(bytes.data() + at, &v, 4);
        return refusal_behind_trailer(bytes, bad);
    };
    EXPECT_NE(patched(value, 0xfffffff0u).find("'file_delayed_load' claims 4294967280 leaves"), std::string::npos);
    EXPECT_NE(patched(value, count + 1).find("'file_delayed_load' leaf sizes at byte"), std::string::npos);
    EXPECT_NE(patched(value + 4, 8).find("'file_delayed_load': a compressed mask array of another size"), std::string::npos);
    EXPECT_NE(patched(value + 4 + 4 + count, 3 * count).find("'file_delayed_load': a compressed leaf sizes array of another size"), std::string::npos);
    // A Blosc buffer whose header gives a compressed size beyond the array's length: Blosc read past it.
    std::string blosc = good;
    auto put = [&](std::size_t at, std::uint32_t v) { std::memcpy(blosc.data() + at, &v, 4); };
    put(value + 4, 16);         // a compressed mask array of 16 bytes
    put(value + 8 + 4, count);  // its uncompressed size: the count's bytes
    put(value + 8 + 12, 1000);  // its compressed size
    EXPECT_NE(refusal_behind_trailer(blosc, bad).find("'file_delayed_load': a compressed mask array longer than its 16 bytes"),
              std::string::npos);
}

// A Reader reads the file its open() verified: replacing the path by another valid file (of
// other dims) afterwards does not make the reader parse the new file with the old dims.
TEST(VdbReader, ReadsTheVerifiedFileAfterThePathIsReplaced) {
    const fs::path p = write_distance("replaced.vdb", hp::vdb::ValueType::float64, {{"encoding", "double"}});
    const std::vector<double> before = hp::vdb::Reader::open(p).read_distance();
    const hp::vdb::Reader reader = hp::vdb::Reader::open(p);
    const fs::path other = temp_dir() / "other.vdb";
    {
        hp::GridSpec g = grid();
        g.dims = {3, 2, 2};
        hp::vdb::GridOut d{"distance", hp::vdb::ValueType::float64, [&](int, void* out) {
                               for (int n = 0; n < 6; ++n) static_cast<double*>(out)[n] = 7.0;
                           }};
        hp::vdb::write(other, g, {d}, {{"kind", "distance"}, {"encoding", "double"}}, "hapticprep test");
    }
    fs::rename(other, p);
    EXPECT_EQ(reader.read_distance(), before);
}

namespace {

// The bytes of a small voxelmap as the tools write it.
std::string voxelmap_bytes(const std::string& name) {
    hp::GridSpec g = grid();
    hp::vdb::GridOut layers{"layers", hp::vdb::ValueType::int32, [&](int, void* out) {
                                for (int n = 0; n < g.dims[0] * g.dims[1]; ++n) static_cast<std::int32_t*>(out)[n] = n % 3 - 1;
                            }};
    const fs::path path = temp_dir() / name;
    hp::vdb::write(path, g, {layers}, {{"kind", "voxelmap"}}, "hapticprep test");
    return hp::read_file(path);
}

}  // namespace

// A file whose header says it has no grid offsets (a stream of openvdb::io::Stream, or a damaged
// flag behind a recomputed trailer): the framing walk cannot bound its grids.
TEST(VdbReader, FilesWithoutGridOffsetsAreRefused) {
    std::string bytes = voxelmap_bytes("offsets-good.vdb");
    ASSERT_EQ(bytes[20], 1);  // after the magic number, the file version and the library version
    bytes[20] = 0;
    EXPECT_NE(refusal_behind_trailer(bytes, temp_dir() / "offsets-bad.vdb").find("a VDB stream without grid offsets"),
              std::string::npos);
}

// A whitespace before or inside the file's UUID (a tab inserted behind a recomputed trailer): OpenVDB
// skips it as boost's operator>> does and reads everything after it one byte later than the framing
// walk, which had let a 20 KB file through to a 2 GB string (tests/fuzz/regressions/vdb_gradient).
TEST(VdbReader, FileUuidsThatAreNotOneAreRefused) {
    const std::string good = voxelmap_bytes("uuid-good.vdb");
    const fs::path bad = temp_dir() / "uuid-bad.vdb";
    ASSERT_EQ(good[29], '-');  // the UUID from byte 21: 8 hex digits, then a dash
    EXPECT_EQ(refusal_behind_trailer(good, bad), "");
    std::string tab = good;
    tab.insert(21, "\t");
    EXPECT_NE(refusal_behind_trailer(tab, bad).find("its UUID at byte 21 is not 36 characters of hex digits and dashes"),
              std::string::npos);
    std::string letter = good;
    letter[22] = 'g';
    EXPECT_NE(refusal_behind_trailer(letter, bad).find("its UUID at byte 21"), std::string::npos);
}

// A file format older than the framing walk checks (a version number damaged behind a recomputed
// trailer): OpenVDB would read the header by the older layout and the metadata from shifted bytes.
TEST(VdbReader, OlderFileFormatsAreRefused) {
    const std::string good = voxelmap_bytes("version-good.vdb");
    const fs::path bad = temp_dir() / "version-bad.vdb";
    EXPECT_EQ(refusal_behind_trailer(good, bad), "");
    for (const std::uint32_t version : {217u, 221u}) {
        std::string bytes = good;
        std::memcpy(bytes.data() + 8, &version, 4);  // after the 8-byte magic number
        EXPECT_NE(refusal_behind_trailer(bytes, bad).find("written by an older OpenVDB (file format " + std::to_string(version)),
                  std::string::npos);
    }
}

// A node's values stored as an uncompressed chunk longer than the buffer OpenVDB reads them into:
// OpenVDB 10 read the whole chunk into that buffer before it compared the lengths (a heap overflow
// on a crafted file with a recomputed trailer, tests/fuzz/regressions/vdb_field and
// vdb_shell_field). The chunk walk refuses it before OpenVDB reads the trees. A grid of one active
// voxel, as openvdb::io::File writes it: its leaf stores the one active value (4 bytes, mask
// compression) as a Blosc chunk of 20 bytes; its length made -20, the same bytes are an
// uncompressed chunk of 20 bytes for a buffer of 4.
TEST(VdbReader, UncompressedChunksLongerThanTheirBufferAreRefused) {
    openvdb::initialize();
    const fs::path path = temp_dir() / "one-voxel.vdb";
    openvdb::FloatGrid::Ptr grid = openvdb::FloatGrid::create(0.0f);
    grid->setName("one");
    grid->tree().setValue(openvdb::Coord(1, 2, 3), 1.5f);
    openvdb::io::File(path.string()).write({grid});
    const std::string good = hp::read_file(path);
    EXPECT_NO_THROW((void)hp::vdb::Reader::open(path, true));
    const std::int64_t length = 20;
    std::string chunk(reinterpret_cast<const char*>(&length), 8);
    chunk += std::string("\x02\x01", 2);  // Blosc's version and its codec's
    const std::size_t at = good.rfind(chunk);
    ASSERT_NE(at, std::string::npos);
    ASSERT_EQ(at + 8 + 20, good.size());  // the leaf's chunk ends the file
    std::string bytes = good;
    const std::int64_t uncompressed = -20;
    std::memcpy(bytes.data() + at, &uncompressed, 8);
    { std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes; }
    try {
        (void)hp::vdb::Reader::open(path, true);  // deep: every grid's trees, read by openvdb::io::File
        ADD_FAILURE() << "a chunk longer than its buffer was read";
    } catch (const hp::Error& e) {
        EXPECT_EQ(e.code(), hp::ExitCode::bad_input);
        EXPECT_NE(std::string(e.what()).find("a leaf's values: an uncompressed chunk of 20 bytes for a buffer of 4"), std::string::npos)
            << e.what();
    }
}

// A root tile's active state is one byte that OpenVDB reads into a bool: a byte other than 0 or 1
// was undefined behaviour in RootNode::readTopology (UndefinedBehaviorSanitizer, on 11 of 300
// grown vdb_field fuzz inputs replayed in the sanitized build). The chunk walk refuses it. A grid
// with one active root tile (level 3, 4096^3 voxels of 2.5), as openvdb::io::File writes it.
TEST(VdbReader, RootTilesWhoseActiveStateIsNotABoolAreRefused) {
    openvdb::initialize();
    const fs::path path = temp_dir() / "root-tile.vdb";
    openvdb::FloatGrid::Ptr grid = openvdb::FloatGrid::create(0.0f);
    grid->setName("tile");
    grid->tree().addTile(3, openvdb::Coord(0, 0, 0), 2.5f, true);
    ASSERT_EQ(grid->tree().activeTileCount(), 1u);
    openvdb::io::File(path.string()).write({grid});
    const std::string good = hp::read_file(path);
    EXPECT_NO_THROW((void)hp::vdb::Reader::open(path, true));
    const float value = 2.5f;
    std::string tile(12, '\0');  // the origin (0, 0, 0)
    tile.append(reinterpret_cast<const char*>(&value), 4);
    tile += '\x01';
    const std::size_t at = good.find(tile);
    ASSERT_NE(at, std::string::npos);
    ASSERT_EQ(good.find(tile, at + 1), std::string::npos);
    for (const char active : {'\x00', '\x36'}) {
        std::string bytes = good;
        bytes[at + 16] = active;
        { std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes; }
        if (active == '\x00') {
            EXPECT_NO_THROW((void)hp::vdb::Reader::open(path, true));  // an inactive tile is a tile
            continue;
        }
        try {
            (void)hp::vdb::Reader::open(path, true);
            ADD_FAILURE() << "a root tile's active state of 54 was read";
        } catch (const hp::Error& e) {
            EXPECT_EQ(e.code(), hp::ExitCode::bad_input);
            EXPECT_NE(std::string(e.what()).find("a root tile's active state is 54 (0 or 1)"), std::string::npos) << e.what();
        }
    }
}

// The haptic: keys the readers read by type: a file whose haptic:band is a string made the query's
// reader throw the JSON library's type_error (tests/fuzz/regressions/vdb_field); refused instead.
TEST(VdbReader, MetadataKeysOfAnotherTypeAreRefused) {
    hp::GridSpec g = grid();
    hp::vdb::GridOut layers{"layers", hp::vdb::ValueType::int32, [&](int, void* out) {
                                for (int n = 0; n < g.dims[0] * g.dims[1]; ++n) static_cast<std::int32_t*>(out)[n] = -1;
                            }};
    const fs::path path = temp_dir() / "band-a-string.vdb";
    hp::vdb::write(path, g, {layers}, {{"kind", "voxelmap"}, {"band", "2"}}, "hapticprep test");
    try {
        (void)hp::vdb::Reader::open(path);
        ADD_FAILURE() << "a haptic:band of another type was read";
    } catch (const hp::Error& e) {
        EXPECT_EQ(e.code(), hp::ExitCode::bad_input);
        EXPECT_NE(std::string(e.what()).find("its haptic:band is not an integer"), std::string::npos) << e.what();
    }
    hp::vdb::write(path, g, {layers}, {{"kind", "voxelmap"}, {"band", 2}}, "hapticprep test");
    EXPECT_NO_THROW((void)hp::vdb::Reader::open(path));
}
