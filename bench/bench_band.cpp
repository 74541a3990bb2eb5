// bench_band MESH --voxel-size S [--band B] [--runs N]
// The peer of the narrow-band rows of make bench (bench/band.sh): OpenVDB's narrow-band
// meshToSignedDistanceField (exterior and interior band B voxels, default 3) on the grid
// haptic-voxelize makes for the mesh (pad 2, index (0,0,0) at the centre of voxel (0,0,0)), in
// its own process so that its peak memory is its own. Prints one JSON line: the median time of
// --runs runs, this process's peak RSS (mesh loading included, as in the tools' figures), the
// grid's dimensions and the active voxel count of the last run's grid.
// This executable may include OpenVDB (it is a bench).
#include <chrono>
#include <iostream>
#include <vector>

#include "bench_common.hpp"
#include "common/tool.hpp"
#include "core/memory.hpp"

int main(int argc, char** argv) {
    hp::app::Tool tool("bench_band", "Time OpenVDB's narrow-band meshToSignedDistanceField on haptic-voxelize's grid.",
                       "Example:\n  bench_band bunny.obj --voxel-size 0.000125 --band 3 --runs 1\n");
    std::string file;
    double s = 0;
    int runs = 1;
    float band = 3;
    tool.cli.add_option("MESH", file)->required();
    tool.cli.add_option("--voxel-size", s)->required();
    tool.cli.add_option("--band", band, "OpenVDB exterior and interior band in voxels");
    tool.cli.add_option("--runs", runs);
    return tool.run(argc, argv, [&] {
        hp::LoadedMesh m = hp::load_mesh(file);
        const hp::GridSpec g = hp::grid_around(m.diagnostics.bbox, s, 2);
        const auto [xform, points, tris] = hp::bench::openvdb_input(m.mesh, g);
        std::vector<double> times;
        openvdb::Index64 active = 0;
        for (int r = 0; r < runs; ++r) {
            auto t0 = std::chrono::steady_clock::now();
            auto grid = openvdb::tools::meshToSignedDistanceField<openvdb::FloatGrid>(*xform, points, tris, {}, band, band);
            times.push_back(hp::bench::seconds_since(t0));
            active = grid->activeVoxelCount();
        }
        nlohmann::json j{{"stage", "openvdb-band"},
                         {"mesh", m.source_name},
                         {"voxel_size", s},
                         {"band", band},
                         {"dims", {g.dims[0], g.dims[1], g.dims[2]}},
                         {"seconds", hp::bench::median(times)},
                         {"runs", runs},
                         {"active_voxels", active},
                         {"peak_rss", hp::peak_rss_bytes()}};
        std::cout << j.dump() << std::endl;
        return 0;
    });
}
