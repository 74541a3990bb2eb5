// --check on hand-made VDB files: a consistent file passes; each broken invariant is reported.
#include "inspect/check.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "formats/vdb.hpp"
#include "../core/temp_dir.hpp"

namespace fs = std::filesystem;

namespace {

fs::path temp_dir() { return hp::test::temp_dir("hp_check_test_"); }

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

namespace {

// The slab with a gradient grid: (-1, 0, 0) (the distance grows towards -x) where the field
// defines one (every voxel, or |layer| < band when meta says band), zero elsewhere;
// `tweak(i, j, k, gradient)` may change a voxel before it is written.
template <class Tweak>
fs::path write_slab_gradient(const fs::path& p, const nlohmann::json& meta, Tweak tweak,
                             hp::vdb::ValueType type = hp::vdb::ValueType::vec3f) {
    const hp::GridSpec g = grid();
    const int band = static_cast<int>(meta.value("band", 0));
    auto grids = std::vector<hp::vdb::GridOut>{
        {"distance", hp::vdb::ValueType::float64,
         [&](int, void* o) {
             for (int j = 0; j < g.dims[1]; ++j)
                 for (int i = 0; i < g.dims[0]; ++i) static_cast<double*>(o)[j * g.dims[0] + i] = dist_of(i);
         }, -9},
        {"layers", hp::vdb::ValueType::int32,
         [&](int, void* o) {
             for (int j = 0; j < g.dims[1]; ++j)
                 for (int i = 0; i < g.dims[0]; ++i) static_cast<std::int32_t*>(o)[j * g.dims[0] + i] = layer_of(i);
         }, -9},
        {"gradient", type,
         [&](int z, void* o) {
             for (int j = 0; j < g.dims[1]; ++j)
                 for (int i = 0; i < g.dims[0]; ++i) {
                     const bool defined = band == 0 || std::abs(layer_of(i)) < band;
                     std::array<float, 3> v{defined ? -1.0f : 0.0f, 0.0f, 0.0f};
                     tweak(i, j, z, v);
                     const int n = j * g.dims[0] + i;
                     if (type == hp::vdb::ValueType::vec3f) std::copy_n(v.data(), 3, static_cast<float*>(o) + 3 * n);
                     else static_cast<float*>(o)[n] = v[0];
                 }
         }, 0}};
    hp::vdb::write(p, g, grids, meta, "hapticprep test");
    return p;
}

}  // namespace

TEST(Check, DenseGradientIsCheckedForFiniteUnitValues) {
    const auto keep = [](int, int, int, std::array<float, 3>&) {};
    const hp::inspect::CheckReport good = hp::inspect::check(write_slab_gradient(temp_dir() / "grad.vdb", full_meta(), keep));
    EXPECT_TRUE(good.ok()) << (good.problems.empty() ? "" : good.problems[0]);
    EXPECT_EQ(good.passed.size(), 7u);  // the 5 checks of a distance file, finite, unit length
    EXPECT_NE(good.summary().text.find("the gradient has unit length on every voxel"), std::string::npos);

    // Corrupted: a NaN at (2, 1, 0), a half-length vector at (5, 0, 1) and at (6, 2, 1).
    const hp::inspect::CheckReport bad =
        hp::inspect::check(write_slab_gradient(temp_dir() / "grad_bad.vdb", full_meta(), [](int i, int j, int k, std::array<float, 3>& v) {
            if (i == 2 && j == 1 && k == 0) v[1] = std::nanf("");
            if ((i == 5 && j == 0 && k == 1) || (i == 6 && j == 2 && k == 1)) v[0] = -0.5f;
        }));
    EXPECT_FALSE(bad.ok());
    EXPECT_TRUE(has_problem(bad, "1 gradients are not finite, first at (2, 1, 0): layer 1")) << bad.summary().text;
    EXPECT_TRUE(has_problem(bad, "2 gradients on voxels are not of unit length, first at (5, 0, 1): layer -2, gradient (-0.5, 0, 0)"))
        << bad.summary().text;

    // Barely off unit length (float rounding) passes; 1e-3 off does not.
    EXPECT_TRUE(hp::inspect::check(write_slab_gradient(temp_dir() / "grad_round.vdb", full_meta(),
                                                       [](int, int, int, std::array<float, 3>& v) { v[0] = -1.0000002f; }))
                    .ok());
    EXPECT_TRUE(has_problem(hp::inspect::check(write_slab_gradient(temp_dir() / "grad_long.vdb", full_meta(),
                                                                   [](int i, int, int, std::array<float, 3>& v) {
                                                                       if (i == 0) v[0] = -1.001f;
                                                                   })),
                            "6 gradients on voxels are not of unit length"));
    // A gradient grid of another type.
    EXPECT_TRUE(has_problem(hp::inspect::check(write_slab_gradient(temp_dir() / "grad_type.vdb", full_meta(), keep,
                                                                   hp::vdb::ValueType::float32)),
                            "grid 'gradient' holds float, expected vec3s"));
}

TEST(Check, BandGradientIsUnitInTheBandAndZeroBeyond) {
    nlohmann::json meta = full_meta();
    meta["band"] = 2;  // |layer| < 2: i = 2, 3, 4
    const auto keep = [](int, int, int, std::array<float, 3>&) {};
    const hp::inspect::CheckReport good = hp::inspect::check(write_slab_gradient(temp_dir() / "bgrad.vdb", meta, keep));
    EXPECT_TRUE(good.ok()) << (good.problems.empty() ? "" : good.problems[0]);
    EXPECT_EQ(good.passed.size(), 8u);  // + zero beyond the band
    // A band voxel without its gradient, a voxel beyond the band with one.
    const hp::inspect::CheckReport bad =
        hp::inspect::check(write_slab_gradient(temp_dir() / "bgrad_bad.vdb", meta, [](int i, int j, int k, std::array<float, 3>& v) {
            if (i == 4 && j == 2 && k == 1) v = {0, 0, 0};
            if (i == 7 && j == 0 && k == 0) v = {0, 0, 1};
        }));
    EXPECT_TRUE(has_problem(bad, "1 gradients on band voxels (|layer| < 2) are not of unit length, first at (4, 2, 1)"))
        << bad.summary().text;
    EXPECT_TRUE(has_problem(bad, "1 gradients beyond the band are not zero, first at (7, 0, 0): layer -4, gradient (0, 0, 1)"))
        << bad.summary().text;
    // The same file read as dense (no band): the zeros beyond are not unit gradients.
    EXPECT_TRUE(has_problem(hp::inspect::check(write_slab_gradient(temp_dir() / "bgrad_dense.vdb", full_meta(), [](int i, int, int, std::array<float, 3>& v) {
                                if (std::abs(layer_of(i)) >= 2) v = {0, 0, 0};
                            })),
                            "30 gradients on voxels are not of unit length"));
}
