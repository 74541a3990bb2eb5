// Benchmark of the geometry kernels on a real mesh: BVH build, exact closest-point queries at
// the voxel centres within --band voxels of the surface (or --all), raster order, each query
// bounded by the distance to the previous voxel's closest triangle, and the fast winding number at every voxel
// (or every `--stride`-th along each axis) against the exact sum at random voxels.
// Prints one JSON line per row for bench/run.sh.
#include <atomic>
#include <chrono>
#include <cmath>
#include <iostream>
#include <random>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>

#include "bench_common.hpp"
#include "common/tool.hpp"
#include "geometry/bvh.hpp"
#include "geometry/winding.hpp"
#include "voxel/voxelize.hpp"

int main(int argc, char** argv) {
    hp::app::Tool tool("bench_geometry", "Time the BVH closest-point query and the fast winding number.",
                       "Example:\n  bench_geometry stanford-bunny.obj --voxel-size 0.0005\n");
    std::string file;
    double s = 0, beta = 2.0;
    int stride = 1, samples = 200, band = 3;
    bool all = false;
    tool.cli.add_option("MESH", file)->required();
    tool.cli.add_option("--voxel-size", s)->required();
    tool.cli.add_option("--beta", beta, "fast winding number: expansion distance / cluster radius");
    tool.cli.add_option("--band", band, "closest points: voxels with |layer| <= band");
    tool.cli.add_flag("--all", all, "closest points: every voxel");
    tool.cli.add_option("--stride", stride, "winding: every stride-th voxel along each axis");
    tool.cli.add_option("--samples", samples, "winding: random voxels checked against the exact sum");
    return tool.run(argc, argv, [&] {
        const hp::LoadedMesh m = hp::load_mesh(file);
        const hp::GridSpec g = hp::grid_around(m.diagnostics.bbox, s, 2);
        const std::string name = m.source_name + " @" + std::to_string(s).substr(0, 8);
        auto t0 = std::chrono::steady_clock::now();
        const hp::TriangleBvh bvh(m.mesh);
        const double build = hp::bench::seconds_since(t0);

        // Exact closest points at every voxel within `band` voxels of the surface (|layer| <= band
        // in the voxelmap), in raster order, rows in parallel.
        const hp::LayerMap map = hp::voxelize(m.mesh, g, {});
        t0 = std::chrono::steady_clock::now();
        const std::size_t rows = static_cast<std::size_t>(g.dims[1]) * static_cast<std::size_t>(g.dims[2]);
        std::atomic<std::size_t> queries{0};
        const double checksum = tbb::parallel_reduce(
            tbb::blocked_range<std::size_t>(0, rows), 0.0,
            [&](const tbb::blocked_range<std::size_t>& r, double acc) {
                std::size_t count = 0;
                for (std::size_t row = r.begin(); row != r.end(); ++row) {
                    const int j = static_cast<int>(row % static_cast<std::size_t>(g.dims[1])), k = static_cast<int>(row / static_cast<std::size_t>(g.dims[1]));
                    std::uint32_t prev = UINT32_MAX;
                    for (int i = 0; i < g.dims[0]; ++i) {
                        if (!all && std::abs(map.at(i, j, k)) > band) continue;
                        const hp::Vec3d c = g.center(i, j, k);
                        double bound = INFINITY;
                        if (prev != UINT32_MAX) {
                            const auto& t = m.mesh.triangles[prev];
                            bound = hp::closest_point_on_triangle(c, m.mesh.vertices[t[0]], m.mesh.vertices[t[1]], m.mesh.vertices[t[2]]).distance2;
                        }
                        const hp::MeshHit hit = bvh.closest(c, bound);
                        prev = hit.triangle;
                        acc += std::sqrt(hit.closest.distance2);
                        ++count;
                    }
                }
                queries += count;
                return acc;
            },
            std::plus<double>());
        const double query = hp::bench::seconds_since(t0);
        const double n = static_cast<double>(queries.load());
        char notes[256];
        std::snprintf(notes, sizeof notes, "%.3g queries (%s of %dx%dx%d), %.0f ns/query/thread, build %.3f s, depth %d, sum %.6g", n,
                      all ? "all voxels" : ("|layer| <= " + std::to_string(band)).c_str(), g.dims[0], g.dims[1], g.dims[2],
                      query * 2e9 / n, build, bvh.depth(), checksum);
        std::cout << nlohmann::json{{"stage", "bvh-closest"}, {"mesh", name}, {"seconds", query}, {"peak_rss", hp::peak_rss_bytes()},
                                    {"notes", notes}}.dump()
                  << std::endl;

        // Fast winding number over the grid (every stride-th voxel), then accuracy at random voxels.
        t0 = std::chrono::steady_clock::now();
        const hp::FastWinding fast(bvh, beta);
        const double wbuild = hp::bench::seconds_since(t0);
        std::vector<hp::Vec3d> points;
        for (int k = 0; k < g.dims[2]; k += stride)
            for (int j = 0; j < g.dims[1]; j += stride)
                for (int i = 0; i < g.dims[0]; i += stride) points.push_back(g.center(i, j, k));
        std::vector<double> w(points.size());
        t0 = std::chrono::steady_clock::now();
        fast.at(points, w);
        const double wtime = hp::bench::seconds_since(t0);
        std::mt19937_64 rng(3);
        double worst = 0;
        std::size_t flips = 0;
        for (int q = 0; q < samples; ++q) {
            const std::size_t idx = rng() % points.size();
            const double exact = hp::winding_number(m.mesh, points[idx]);
            worst = std::max(worst, std::abs(exact - w[idx]));
            flips += (exact > 0.5) != (w[idx] > 0.5);
        }
        std::snprintf(notes, sizeof notes, "%.3g points, %.0f ns/point/thread, build %.3f s; beta %g: worst error %.2g, %zu/%d flips",
                      double(points.size()), wtime * 2e9 / double(points.size()), wbuild, beta, worst, flips, samples);
        std::cout << nlohmann::json{{"stage", "fast-winding"}, {"mesh", name}, {"seconds", wtime}, {"peak_rss", hp::peak_rss_bytes()},
                                    {"notes", notes}}.dump()
                  << std::endl;
        return 0;
    });
}
