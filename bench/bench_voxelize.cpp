// Benchmark of haptic-voxelize's core against OpenVDB's meshToSignedDistanceField on the same
// mesh, transform and voxel size, in the same process run (medians of --runs runs each), plus an
// independent correctness check at random voxels:
//  - surface: brute-force SAT against every triangle == (layer is 0);
//  - sign: generalized winding number (brute force) at non-surface voxels == sign of the layer.
// Prints one JSON line for bench/run.sh. This executable may include OpenVDB (it is a bench).
#include <algorithm>
#include <chrono>
#include <iostream>
#include <random>
#include <vector>

#include "bench_common.hpp"
#include "common/tool.hpp"
#include "geometry/sat.hpp"
#include "geometry/winding.hpp"
#include "voxel/voxelize.hpp"


int main(int argc, char** argv) {
    hp::app::Tool tool("bench_voxelize", "Time voxelize vs OpenVDB meshToSignedDistanceField; check signs.",
                       "Example:\n  bench_voxelize bunny.obj --voxel-size 0.0005 --runs 5 --samples 1000\n");
    std::string file;
    double s = 0;
    int runs = 5, samples = 1000, band = 3;
    bool openvdb_full_interior = false, uniform = false;
    tool.cli.add_option("MESH", file)->required();
    tool.cli.add_option("--voxel-size", s)->required();
    tool.cli.add_option("--runs", runs);
    tool.cli.add_option("--samples", samples, "random voxels for the correctness check (0: none)");
    tool.cli.add_option("--band", band, "OpenVDB exterior/interior band in voxels");
    tool.cli.add_flag("--full-interior", openvdb_full_interior, "OpenVDB with an unlimited interior band");
    tool.cli.add_flag("--uniform", uniform, "sample voxels uniformly (default: half of them near the surface)");
    return tool.run(argc, argv, [&] {
        hp::LoadedMesh m = hp::load_mesh(file);
        hp::GridSpec g = hp::grid_around(m.diagnostics.bbox, s, 2);

        std::vector<double> ours;
        hp::LayerMap map;
        for (int r = 0; r < runs; ++r) {
            auto t0 = std::chrono::steady_clock::now();
            map = hp::voxelize(m.mesh, g, {});
            ours.push_back(hp::bench::seconds_since(t0));
        }

        const float in_band = openvdb_full_interior ? std::numeric_limits<float>::max() : float(band);
        const double peer = hp::bench::openvdb_sdf_seconds(m.mesh, g, float(band), in_band, runs);

        // Correctness at random voxels, by methods independent of the voxelizer's.
        std::mt19937_64 rng(1);
        const hp::Vec3d half{s / 2, s / 2, s / 2};
        std::size_t surface_mismatch = 0, sign_checked = 0, sign_errors = 0;
        for (int n = 0; n < samples; ++n) {
            int i = int(rng() % unsigned(g.dims[0])), j = int(rng() % unsigned(g.dims[1])), k = int(rng() % unsigned(g.dims[2]));
            // Half of the samples near the surface (within 3 voxels of a random vertex), where errors live.
            if (!uniform && n % 2 == 0) {
                const hp::Vec3d& v = m.mesh.vertices[rng() % m.mesh.vertices.size()];
                i = std::clamp(int((v.x - g.origin.x) / s) + int(rng() % 7) - 3, 0, g.dims[0] - 1);
                j = std::clamp(int((v.y - g.origin.y) / s) + int(rng() % 7) - 3, 0, g.dims[1] - 1);
                k = std::clamp(int((v.z - g.origin.z) / s) + int(rng() % 7) - 3, 0, g.dims[2] - 1);
            }
            const hp::Vec3d c = g.center(i, j, k);
            bool overlaps = false;
            for (const auto& t : m.mesh.triangles)
                if (hp::triangle_box_overlap(c, half, m.mesh.vertices[t[0]], m.mesh.vertices[t[1]], m.mesh.vertices[t[2]])) {
                    overlaps = true;
                    break;
                }
            const int layer = map.at(i, j, k);
            if (overlaps != (layer == 0)) ++surface_mismatch;
            if (layer != 0) {
                ++sign_checked;
                bool inside = std::abs(hp::winding_number(m.mesh, c)) > 0.5;
                if (inside != (layer > 0)) ++sign_errors;
            }
        }
        char notes[256];
        std::snprintf(notes, sizeof notes, "%dx%dx%d, fill %s; %d samples: %zu surface mismatches, %zu/%zu sign errors",
                      g.dims[0], g.dims[1], g.dims[2], hp::fill_name(map.fill_used), samples, surface_mismatch,
                      sign_errors, sign_checked);
        nlohmann::json j{{"stage", "voxelize"}, {"mesh", m.source_name + " @" + std::to_string(s).substr(0, 8)},
                         {"seconds", hp::bench::median(ours)}, {"peer_seconds", peer},
                         {"peak_rss", hp::peak_rss_bytes()}, {"notes", notes},
                         {"surface_mismatches", surface_mismatch}, {"sign_errors", sign_errors},
                         {"sign_checked", sign_checked}};
        std::cout << j.dump() << std::endl;
        return 0;
    });
}
