// Benchmark of hp::vdb::write on a large layered Int32 grid, the way haptic-voxelize feeds it:
// the producer holds int16 layers per z-slice and frees each slice when the writer has taken it.
// The layers are those of a ball (layer = round(R - |p - c|) in voxels, clamped to +-max_layers
// when given), so without a clamp almost every leaf varies and few become tiles: the worst case
// for memory. Prints one JSON line: seconds, peak RSS, file size, voxels.
// --rewrite FILE: reads every grid of a hapticprep VDB file block by block and writes it again
// through hp::vdb::write with the same metadata (the stages' block producers): times the save of
// real band files in isolation; the output must be byte-identical to the input ("identical"
// in the JSON; exit 1 when it is not).
// --read-bricks FILE: times Reader::open and reading every grid of FILE as bricks.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <vector>

#include "common/tool.hpp"
#include "core/error.hpp"
#include "core/version.hpp"
#include "formats/vdb.hpp"

namespace {

double since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

hp::vdb::ValueType value_type_of(const std::string& name) {
    if (name == "int32") return hp::vdb::ValueType::int32;
    if (name == "float") return hp::vdb::ValueType::float32;
    if (name == "double") return hp::vdb::ValueType::float64;
    if (name == "vec3s") return hp::vdb::ValueType::vec3f;
    throw std::runtime_error("grid value type " + name + " is not written by hapticprep");
}

std::size_t value_bytes(hp::vdb::ValueType t) {
    switch (t) {
    case hp::vdb::ValueType::int32: return 4;
    case hp::vdb::ValueType::float32: return 4;
    case hp::vdb::ValueType::float64: return 8;
    case hp::vdb::ValueType::vec3f: return 12;
    }
    return 0;
}

// One grid held as the stages hold it before writing: bricks and per-block tiles, raw bytes.
struct HeldGrid {
    hp::vdb::ValueType type = hp::vdb::ValueType::int32;
    std::size_t size = 0;               // bytes per value
    std::vector<std::uint32_t> index;   // per block: brick number or UINT32_MAX
    std::vector<char> tiles, bricks;
};

int read_file_blocks(const std::string& path) {
    const auto t0 = std::chrono::steady_clock::now();
    const hp::vdb::Reader reader = hp::vdb::Reader::open(path);
    const double open_seconds = since(t0);
    nlohmann::json grids = nlohmann::json::object();
    for (const auto& gi : reader.info().grids) {
        const auto t1 = std::chrono::steady_clock::now();
        std::size_t bricks = 0, tiles = 0;
        std::uint64_t sum = 0;
        const hp::vdb::ValueType type = value_type_of(gi.value_type);
        const std::size_t size = value_bytes(type);
        reader.read_blocks(gi.name, type, [&](std::size_t, const void* brick, const void* tile) {
            const auto* p = static_cast<const unsigned char*>(brick ? brick : tile);
            sum = sum * 31 + p[0] + p[size - 1];
            brick ? ++bricks : ++tiles;
        });
        grids[gi.name] = {{"seconds", since(t1)}, {"bricks", bricks}, {"tiles", tiles}, {"checksum", sum}};
    }
    std::cout << nlohmann::json{{"stage", "vdb-read-blocks"}, {"file", path}, {"open_seconds", open_seconds}, {"grids", grids},
                                {"seconds", since(t0)}, {"peak_rss", hp::peak_rss_bytes()}}
                     .dump()
              << "\n";
    return 0;
}

// Whether files `a` and `b` hold the same bytes (read in 1 MiB pieces).
bool same_bytes(const std::string& a, const std::string& b) {
    if (std::filesystem::file_size(a) != std::filesystem::file_size(b)) return false;
    std::ifstream fa(a, std::ios::binary), fb(b, std::ios::binary);
    if (!fa || !fb) throw std::runtime_error("cannot open " + a + " or " + b + " to compare them");
    std::vector<char> ba(std::size_t{1} << 20), bb(ba.size());
    while (fa && fb) {
        fa.read(ba.data(), static_cast<std::streamsize>(ba.size()));
        fb.read(bb.data(), static_cast<std::streamsize>(bb.size()));
        if (fa.gcount() != fb.gcount() || std::memcmp(ba.data(), bb.data(), static_cast<std::size_t>(fa.gcount())) != 0) return false;
    }
    return fa.eof() && fb.eof();
}

int rewrite_file(const std::string& input, const std::string& output) {
    const hp::vdb::Reader reader = hp::vdb::Reader::open(input, true);  // deep: the trees' backgrounds
    const hp::vdb::FileInfo& info = reader.info();
    if (!info.ours) hp::fail_input(input, "is not a hapticprep VDB file");
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<HeldGrid> held(info.grids.size());
    for (std::size_t n = 0; n < info.grids.size(); ++n) {
        HeldGrid& h = held[n];
        h.type = value_type_of(info.grids[n].value_type);
        h.size = value_bytes(h.type);
        reader.read_blocks(info.grids[n].name, h.type, [&](std::size_t b, const void* brick, const void* tile) {
            if (h.index.size() <= b) h.index.resize(b + 1, UINT32_MAX), h.tiles.resize((b + 1) * h.size);
            if (!brick) {
                std::memcpy(h.tiles.data() + b * h.size, tile, h.size);
                return;
            }
            h.index[b] = static_cast<std::uint32_t>(h.bricks.size() / (512 * h.size));
            const auto* p = static_cast<const char*>(brick);
            h.bricks.insert(h.bricks.end(), p, p + 512 * h.size);
        });
    }
    const double read_seconds = since(t0);
    std::vector<hp::vdb::GridOut> grids;
    for (std::size_t n = 0; n < info.grids.size(); ++n) {
        HeldGrid& h = held[n];
        hp::vdb::GridOut g{info.grids[n].name, h.type, nullptr, info.grids[n].background};
        g.level_set = info.grids[n].grid_class == "level set";
        g.blocks = [&h](std::size_t b, void* tile) -> const void* {
            if (h.index[b] == UINT32_MAX) {
                std::memcpy(tile, h.tiles.data() + b * h.size, h.size);
                return nullptr;
            }
            return h.bricks.data() + static_cast<std::size_t>(h.index[b]) * 512 * h.size;
        };
        grids.push_back(std::move(g));
    }
    const auto t1 = std::chrono::steady_clock::now();
    const std::clock_t c1 = std::clock();
    // Wall and CPU seconds (all threads) from the start of the write to each phase's first report.
    nlohmann::json phases = nlohmann::json::object(), cpu = nlohmann::json::object();
    hp::Progress progress{[&](std::string_view phase, double) {
        if (phases.contains(std::string(phase))) return;
        phases[std::string(phase)] = since(t1);
        cpu[std::string(phase)] = static_cast<double>(std::clock() - c1) / CLOCKS_PER_SEC;
    }};
    hp::vdb::write(output, info.grid, grids, info.metadata, info.creator, {}, progress);
    const double seconds = since(t1);
    cpu["end"] = static_cast<double>(std::clock() - c1) / CLOCKS_PER_SEC;
    const bool identical = same_bytes(input, output);
    std::cout << nlohmann::json{{"stage", "vdb-rewrite"}, {"file", input}, {"read_seconds", read_seconds}, {"seconds", seconds},
                                {"phase_starts", phases}, {"phase_starts_cpu", cpu}, {"peak_rss", hp::peak_rss_bytes()},
                                {"file_bytes", std::filesystem::file_size(output)}, {"identical", identical}}
                     .dump()
              << "\n";
    if (!identical) std::cerr << output << ": not byte-identical to " << input << " (the writer's output changed)\n";
    return identical ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    hp::app::Tool tool("bench_vdb_write", "Time and peak memory of writing (and reading) a large layered Int32 VDB.",
                       "Example:\n  bench_vdb_write --dims 1145 1145 1145 -o big.vdb --read\n");
    std::vector<int> dims{256, 256, 256};
    int max_layers = 0;
    bool keep = false, read_back = false;
    std::string read_only, rewrite, read_bricks;
    std::string output = "bench_vdb_write.vdb";
    tool.cli.add_option("--dims", dims, "grid dimensions")->expected(3);
    tool.cli.add_option("--max-layers", max_layers, "clamp layers to +-L (0: unlimited)");
    tool.cli.add_option("-o,--output", output, "file to write (removed afterwards unless --keep)");
    tool.cli.add_flag("--keep", keep, "keep the file");
    tool.cli.add_flag("--read", read_back, "also time reading the grid back slice by slice (sampled check)");
    tool.cli.add_option("--read-only", read_only, "only read this file's layers grid, in a fresh process");
    tool.cli.add_option("--rewrite", rewrite, "read every grid of this file block by block and write it again to -o");
    tool.cli.add_option("--read-bricks", read_bricks, "only time opening this file and reading every grid block by block");
    return tool.run(argc, argv, [&] {
        if (!rewrite.empty()) return rewrite_file(rewrite, output);
        if (!read_bricks.empty()) return read_file_blocks(read_bricks);
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
