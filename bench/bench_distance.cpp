// Benchmark of voxelize + distance against OpenVDB's meshToSignedDistanceField (full interior
// band, 3 voxels outside) on the same grid, same run, and accuracy at random voxels against the
// exact point-mesh distance (brute force over all triangles) with winding-number signs.
// Prints one JSON line for bench/run.sh.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <random>

#include "bench_common.hpp"
#include "common/tool.hpp"
#include "distance/distance.hpp"
#include "geometry/closest_point.hpp"
#include "geometry/winding.hpp"
#include "voxel/voxelize.hpp"


int main(int argc, char** argv) {
    hp::app::Tool tool("bench_distance", "Time and check voxelize + distance.", "Example:\n  bench_distance fandisk.obj --voxel-size 0.0165\n");
    std::string file;
    double s = 0;
    int runs = 3, samples = 1000;
    tool.cli.add_option("MESH", file)->required();
    tool.cli.add_option("--voxel-size", s)->required();
    tool.cli.add_option("--runs", runs);
    tool.cli.add_option("--samples", samples);
    return tool.run(argc, argv, [&] {
        hp::LoadedMesh m = hp::load_mesh(file);
        hp::GridSpec g = hp::grid_around(m.diagnostics.bbox, s, 2);
        std::vector<double> ours;
        hp::LayerMap map;
        hp::DistanceField field;
        std::vector<std::int32_t> layers;
        for (int r = 0; r < runs; ++r) {
            auto t0 = std::chrono::steady_clock::now();
            map = hp::voxelize(m.mesh, g, {});
            layers.assign(g.count(), 0);
            for (int k = 0; k < g.dims[2]; ++k)
                for (int j = 0; j < g.dims[1]; ++j)
                    for (int i = 0; i < g.dims[0]; ++i) layers[g.index(i, j, k)] = map.at(i, j, k);
            field = hp::compute_distance(m.mesh, g, layers, {});
            ours.push_back(hp::bench::seconds_since(t0));
        }
        const double peer = hp::bench::openvdb_sdf_seconds(m.mesh, g, 3.0f, std::numeric_limits<float>::max(), runs);
        std::mt19937_64 rng(2);
        double band_err = 0, far_err = 0;
        std::size_t sign_errors = 0, band_n = 0, far_n = 0;
        for (int n = 0; n < samples; ++n) {
            int i = int(rng() % unsigned(g.dims[0])), j = int(rng() % unsigned(g.dims[1])), k = int(rng() % unsigned(g.dims[2]));
            const std::size_t v = g.index(i, j, k);
            const hp::Vec3d c = g.center(i, j, k);
            double best = INFINITY;
            for (const auto& t : m.mesh.triangles)
                best = std::min(best, hp::closest_point_on_triangle(c, m.mesh.vertices[t[0]], m.mesh.vertices[t[1]], m.mesh.vertices[t[2]]).distance2);
            const double exact = std::sqrt(best);
            const double err = std::abs(std::abs(field.values[v]) - exact) / s;
            if (std::abs(layers[v]) <= 3) band_err = std::max(band_err, err), ++band_n;
            else far_err = std::max(far_err, err), ++far_n;
            const bool inside = std::abs(hp::winding_number(m.mesh, c)) > 0.5;
            if (exact > 1e-9 && inside != (field.values[v] > 0)) ++sign_errors;
        }
        char notes[256];
        std::snprintf(notes, sizeof notes, "%d samples: max err %.2g vox (band, n=%zu), %.2g vox (beyond, n=%zu); %zu sign errors",
                      samples, band_err, band_n, far_err, far_n, sign_errors);
        nlohmann::json j{{"stage", "vox+dist"}, {"mesh", m.source_name + " @" + std::to_string(s).substr(0, 8)},
                         {"seconds", hp::bench::median(ours)}, {"peer_seconds", peer}, {"peak_rss", hp::app::peak_rss_bytes()},
                         {"notes", notes}, {"band_error_voxels", band_err}, {"far_error_voxels", far_err},
                         {"sign_errors", sign_errors}};
        std::cout << j.dump() << std::endl;
        return 0;
    });
}
