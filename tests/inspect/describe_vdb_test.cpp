// The VDB summary of a small hand-made voxelmap: provenance, sizes and the layer histogram,
// as text lines and JSON, against counts taken by brute force over the formula that wrote it.
#include <filesystem>
#include <map>

#include <gtest/gtest.h>

#include "formats/vdb.hpp"
#include "inspect/inspect.hpp"
#include "../core/temp_dir.hpp"

namespace fs = std::filesystem;

TEST(DescribeVdb, VoxelmapSummaryHasProvenanceSizesAndHistogram) {
    const fs::path dir = hp::test::temp_dir("hp_describe_test_");
    hp::GridSpec g;
    g.origin = {1, 2, 3};
    g.voxel_size = 0.5;
    g.dims = {5, 4, 3};
    auto layer = [](int i, int j, int k) { return (i + 2 * j + 3 * k) % 7 - 3; };
    hp::vdb::GridOut out{"layers", hp::vdb::ValueType::int32, [&](int z, void* o) {
                             for (int j = 0; j < 4; ++j)
                                 for (int i = 0; i < 5; ++i) static_cast<std::int32_t*>(o)[j * 5 + i] = layer(i, j, z);
                         }, -4};
    const nlohmann::json meta{{"kind", "voxelmap"}, {"tool", "haptic-voxelize"}, {"tool_version", "9.8.7"},
                              {"source_name", "part.stl"}, {"source_hash", "00000000deadbeef"}, {"units", "mm"},
                              {"parameters", R"({"pad":2,"voxel_size":0.5})"}};
    hp::vdb::write(dir / "map.vdb", g, {out}, meta, "hapticprep test");
    const hp::inspect::Summary s = hp::inspect::describe(dir / "map.vdb");

    std::map<int, int> hist;
    int inside = 0, surface = 0, outside = 0;
    for (int k = 0; k < 3; ++k)
        for (int j = 0; j < 4; ++j)
            for (int i = 0; i < 5; ++i) {
                const int l = layer(i, j, k);
                ++hist[l];
                (l > 0 ? inside : l < 0 ? outside : surface) += 1;
            }
    std::string hist_line = "histogram   ";
    for (const auto& [l, n] : hist) hist_line += " " + std::to_string(l) + ":" + std::to_string(n);
    for (const std::string& line :
         {std::string("kind         voxelmap (hapticprep)"), std::string("format       v1"),
          std::string("made by      haptic-voxelize 9.8.7"), std::string("source       part.stl, hash 00000000deadbeef, units mm"),
          std::string(R"(parameters   {"pad":2,"voxel_size":0.5})"), std::string("creator      hapticprep test"),
          std::string("dimensions   5 x 4 x 3 voxels, voxel size 0.5"), std::string("origin       [1, 2, 3]"),
          std::string("voxels       60"),
          "layers       " + std::to_string(inside) + " inside, " + std::to_string(surface) + " surface, " + std::to_string(outside) +
              " outside voxels; values -3 .. 3",
          hist_line})
        EXPECT_NE(s.text.find("\n" + line + "\n"), std::string::npos) << "missing line: " << line << "\n" << s.text;

    const nlohmann::json& j = s.json;
    EXPECT_EQ(j["kind"], "voxelmap");
    EXPECT_EQ(j["format_version"], 1);
    EXPECT_EQ(j["provenance"]["tool"], "haptic-voxelize");
    EXPECT_EQ(j["provenance"]["tool_version"], "9.8.7");
    EXPECT_EQ(j["provenance"]["source_hash"], "00000000deadbeef");
    EXPECT_EQ(j["provenance"]["parameters"]["pad"], 2);
    EXPECT_EQ(j["voxels"], 60);
    EXPECT_EQ(j["dimensions"], nlohmann::json({5, 4, 3}));
    EXPECT_EQ(j["layers"]["inside"], inside);
    EXPECT_EQ(j["layers"]["surface"], surface);
    EXPECT_EQ(j["layers"]["min"], -3);
    for (const auto& [l, n] : hist) EXPECT_EQ(j["layers"]["histogram"][std::to_string(l)], n) << l;
    fs::remove_all(dir);
}
