// Benchmark of the pointshell stage (Sagardia et al. 2014, section 2.1.2) on a mesh at a voxel size: builds the
// voxelmap and distance field with the library, times sample_pointshell (median of runs), and
// checks the stage's targets with references that do not use the sampler:
//   on mesh      the BVH's exact closest point to each point: distance <= 1e-5 of the bbox diagonal;
//   normals      angle to the true inward surface normal (the angle-weighted pseudo-normal of the
//                closest feature, the BVH's answer, oriented by the mesh's signed volume): median
//                <= 1 deg (surface), <= 5 deg (gradient);
//   spacing      nearest-neighbour distance >= 0.3 alpha*s everywhere;
//   coverage     sampled surface points within 1.5 alpha*s of a shell point.
// Prints one JSON line per normal mode for bench/run.sh; the paper reports 35,596 points for its
// bunny at 306 x 305 x 282 voxels and "under 20 s".
#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <iostream>

#include "bench_common.hpp"
#include "common/tool.hpp"
#include "distance/distance.hpp"
#include "geometry/bvh.hpp"
#include "geometry/pseudo_normals.hpp"
#include "pointshell/pointshell.hpp"
#include "voxel/voxelize.hpp"

int main(int argc, char** argv) {
    hp::app::Tool tool("bench_pointshell", "Time and check the pointshell sampling.",
                       "Example:\n  bench_pointshell stanford-bunny.obj --voxel-size 0.0005 --runs 5\n");
    std::string file;
    double s = 0, alpha = std::sqrt(2.0);
    int runs = 3;
    tool.cli.add_option("MESH", file)->required();
    tool.cli.add_option("--voxel-size", s)->required();
    tool.cli.add_option("--alpha", alpha);
    tool.cli.add_option("--runs", runs);
    return tool.run(argc, argv, [&] {
        hp::LoadedMesh m = hp::load_mesh(file);
        const hp::GridSpec g = hp::grid_around(m.diagnostics.bbox, s, 2);
        hp::ShellField field;
        field.grid = g;
        field.layers = hp::voxelize(m.mesh, g, {}).values();
        field.distance = hp::compute_distance(m.mesh, g, field.layers, {}).values;

        const hp::TriangleBvh bvh(m.mesh);
        const hp::PseudoNormals pseudo(m.mesh);
        const double outward = m.diagnostics.signed_volume >= 0 ? 1.0 : -1.0;
        const double diag = m.diagnostics.bbox.diagonal(), as = alpha * s;
        for (auto mode : {hp::ShellNormals::gradient, hp::ShellNormals::surface}) {
            hp::PointshellOptions opt;
            opt.alpha = alpha;
            opt.normals = mode;
            std::vector<double> times, cpu;
            hp::PointshellResult r;
            for (int run = 0; run < runs; ++run) {
                hp::ShellField copy = field;  // the sampler takes its field by value; copying is not timed
                const auto t0 = std::chrono::steady_clock::now();
                const std::clock_t c0 = std::clock();
                r = hp::sample_pointshell(m.mesh, std::move(copy), opt);
                times.push_back(hp::bench::seconds_since(t0));
                cpu.push_back(static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC);
            }
            const auto& pts = r.shell.points;
            double off_mesh = 0;
            std::vector<double> angles(pts.size());
            for (std::size_t i = 0; i < pts.size(); ++i) {
                const hp::MeshHit hit = bvh.closest(pts[i]);
                off_mesh = std::max(off_mesh, std::sqrt(hit.closest.distance2));
                const hp::Vec3d truth = pseudo.at(hit.triangle, hit.closest) * -outward;
                angles[i] = std::acos(std::clamp(hp::dot(truth, r.shell.normals[i]), -1.0, 1.0)) * 180 / M_PI;
            }
            std::sort(angles.begin(), angles.end());
            const double median_angle = angles.empty() ? 0 : angles[angles.size() / 2];
            const std::size_t beyond_90 = static_cast<std::size_t>(angles.end() - std::upper_bound(angles.begin(), angles.end(), 90.0));
            const hp::SpacingStats sp = hp::nearest_neighbour_spacing(pts);
            const hp::CoverageStats cov = hp::sampled_coverage(m.mesh, pts);
            const double angle_target = mode == hp::ShellNormals::surface ? 1.0 : 5.0;
            const bool ok = off_mesh <= 1e-5 * diag && median_angle <= angle_target && sp.min >= 0.3 * as &&
                            cov.max <= 1.5 * as;
            char notes[512];
            std::snprintf(notes, sizeof notes,
                          "%zu pts (paper 35,596), %s normals: median %.2f deg (<= %.0f), %zu > 90 deg; NN min %.2f "
                          "alpha*s (>= 0.3), median %.2f; coverage %.2f alpha*s (<= 1.5); off mesh %.1e diag; cpu %.2f s; paper < 20 s; %s",
                          pts.size(), hp::shell_normals_name(mode), median_angle, angle_target, beyond_90, sp.min / as,
                          sp.median / as, cov.max / as, off_mesh / diag, hp::bench::median(cpu), ok ? "targets met" : "TARGET MISSED");
            nlohmann::json j{{"stage", "pointshell"},
                             {"mesh", m.source_name + " @" + std::to_string(s).substr(0, 8)},
                             {"seconds", hp::bench::median(times)},
                             {"cpu_seconds", hp::bench::median(cpu)},  // all threads; wall time suffers on a loaded machine
                             {"peak_rss", hp::peak_rss_bytes()},
                             {"notes", notes},
                             {"normals", hp::shell_normals_name(mode)},
                             {"points", pts.size()},
                             {"grid", {g.dims[0], g.dims[1], g.dims[2]}},
                             {"median_angle_deg", median_angle},
                             {"spacing_min_alpha_s", sp.min / as},
                             {"coverage_max_alpha_s", cov.max / as},
                             {"off_mesh_max", off_mesh},
                             {"targets_met", ok}};
            std::cout << j.dump() << std::endl;
        }
        return 0;
    });
}
