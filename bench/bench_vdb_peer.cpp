// bench_vdb_peer MESH --voxel-size S --product band|interior|dense [--band B] -o OUT.vdb
// OpenVDB as a user's process, the peer of the executables' rows of make bench (bench/asrun.sh):
// reads the mesh file (the same import as the tools), runs meshToSignedDistanceField once on the
// grid haptic-voxelize makes for it (pad 2, index (0,0,0) at the centre of voxel (0,0,0)) and
// writes the grid to a .vdb (Blosc + active-mask compression, as the tools write), then exits.
// Products:
//   band      exterior and interior band of B voxels each (default 3)
//   interior  exterior band 3 voxels, the whole interior (inside band unbounded)
//   dense     the whole interior and an exterior band of half the grid's longest side in voxels:
//             the closest OpenVDB comes to the tools' dense field, every voxel of the box set
//             (the JSON line says how many of the box's voxels are active)
// Prints one JSON line: the phases' seconds (import, sdf, write), the product, the grid's
// dimensions, its active voxel count. Time it from outside (/usr/bin/time) like the tools.
// This executable may include OpenVDB (it is a bench).
#include <chrono>
#include <iostream>
#include <limits>
#include <vector>

#include "bench_common.hpp"
#include "common/tool.hpp"
#include "core/memory.hpp"

int main(int argc, char** argv) {
    hp::app::Tool tool("bench_vdb_peer", "OpenVDB's meshToSignedDistanceField on haptic-voxelize's grid, as a process.",
                       "Example:\n  bench_vdb_peer fandisk.obj --voxel-size 0.0165 --product interior -o f.vdb\n");
    std::string file, product = "band", output;
    double s = 0;
    float band = 3;
    tool.cli.add_option("MESH", file)->required();
    tool.cli.add_option("--voxel-size", s)->required();
    tool.cli.add_option("--product", product, "band, interior or dense")->check(CLI::IsMember({"band", "interior", "dense"}));
    tool.cli.add_option("--band", band, "band in voxels on each side (product band)");
    tool.cli.add_option("-o,--output", output)->required();
    return tool.run(argc, argv, [&] {
        auto t0 = std::chrono::steady_clock::now();
        hp::LoadedMesh m = hp::load_mesh(file);
        const hp::GridSpec g = hp::grid_around(m.diagnostics.bbox, s, 2);
        const auto [xform, points, tris] = hp::bench::openvdb_input(m.mesh, g);
        const double t_import = hp::bench::seconds_since(t0);

        float ex = band, in = band;
        if (product == "interior") ex = 3, in = std::numeric_limits<float>::max();
        if (product == "dense") {
            ex = float(std::max({g.dims[0], g.dims[1], g.dims[2]}) / 2);
            in = std::numeric_limits<float>::max();
        }
        auto t1 = std::chrono::steady_clock::now();
        auto grid = openvdb::tools::meshToSignedDistanceField<openvdb::FloatGrid>(*xform, points, tris, {}, ex, in);
        const double t_sdf = hp::bench::seconds_since(t1);
        const openvdb::Index64 active = grid->activeVoxelCount();

        auto t2 = std::chrono::steady_clock::now();
        grid->setName("distance");
        openvdb::io::File out(output);
        out.setCompression(openvdb::io::COMPRESS_BLOSC | openvdb::io::COMPRESS_ACTIVE_MASK);
        out.write({grid});
        out.close();
        const double t_write = hp::bench::seconds_since(t2);

        nlohmann::json j{{"stage", "openvdb-" + product},
                         {"mesh", m.source_name},
                         {"voxel_size", s},
                         {"exterior_band", ex},
                         {"interior_band", product == "band" ? nlohmann::json(in) : nlohmann::json("all")},
                         {"dims", {g.dims[0], g.dims[1], g.dims[2]}},
                         {"active_voxels", active},
                         {"seconds", {{"import", t_import}, {"sdf", t_sdf}, {"write", t_write},
                                      {"total", hp::bench::seconds_since(t0)}}},
                         {"peak_rss_bytes", hp::peak_rss_bytes()}};
        std::cout << j.dump() << std::endl;
        return 0;
    });
}
