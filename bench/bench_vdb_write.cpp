// Benchmark of hp::vdb::write on a large layered Int32 grid, the way haptic-voxelize feeds it:
// the producer holds int16 layers per z-slice and frees each slice when the writer has taken it.
// The layers are those of a ball (layer = round(R - |p - c|) in voxels, clamped to +-max_layers
// when given), so without a clamp almost every leaf varies and few become tiles: the worst case
// for memory. Prints one JSON line: seconds, peak RSS, file size, voxels.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <vector>

#include "common/tool.hpp"
#include "core/error.hpp"
#include "core/version.hpp"
#include "formats/vdb.hpp"

int main(int argc, char** argv) {
    hp::app::Tool tool("bench_vdb_write", "Time and peak memory of writing (and reading) a large layered Int32 VDB.",
                       "Example:\n  bench_vdb_write --dims 1145 1145 1145 -o big.vdb --read\n");
    std::vector<int> dims{256, 256, 256};
    int max_layers = 0;
    bool keep = false, read_back = false;
    std::string read_only;
    std::string output = "bench_vdb_write.vdb";
    tool.cli.add_option("--dims", dims, "grid dimensions")->expected(3);
    tool.cli.add_option("--max-layers", max_layers, "clamp layers to +-L (0: unlimited)");
    tool.cli.add_option("-o,--output", output, "file to write (removed afterwards unless --keep)");
    tool.cli.add_flag("--keep", keep, "keep the file");
    tool.cli.add_flag("--read", read_back, "also time reading the grid back slice by slice (sampled check)");
    tool.cli.add_option("--read-only", read_only, "only read this file's layers grid, in a fresh process");
    return tool.run(argc, argv, [&] {
        if (!read_only.empty()) {
            auto t0 = std::chrono::steady_clock::now();
            std::int64_t sum = 0;
            hp::vdb::FileInfo info;
            hp::vdb::read_slices(read_only, "layers", hp::vdb::ValueType::int32, [&](int, const void* values) {
                sum += static_cast<const std::int32_t*>(values)[0];
            }, &info);
            const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            std::cout << nlohmann::json{{"stage", "vdb-read"}, {"voxels", info.grid.count()}, {"seconds", seconds},
                                        {"peak_rss", hp::peak_rss_bytes()}, {"checksum", sum}}
                             .dump()
                      << "\n";
            return 0;
        }
        hp::GridSpec g;
        g.voxel_size = 0.001;
        g.dims = {dims[0], dims[1], dims[2]};
        const std::size_t nx = static_cast<std::size_t>(g.dims[0]);
        const std::size_t slice = nx * static_cast<std::size_t>(g.dims[1]);
        const double cx = g.dims[0] / 2.0, cy = g.dims[1] / 2.0, cz = g.dims[2] / 2.0;
        const double radius = 0.4 * std::min({g.dims[0], g.dims[1], g.dims[2]});
        auto layer = [&](int i, int j, int k) {
            const double d = std::sqrt((i + 0.5 - cx) * (i + 0.5 - cx) + (j + 0.5 - cy) * (j + 0.5 - cy) +
                                       (k + 0.5 - cz) * (k + 0.5 - cz));
            int v = static_cast<int>(std::lround(radius - d));
            if (max_layers > 0) v = std::clamp(v, -max_layers, max_layers);
            return static_cast<std::int16_t>(v);
        };
        // The producer's own storage, as haptic-voxelize holds it (2 bytes per voxel, per slice).
        std::vector<std::vector<std::int16_t>> slices(static_cast<std::size_t>(g.dims[2]));
        for (int k = 0; k < g.dims[2]; ++k) {
            auto& s = slices[static_cast<std::size_t>(k)];
            s.resize(slice);
            for (int j = 0; j < g.dims[1]; ++j)
                for (int i = 0; i < g.dims[0]; ++i) s[static_cast<std::size_t>(j) * nx + static_cast<std::size_t>(i)] = layer(i, j, k);
        }
        const std::size_t rss_before = hp::peak_rss_bytes();
        hp::vdb::GridOut out{"layers", hp::vdb::ValueType::int32,
                             [&](int z, void* dst) {
                                 auto* d = static_cast<std::int32_t*>(dst);
                                 auto& s = slices[static_cast<std::size_t>(z)];
                                 for (std::size_t i = 0; i < slice; ++i) d[i] = s[i];
                                 std::vector<std::int16_t>().swap(s);
                             },
                             -1e4};
        auto t0 = std::chrono::steady_clock::now();
        nlohmann::json phases = nlohmann::json::object();  // seconds from the start to each phase's first report
        hp::Progress progress{[&](std::string_view phase, double) {
            if (!phases.contains(std::string(phase)))
                phases[std::string(phase)] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        }};
        hp::vdb::write(output, g, {out}, {{"kind", "voxelmap"}}, std::string("hapticprep ") + hp::kVersion, {}, progress);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const std::size_t rss = hp::peak_rss_bytes();
        const auto bytes = std::filesystem::file_size(output);
        double read_seconds = 0;
        std::size_t rss_read = 0;
        if (read_back) {
            auto t1 = std::chrono::steady_clock::now();
            std::size_t mismatches = 0;
            hp::vdb::read_slices(output, "layers", hp::vdb::ValueType::int32, [&](int z, const void* values) {
                const auto* v = static_cast<const std::int32_t*>(values);
                for (int j = 0; j < g.dims[1]; j += 7)
                    for (int i = 0; i < g.dims[0]; i += 5)
                        mismatches += v[static_cast<std::size_t>(j) * nx + static_cast<std::size_t>(i)] != layer(i, j, z);
            });
            read_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
            rss_read = hp::peak_rss_bytes();
            if (mismatches) hp::fail_input(output, std::to_string(mismatches) + " sampled voxels read back wrong");
        }
        if (!keep) std::filesystem::remove(output);
        char notes[240];
        std::snprintf(notes, sizeof notes, "%dx%dx%d Int32, file %.1f MB, producer %.1f MB before writing", g.dims[0], g.dims[1],
                      g.dims[2], static_cast<double>(bytes) / 1048576.0, static_cast<double>(rss_before) / 1048576.0);
        std::cout << nlohmann::json{{"stage", "vdb-write"}, {"mesh", "synthetic ball"}, {"voxels", g.count()},
                                    {"seconds", seconds}, {"phase_starts", phases}, {"peak_rss", rss}, {"read_seconds", read_seconds},
                                    {"peak_rss_after_read", rss_read}, {"file_bytes", bytes}, {"notes", notes}}
                         .dump()
                  << "\n";
        return 0;
    });
}
