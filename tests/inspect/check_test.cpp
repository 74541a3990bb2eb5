// --check on hand-made VDB files: a consistent file passes; each broken invariant is reported.
#include "inspect/check.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "formats/vdb.hpp"

namespace fs = std::filesystem;

namespace {

fs::path temp_dir() {
    fs::path d = fs::temp_directory_path() / ("hp_check_test_" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
}

// A 1-D "slab" along x: surface voxels at i = 3 (distance 0.01), inside for i < 3, outside for i > 3.
hp::GridSpec grid() {
    hp::GridSpec g;
    g.origin = {0, 0, 0};
    g.voxel_size = 0.5;
    g.dims = {8, 3, 2};
    return g;
}
int layer_of(int i) { return 3 - i; }
double dist_of(int i) { return i == 3 ? 0.01 : 0.5 * (3 - i); }

nlohmann::json full_meta() {
    return {{"kind", "distance"}, {"tool", "haptic-distance"}, {"tool_version", "0.1.0"}, {"source_name", "slab.obj"},
            {"source_hash", "0123456789abcdef"}, {"parameters", R"({"pad": 2})"}, {"encoding", "double"},
            {"precision", -1}, {"scale_factor", 1.0}, {"voxelmap", "slab.vdb"}};
}

// `tweak(i, j, k, layer, distance)` may change a voxel before it is written.
template <class Tweak>
fs::path write_slab(const fs::path& p, const nlohmann::json& meta, Tweak tweak) {
    const hp::GridSpec g = grid();
    auto fill = [&](bool want_layers) {
        return [&, want_layers](int z, void* o) {
            for (int j = 0; j < g.dims[1]; ++j)
                for (int i = 0; i < g.dims[0]; ++i) {
                    int l = layer_of(i);
                    double d = dist_of(i);
                    tweak(i, j, z, l, d);
                    if (want_layers) static_cast<std::int32_t*>(o)[j * g.dims[0] + i] = l;
                    else static_cast<double*>(o)[j * g.dims[0] + i] = d;
                }
        };
    };
    hp::vdb::write(p, g, {{"distance", hp::vdb::ValueType::float64, fill(false), -9}, {"layers", hp::vdb::ValueType::int32, fill(true), -9}},
                   meta, "hapticprep test");
    return p;
}

bool has_problem(const hp::inspect::CheckReport& r, const std::string& text) {
    return std::any_of(r.problems.begin(), r.problems.end(), [&](const std::string& p) { return p.find(text) != std::string::npos; });
}

}  // namespace

TEST(Check, ConsistentDistanceFilePasses) {
    const fs::path p = write_slab(temp_dir() / "good.vdb", full_meta(), [](int, int, int, int&, double&) {});
    const hp::inspect::CheckReport r = hp::inspect::check(p);
    EXPECT_TRUE(r.ok()) << (r.problems.empty() ? "" : r.problems[0]);
    EXPECT_EQ(r.kind, "distance field");
    EXPECT_EQ(r.passed.size(), 5u);
    const hp::inspect::Summary s = r.summary();
    EXPECT_EQ(s.json["check"]["ok"], true);
    EXPECT_NE(s.text.find("check        passed (5 checks)"), std::string::npos) << s.text;
}

TEST(Check, SignDisagreementIsReportedWithTheFirstVoxel) {
    const fs::path p = write_slab(temp_dir() / "sign.vdb", full_meta(), [](int i, int j, int k, int&, double& d) {
        if ((i == 1 && j == 2 && k == 0) || (i == 6 && j == 0 && k == 1)) d = -d;
    });
    const hp::inspect::CheckReport r = hp::inspect::check(p);
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(has_problem(r, "2 voxels where the sign of the distance disagrees with the layer, first at (1, 2, 0): layer 2, distance -1"))
        << r.problems[0];
    EXPECT_NE(r.summary().text.find("FAILED (1 problems)"), std::string::npos);
}

TEST(Check, SurfaceVoxelFarFromTheSurfaceIsReported) {
    // Half the diagonal of a 0.5 voxel is 0.433; 0.44 is beyond it.
    const fs::path p = write_slab(temp_dir() / "surf.vdb", full_meta(), [](int i, int j, int k, int&, double& d) {
        if (i == 3 && j == 1 && k == 1) d = 0.44;
    });
    const hp::inspect::CheckReport r = hp::inspect::check(p);
    EXPECT_TRUE(has_problem(r, "1 surface voxels farther than half a voxel diagonal from the surface, first at (3, 1, 1)"));
    const fs::path q = write_slab(temp_dir() / "surf_ok.vdb", full_meta(), [](int i, int j, int k, int&, double& d) {
        if (i == 3 && j == 1 && k == 1) d = -0.43;
    });
    EXPECT_TRUE(hp::inspect::check(q).ok());
}

TEST(Check, IncompleteOrWrongMetadataIsReported) {
    nlohmann::json meta = full_meta();
    meta.erase("source_hash");
    meta.erase("parameters");
    meta["sign_convention"] = "inside_negative";
    const hp::inspect::CheckReport r = hp::inspect::check(write_slab(temp_dir() / "meta.vdb", meta, [](int, int, int, int&, double&) {}));
    EXPECT_TRUE(has_problem(r, "metadata incomplete: no haptic:source_hash, parameters"));
    EXPECT_TRUE(has_problem(r, "haptic:sign_convention is \"inside_negative\""));
    nlohmann::json enc = full_meta();
    enc["encoding"] = "float";
    EXPECT_TRUE(has_problem(hp::inspect::check(write_slab(temp_dir() / "enc.vdb", enc, [](int, int, int, int&, double&) {})),
                            "double distances but haptic:encoding is 'float'"));
}

TEST(Check, ForeignVdbFailsAndDamagedFilesAreBadInput) {
    const fs::path dir = temp_dir();
    const hp::GridSpec g = grid();
    hp::vdb::WriteOptions plain;
    plain.plain = true;
    hp::vdb::write(dir / "foreign.vdb", g, {{"layers", hp::vdb::ValueType::int32, [](int, void* o) { std::fill_n(static_cast<std::int32_t*>(o), 24, 1); }, 0}},
                   {}, "other", plain);
    const hp::inspect::CheckReport r = hp::inspect::check(dir / "foreign.vdb");
    EXPECT_TRUE(has_problem(r, "not written by hapticprep"));
    const fs::path good = write_slab(dir / "good.vdb", full_meta(), [](int, int, int, int&, double&) {});
    std::string bytes;
    {
        std::ifstream in(good, std::ios::binary);
        bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    std::ofstream(dir / "cut.vdb", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
    bytes[bytes.size() / 2] ^= 8;
    std::ofstream(dir / "flip.vdb", std::ios::binary) << bytes;
    std::ofstream(dir / "empty.vdb", std::ios::binary).close();
    for (const char* name : {"cut.vdb", "flip.vdb", "empty.vdb", "missing.vdb"}) {
        try {
            hp::inspect::check(dir / name);
            ADD_FAILURE() << name;
        } catch (const hp::Error& e) {
            EXPECT_EQ(e.code(), hp::ExitCode::bad_input) << name;
        }
    }
}
