// bench_query STATIC_MESH MOVING_MESH --static-voxel S --moving-voxel S2 [--moving-scale F]
//             [--count N] [--seed S] [--depth D] [--levels 1-5]
// Builds, in process, the static distance field (voxelize + distance, pad 2) and the moving
// object's pointshell (lib/pointshell on its own voxelmap + distance) and tree (K = 4, and K = 8),
// generates `count` contact poses (shallow contact, --depth voxels of the static grid), and times
// every query mode on one thread (steady clock, 100 warm-up queries). One JSON line per mode in
// make bench's format: "seconds" is the whole timed run; the notes give the per-query latency
// percentiles against the 1 ms budget and the points tested per query.
#include <cstdio>
#include <string>

#include <tbb/global_control.h>

#include "bench_field.hpp"
#include "bench_common.hpp"
#include "common/tool.hpp"
#include "distance/distance.hpp"
#include "pointshell/pointshell.hpp"
#include "query/scenario.hpp"
#include "query/timing.hpp"
#include "spheretree/tree.hpp"
#include "voxel/voxelize.hpp"

int main(int argc, char** argv) {
    hp::app::Tool tool("bench_query", "Time the VPS query modes (make bench).", "");
    std::string static_path, moving_path;
    double static_voxel = 0, moving_voxel = 0, moving_scale = 1, depth = 5;
    std::size_t count = 2000;
    std::uint64_t seed = 1;
    int max_level = 5;
    tool.cli.add_option("STATIC", static_path)->required();
    tool.cli.add_option("MOVING", moving_path)->required();
    tool.cli.add_option("--static-voxel", static_voxel)->required();
    tool.cli.add_option("--moving-voxel", moving_voxel)->required();
    tool.cli.add_option("--moving-scale", moving_scale);
    tool.cli.add_option("--count", count);
    tool.cli.add_option("--seed", seed);
    tool.cli.add_option("--depth", depth);
    tool.cli.add_option("--levels", max_level, "segmented rows for levels 1..L");
    return tool.run(argc, argv, [&] {
        hp::LoadedMesh sm = hp::load_mesh(static_path);
        hp::LoadedMesh mm = hp::load_mesh(moving_path, {.scale = moving_scale});
        hp::bench::Field sf = hp::bench::make_field(sm.mesh, sm.diagnostics.bbox, static_voxel);
        // The paper's case (the same mesh on both sides) builds its field once.
        const bool same = static_path == moving_path && static_voxel == moving_voxel && moving_scale == 1;
        hp::bench::Field mf = same ? sf : hp::bench::make_field(mm.mesh, mm.diagnostics.bbox, moving_voxel);
        hp::DistanceSampler field(sf.grid, std::move(sf.distance));
        hp::PointshellResult ps = hp::sample_pointshell(mm.mesh, {mf.grid, std::move(mf.layers), std::move(mf.distance)}, {});
        const auto& pts = ps.shell.points;
        const std::string pair = std::filesystem::path(static_path).filename().string() + " @" + std::to_string(static_voxel).substr(0, 6) +
                                 " vs " + std::filesystem::path(moving_path).filename().string() + " " +
                                 std::to_string(pts.size()) + " pts";

        tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
        auto row = [&](const std::string& stage, const hp::PointSphereTree& tree, const std::vector<hp::Pose>& poses,
                       hp::QueryOptions o) {
            hp::MovingObject moving{pts, ps.shell.normals, &tree};
            hp::VpsQuery q(field, moving, o);
            hp::TimedRun run = hp::run_timed(q, poses, 100);
            hp::LatencyStats st = hp::latency_stats(run.latency_us);
            double total = 0, points = 0, spheres = 0, contacts = 0;
            std::size_t over = 0;
            for (std::size_t i = 0; i < poses.size(); ++i) {
                total += run.latency_us[i] * 1e-6;
                points += static_cast<double>(run.results[i].points_tested);
                spheres += static_cast<double>(run.results[i].spheres_tested);
                contacts += static_cast<double>(run.results[i].contacts);
                over += run.latency_us[i] > 1000;
            }
            const double n = static_cast<double>(poses.size());
            char notes[256];
            std::snprintf(notes, sizeof notes, "K=%d p50 %.1f us, p99 %.1f us, max %.1f us, over 1 ms %zu/%zu, %.0f pts and %.0f spheres tested, %.1f contacts",
                          tree.k, st.p50, st.p99, st.max, over, poses.size(), points / n, spheres / n, contacts / n);
            nlohmann::json j{{"stage", stage}, {"mesh", pair}, {"seconds", total}, {"peak_rss", hp::app::peak_rss_bytes()},
                             {"notes", notes}, {"p50_us", st.p50}, {"p99_us", st.p99}, {"max_us", st.max}};
            std::printf("%s\n", j.dump().c_str());
            std::fflush(stdout);
        };
        for (int k : {4, 8}) {
            hp::PointSphereTree tree = hp::build_point_sphere_tree(pts, {.k = k});
            hp::MovingObject moving{pts, ps.shell.normals, &tree};
            std::vector<hp::Pose> poses =
                hp::generate_scenario(field, moving, {.kind = hp::ScenarioKind::contact, .count = count, .seed = seed, .depth = depth});
            row("query-full", tree, poses, {.mode = hp::QueryMode::full});
            if (k != 4) continue;
            row("query-brute", tree, poses, {.mode = hp::QueryMode::brute});
            row("query-tc", tree, poses, {.mode = hp::QueryMode::time_critical, .budget_us = 1000});
            for (int level = 1; level <= std::min(max_level, tree.levels); ++level)
                row("query-seg L" + std::to_string(level), tree, poses, {.mode = hp::QueryMode::segmented, .level = level});
        }
        return 0;
    });
}
