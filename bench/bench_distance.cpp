// Benchmark of voxelize + distance against OpenVDB's meshToSignedDistanceField (full interior
// band, 3 voxels outside) on the same grid, same run (wall and process CPU time: the CPU time is
// the steadier figure on a shared machine), and accuracy at random voxels against the exact
// point-mesh distance (brute force over all triangles) with winding-number signs, for the field
// as computed (double) and as the scaled encoding stores it (round(d * 10^6), decoded).
// With --memory, also the file size and in-memory size of each encoding (float, double, scaled)
// as haptic-distance writes them, and of the voxelmap alone.
// Prints JSON lines for bench/run.sh.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <random>

#include <tbb/parallel_for.h>

#include <unistd.h>

#include "bench_common.hpp"
#include "common/tool.hpp"
#include "distance/distance.hpp"
#include "formats/vdb.hpp"
#include "geometry/bvh.hpp"
#include "geometry/closest_point.hpp"
#include "geometry/winding.hpp"
#include "voxel/voxelize.hpp"

namespace {
double cpu_seconds() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

struct Accuracy {
    double band = 0, far = 0;  // largest error in voxels within 3 voxels of the surface / beyond
    std::size_t band_n = 0, far_n = 0, sign_errors = 0;
    void add(double value, double exact, bool inside, bool in_band, double s) {
        const double err = std::abs(std::abs(value) - exact) / s;
        if (in_band) band = std::max(band, err), ++band_n;
        else far = std::max(far, err), ++far_n;
        if (exact > 1e-9 && inside != (value > 0)) ++sign_errors;
    }
};

// Every voxel beyond the exact band (|layer| > 3) against the exact distance (BVH closest point,
// bounded by the field's own value, which is an upper bound): the largest error in voxels, how
// many voxels err by more than 0.25 voxel, and the voxels checked.
struct FullCheck {
    double max_err = 0;
    std::size_t over_quarter = 0, checked = 0, not_upper = 0;
};
FullCheck check_beyond_band(const hp::TriMesh& mesh, const hp::GridSpec& g, const std::vector<std::int32_t>& layers,
                            const std::vector<double>& values) {
    const hp::TriangleBvh bvh(mesh);
    const std::size_t nz = static_cast<std::size_t>(g.dims[2]);
    std::vector<FullCheck> per(nz);
    tbb::parallel_for(std::size_t{0}, nz, [&](std::size_t k) {
        FullCheck& c = per[k];
        for (int j = 0; j < g.dims[1]; ++j)
            for (int i = 0; i < g.dims[0]; ++i) {
                const std::size_t v = g.index(i, j, static_cast<int>(k));
                if (std::abs(layers[v]) <= 3) continue;
                const double d = std::abs(values[v]);
                const hp::MeshHit hit = bvh.closest(g.center(i, j, static_cast<int>(k)), d * d * (1 + 1e-9) + 1e-300);
                const double exact = hit.triangle == UINT32_MAX ? d : std::sqrt(hit.closest.distance2);
                if (hit.triangle == UINT32_MAX) ++c.not_upper;  // nothing within the value: below the truth
                const double err = (d - exact) / g.voxel_size;
                c.max_err = std::max(c.max_err, std::abs(err));
                c.over_quarter += err > 0.25;
                ++c.checked;
            }
    });
    FullCheck all;
    for (const FullCheck& c : per) {
        all.max_err = std::max(all.max_err, c.max_err);
        all.over_quarter += c.over_quarter, all.checked += c.checked, all.not_upper += c.not_upper;
    }
    return all;
}

// Writes the distance grid in `encoding` plus the layers grid, as haptic-distance does.
void write_field(const std::filesystem::path& path, const hp::GridSpec& g, const std::vector<double>& d,
                 const std::vector<std::int32_t>& layers, const std::string& encoding, double factor) {
    const std::size_t slice = static_cast<std::size_t>(g.dims[0]) * static_cast<std::size_t>(g.dims[1]);
    double lo = 0;
    for (double v : d) lo = std::min(lo, v);
    std::vector<hp::vdb::GridOut> grids;
    auto at = [&](int z) { return static_cast<std::size_t>(z) * slice; };
    if (encoding == "float")
        grids.push_back({"distance", hp::vdb::ValueType::float32, [&](int z, void* out) {
                             auto* o = static_cast<float*>(out);
                             for (std::size_t i = 0; i < slice; ++i) o[i] = static_cast<float>(d[at(z) + i]);
                         }, lo - g.voxel_size});
    else if (encoding == "double")
        grids.push_back({"distance", hp::vdb::ValueType::float64, [&](int z, void* out) {
                             std::copy_n(d.data() + at(z), slice, static_cast<double*>(out));
                         }, lo - g.voxel_size});
    else if (encoding == "scaled")
        grids.push_back({"distance", hp::vdb::ValueType::int32, [&](int z, void* out) {
                             auto* o = static_cast<std::int32_t*>(out);
                             for (std::size_t i = 0; i < slice; ++i) o[i] = static_cast<std::int32_t>(std::llround(d[at(z) + i] * factor));
                         }, std::round((lo - g.voxel_size) * factor)});
    grids.push_back({"layers", hp::vdb::ValueType::int32, [&](int z, void* out) {
                         std::copy_n(layers.data() + at(z), slice, static_cast<std::int32_t*>(out));
                     }, -1.0});
    nlohmann::json meta{{"kind", encoding.empty() ? "voxelmap" : "distance"}, {"encoding", encoding}};
    hp::vdb::write(path, g, grids, meta, "hapticprep bench");
}
}  // namespace

