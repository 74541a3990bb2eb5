// Agreement of the open-mesh fills with the exact generalized winding number (the "open-mesh
// agreement table" of make bench). For one mesh and grid, the default fill (auto: hybrid on open
// meshes) and the vote fill are run; at every non-surface voxel (or at --samples uniformly drawn
// ones) the winding number is summed over all triangles here, with this file's own solid angle,
// independently of lib/geometry and of the fills. A voxel counts where the winding number is
// decisive, ||w| - 1/2| > 0.1; agreement is inside (layer > 0) == |w| > 1/2 there.
// Prints one JSON line per fill for bench/run.sh.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cmath>
#include <iostream>
#include <numbers>
#include <random>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_reduce.h>

#include "bench_common.hpp"
#include "common/tool.hpp"
#include "geometry/winding.hpp"
#include "voxel/voxelize.hpp"

namespace {

// Signed solid angle of triangle abc at p (Van Oosterom & Strackee).
double solid(const hp::Vec3d& p, const hp::Vec3d& a, const hp::Vec3d& b, const hp::Vec3d& c) {
    const double ax = a.x - p.x, ay = a.y - p.y, az = a.z - p.z;
    const double bx = b.x - p.x, by = b.y - p.y, bz = b.z - p.z;
    const double cx = c.x - p.x, cy = c.y - p.y, cz = c.z - p.z;
    const double la = std::sqrt(ax * ax + ay * ay + az * az), lb = std::sqrt(bx * bx + by * by + bz * bz),
                      lc = std::sqrt(cx * cx + cy * cy + cz * cz);
    const double det = ax * (by * cz - bz * cy) - ay * (bx * cz - bz * cx) + az * (bx * cy - by * cx);
    const double den = la * lb * lc + (ax * bx + ay * by + az * bz) * lc + (bx * cx + by * cy + bz * cz) * la +
                            (cx * ax + cy * ay + cz * az) * lb;
    return 2 * std::atan2(det, den);
}

double exact_winding(const hp::TriMesh& m, const hp::Vec3d& p) {
    double s = 0;
    for (const auto& t : m.triangles) s += solid(p, m.vertices[t[0]], m.vertices[t[1]], m.vertices[t[2]]);
    return static_cast<double>(s / (4 * std::numbers::pi));
}

}  // namespace

int main(int argc, char** argv) {
    hp::app::Tool tool("bench_fill", "Agreement of the open-mesh fills with the exact winding number.",
                       "Example:\n  bench_fill half-pipe.obj --resolution 64\n"
                       "  bench_fill bunny.obj --voxel-size 0.0005 --samples 20000\n");
    std::string file;
    double s = 0;
    int resolution = 64, samples = 0, runs = 1;
    bool list = false;
    tool.cli.add_option("MESH", file)->required();
    tool.cli.add_option("--voxel-size", s, "voxel size (default: from --resolution)");
    tool.cli.add_option("--resolution", resolution, "voxels along the longest side");
    tool.cli.add_option("--samples", samples, "uniformly drawn voxels to check (0: every voxel)");
    tool.cli.add_option("--runs", runs, "fill timings: median of this many runs");
    tool.cli.add_flag("--list", list, "print every disagreeing voxel (stderr)");
    return tool.run(argc, argv, [&] {
        hp::LoadedMesh m = hp::load_mesh(file);
        const hp::Aabb box = m.diagnostics.bbox;
        if (s <= 0) s = std::max({box.size().x, box.size().y, box.size().z}) / resolution;
        const hp::GridSpec g = hp::grid_around(box, s, 2);

        // The voxels to check and their exact winding numbers (computed once for both fills).
        std::vector<std::array<int, 3>> cells;
        if (samples > 0) {
            std::mt19937_64 rng(1);
            for (int n = 0; n < samples; ++n)
                cells.push_back({int(rng() % unsigned(g.dims[0])), int(rng() % unsigned(g.dims[1])), int(rng() % unsigned(g.dims[2]))});
        } else {
            for (int k = 0; k < g.dims[2]; ++k)
                for (int j = 0; j < g.dims[1]; ++j)
                    for (int i = 0; i < g.dims[0]; ++i) cells.push_back({i, j, k});
        }
        std::vector<double> wn(cells.size());
        tbb::parallel_for(tbb::blocked_range<std::size_t>(0, cells.size(), 64), [&](const tbb::blocked_range<std::size_t>& r) {
            for (std::size_t n = r.begin(); n != r.end(); ++n)
                wn[n] = exact_winding(m.mesh, g.center(cells[n][0], cells[n][1], cells[n][2]));
        });

        const hp::WindingTree tree(m.mesh);
        for (hp::FillMethod fill : {hp::FillMethod::automatic, hp::FillMethod::vote}) {
            std::vector<double> times;
            hp::LayerMap map;
            for (int r = 0; r < runs; ++r) {
                map = hp::voxelize(m.mesh, g, {.fill = fill});
                times.push_back(map.seconds_fill);
            }
            std::size_t decisive = 0, agree = 0, checked = 0;
            for (std::size_t n = 0; n < cells.size(); ++n) {
                const int layer = map.at(cells[n][0], cells[n][1], cells[n][2]);
                if (layer == 0) continue;
                ++checked;
                const double a = std::abs(wn[n]);
                if (std::abs(a - 0.5) <= 0.1) continue;
                ++decisive;
                if ((layer > 0) == (a > 0.5)) ++agree;
                else if (list)
                    std::fprintf(stderr, "%s: voxel %d %d %d layer %d, exact w %.4f, fast w %.4f\n", hp::fill_name(map.fill_used),
                                 cells[n][0], cells[n][1], cells[n][2], layer, wn[n],
                                 tree(g.center(cells[n][0], cells[n][1], cells[n][2])));
            }
            const double pct = decisive ? 100.0 * static_cast<double>(agree) / static_cast<double>(decisive) : 100.0;
            char notes[320];
            if (map.fill_used == hp::FillMethod::hybrid)
                std::snprintf(notes, sizeof notes,
                              "%dx%dx%d, fill %s: %.3f%% of %zu decisive voxels agree (of %zu checked); rules: winding %zu, vote %zu; %zu evaluated",
                              g.dims[0], g.dims[1], g.dims[2], hp::fill_name(map.fill_used), pct, decisive, checked,
                              map.by_winding, map.by_vote, map.winding_evaluated);
            else
                std::snprintf(notes, sizeof notes, "%dx%dx%d, fill %s: %.3f%% of %zu decisive voxels agree (of %zu checked)",
                              g.dims[0], g.dims[1], g.dims[2], hp::fill_name(map.fill_used), pct, decisive, checked);
            nlohmann::json j{{"stage", std::string("fill-") + hp::fill_name(map.fill_used)},
                             {"mesh", m.source_name + " @" + std::to_string(s).substr(0, 8)},
                             {"seconds", hp::bench::median(times)},
                             {"peak_rss", hp::peak_rss_bytes()},
                             {"notes", notes},
                             {"agreement_percent", pct},
                             {"decisive", decisive},
                             {"agree", agree}};
            std::cout << j.dump() << std::endl;
        }
        return 0;
    });
}