int main(int argc, char** argv) {
    hp::app::Tool tool("bench_distance", "Time and check voxelize + distance.",
                       "Example:\n  bench_distance fandisk.obj --voxel-size 0.0165\n"
                       "  bench_distance stanford-bunny.obj --voxel-size 0.0005 --memory\n");
    std::string file;
    double s = 0;
    int runs = 3, samples = 1000, precision = 6;
    bool memory = false, check_all = false;
    tool.cli.add_option("MESH", file)->required();
    tool.cli.add_option("--voxel-size", s)->required();
    tool.cli.add_option("--runs", runs);
    tool.cli.add_option("--samples", samples);
    tool.cli.add_option("--precision", precision, "P of the scaled encoding checked (default 6)");
    tool.cli.add_flag("--memory", memory, "also write each encoding and report file and in-memory sizes");
    tool.cli.add_flag("--check-all", check_all, "also check every voxel beyond the exact band against the exact distance");
    return tool.run(argc, argv, [&] {
        hp::LoadedMesh m = hp::load_mesh(file);
        hp::GridSpec g = hp::grid_around(m.diagnostics.bbox, s, 2);
        std::vector<double> ours, ours_cpu, t_surface, t_fill, t_layers, t_exact, t_prop;
        hp::LayerMap map;
        hp::DistanceField field;
        std::vector<std::int32_t> layers;
        for (int r = 0; r < runs; ++r) {
            const double c0 = cpu_seconds();
            auto t0 = std::chrono::steady_clock::now();
            map = hp::voxelize(m.mesh, g, {});
            layers = map.values();
            field = hp::compute_distance(m.mesh, g, layers, {});
            ours.push_back(hp::bench::seconds_since(t0));
            t_surface.push_back(map.seconds_surface), t_fill.push_back(map.seconds_fill), t_layers.push_back(map.seconds_layers);
            t_exact.push_back(field.seconds_exact), t_prop.push_back(field.seconds_propagate);
            ours_cpu.push_back(cpu_seconds() - c0);
        }
        map = {};
        const double c0 = cpu_seconds();
        const double peer = hp::bench::openvdb_sdf_seconds(m.mesh, g, 3.0f, std::numeric_limits<float>::max(), runs);
        const double peer_cpu = (cpu_seconds() - c0) / runs;  // mean: the helper reports only the median wall time
        double ours_cpu_mean = 0;
        for (double c : ours_cpu) ours_cpu_mean += c / runs;

        const double factor = std::pow(10.0, precision);
        std::mt19937_64 rng(2);
        Accuracy plain, scaled;
        for (int n = 0; n < samples; ++n) {
            int i = int(rng() % unsigned(g.dims[0])), j = int(rng() % unsigned(g.dims[1])), k = int(rng() % unsigned(g.dims[2]));
            const std::size_t v = g.index(i, j, k);
            const hp::Vec3d c = g.center(i, j, k);
            double best = INFINITY;
            for (const auto& t : m.mesh.triangles)
                best = std::min(best, hp::closest_point_on_triangle(c, m.mesh.vertices[t[0]], m.mesh.vertices[t[1]], m.mesh.vertices[t[2]]).distance2);
            const double exact = std::sqrt(best);
            const bool inside = std::abs(hp::winding_number(m.mesh, c)) > 0.5;
            const bool in_band = std::abs(layers[v]) <= 3;
            plain.add(field.values[v], exact, inside, in_band, s);
            // As stored by --encoding scaled (Int32) and decoded by a reader.
            const double stored = static_cast<double>(static_cast<std::int32_t>(std::llround(field.values[v] * factor)));
            scaled.add(stored / factor, exact, inside, in_band, s);
        }
        const std::string mesh = m.source_name + " @" + std::to_string(s).substr(0, 8);
        char notes[320];
        std::snprintf(notes, sizeof notes,
                      "%d samples: max err %.2g vox (band, n=%zu), %.2g vox (beyond, n=%zu); %zu sign errors; "
                      "CPU %.2f s vs OpenVDB %.2f s (ratio %.2f); %d passes",
                      samples, plain.band, plain.band_n, plain.far, plain.far_n, plain.sign_errors, ours_cpu_mean, peer_cpu,
                      ours_cpu_mean / peer_cpu, field.propagation_passes);
        nlohmann::json j{{"stage", "vox+dist"}, {"mesh", mesh}, {"seconds", hp::bench::median(ours)}, {"peer_seconds", peer},
                         {"cpu_seconds", ours_cpu_mean}, {"peer_cpu_seconds", peer_cpu}, {"peak_rss", hp::peak_rss_bytes()},
                         {"notes", notes}, {"band_error_voxels", plain.band}, {"far_error_voxels", plain.far},
                         {"sign_errors", plain.sign_errors}};
        std::cout << j.dump() << std::endl;
        std::snprintf(notes, sizeof notes, "scaled P=%d as stored: max err %.2g vox (band, n=%zu), %.2g vox (beyond, n=%zu); %zu sign errors",
                      precision, scaled.band, scaled.band_n, scaled.far, scaled.far_n, scaled.sign_errors);
        nlohmann::json js{{"stage", "dist-scaled"}, {"mesh", mesh}, {"seconds", hp::bench::median(ours)},
                          {"peak_rss", hp::peak_rss_bytes()}, {"notes", notes}, {"precision", precision},
                          {"band_error_voxels", scaled.band}, {"far_error_voxels", scaled.far}, {"sign_errors", scaled.sign_errors}};
        std::cout << js.dump() << std::endl;
        // Where the time goes (medians of the runs, wall): the voxelizer's phases and the distance's.
        using hp::bench::median;
        std::snprintf(notes, sizeof notes,
                      "phases (median wall s): surface %.2f, fill %.2f, layers %.2f; distance exact band %.2f (%zu voxels), "
                      "beyond %.2f (%d passes)",
                      median(t_surface), median(t_fill), median(t_layers), median(t_exact), field.exact_voxels, median(t_prop),
                      field.propagation_passes);
        nlohmann::json jp{{"stage", "dist-phases"}, {"mesh", mesh}, {"seconds", hp::bench::median(ours)},
                          {"peak_rss", hp::peak_rss_bytes()}, {"notes", notes},
                          {"surface_seconds", median(t_surface)}, {"fill_seconds", median(t_fill)},
                          {"layers_seconds", median(t_layers)}, {"exact_seconds", median(t_exact)},
                          {"beyond_seconds", median(t_prop)}};
        std::cout << jp.dump() << std::endl;
        if (check_all) {
            auto t1 = std::chrono::steady_clock::now();
            const FullCheck c = check_beyond_band(m.mesh, g, layers, field.values);
            std::snprintf(notes, sizeof notes,
                          "every voxel beyond the exact band (%zu) vs exact BVH: max err %.3f vox, %zu above 0.25, %zu below the truth",
                          c.checked, c.max_err, c.over_quarter, c.not_upper);
            nlohmann::json jc{{"stage", "dist-beyond"}, {"mesh", mesh}, {"seconds", hp::bench::seconds_since(t1)},
                              {"peak_rss", hp::peak_rss_bytes()}, {"notes", notes}, {"far_error_voxels", c.max_err},
                              {"over_quarter", c.over_quarter}, {"checked", c.checked}, {"below_truth", c.not_upper}};
            std::cout << jc.dump() << std::endl;
        }

        if (memory) {
            // Each encoding as haptic-distance writes it (distance + layers grids), and the
            // voxelmap alone (layers, as haptic-voxelize writes it): file size, OpenVDB tree in
            // memory (as read back), and the dense array of the distance values.
            const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                              ("hp-bench-distance-" + std::to_string(::getpid()));
            std::filesystem::create_directories(dir);
            for (std::string enc : {"", "float", "double", "scaled"}) {
                const std::filesystem::path path = dir / ((enc.empty() ? "voxelmap" : enc) + ".vdb");
                auto t0 = std::chrono::steady_clock::now();
                write_field(path, g, field.values, layers, enc, factor);
                const double secs = hp::bench::seconds_since(t0);
                const std::size_t bytes = std::filesystem::file_size(path);
                const hp::vdb::FileInfo info = hp::vdb::inspect(path, true);
                std::size_t tree = 0, layer_tree = 0;
                for (const auto& gi : info.grids) (gi.name == "distance" ? tree : layer_tree) += gi.memory_bytes;
                const std::size_t dense = g.count() * (enc == "double" ? 8 : 4);
                if (enc.empty())
                    std::snprintf(notes, sizeof notes, "voxelmap (layers): file %.2f MB, VDB tree %.2f MB in memory, dense Int32 %.1f MB",
                                  bytes / 1048576.0, layer_tree / 1048576.0, dense / 1048576.0);
                else
                    std::snprintf(notes, sizeof notes, "%s: file %.2f MB (with layers), distance VDB tree %.2f MB in memory, dense %.1f MB",
                                  enc.c_str(), bytes / 1048576.0, tree / 1048576.0, dense / 1048576.0);
                nlohmann::json jm{{"stage", "dist-memory"}, {"mesh", mesh}, {"seconds", secs}, {"peak_rss", hp::peak_rss_bytes()},
                                  {"notes", notes}, {"encoding", enc.empty() ? "voxelmap" : enc}, {"file_bytes", bytes},
                                  {"tree_bytes", enc.empty() ? layer_tree : tree}, {"layers_tree_bytes", layer_tree},
                                  {"dense_bytes", dense}};
                std::cout << jm.dump() << std::endl;
                std::filesystem::remove(path);
            }
            std::filesystem::remove_all(dir);
        }
        return 0;
    });
}
