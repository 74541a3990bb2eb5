// bench_query STATIC_MESH MOVING_MESH --static-voxel S --moving-voxel S2 [--moving-scale F]
//             [--count N] [--seed S] [--depth D] [--levels 1-5] [--tc-budgets 20,50] [--cfm-stacks 16]
// Builds, in process, the static distance field (voxelize + distance, pad 2) and the moving
// object's pointshell (lib/pointshell on its own voxelmap + distance) and tree (K = 4, and K = 8),
// generates `count` contact poses (shallow contact, --depth voxels of the static grid), and times
// every query mode on one thread (steady clock, 100 warm-up queries). One JSON line per mode in
// make bench's format: "seconds" is the whole timed run; the notes give the per-query latency
// percentiles against the 1 ms budget and the points tested per query.
// Time-critical force direction (rows query-tc-dir): for each budget of --tc-budgets (microseconds,
// small enough to interrupt), the angle between the time-critical force and the full mode's force
// of the same pose, without and with the K = 4 tree's closest feature map (lib/cfm, --cfm-stacks
// at the root, 4 at the deepest level, store normal): median and p90 (nearest rank) over the
// poses where both forces are non-zero, how many poses got no force at all, and the median ratio
// of the force magnitudes. A third row recomputes the CFM run's forces with the sphere-geometry
// normal (-grad V at the sphere's centre, Giang & O'Sullivan 2006's baseline) for the same contacts, to show what
// the map's normals add. Interruption depends on the clock, so these figures vary from run to run.
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>

#include <tbb/global_control.h>

#include "bench_field.hpp"
#include "bench_common.hpp"
#include "cfm/cfm.hpp"
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
    int max_level = 5, cfm_stacks = 16;
    std::string tc_budgets = "20,50";
    tool.cli.add_option("STATIC", static_path)->required();
    tool.cli.add_option("MOVING", moving_path)->required();
    tool.cli.add_option("--static-voxel", static_voxel)->required();
    tool.cli.add_option("--moving-voxel", moving_voxel)->required();
    tool.cli.add_option("--moving-scale", moving_scale);
    tool.cli.add_option("--count", count);
    tool.cli.add_option("--seed", seed);
    tool.cli.add_option("--depth", depth);
    tool.cli.add_option("--levels", max_level, "segmented rows for levels 1..L");
    tool.cli.add_option("--tc-budgets", tc_budgets, "time-critical budgets (us) of the force-direction rows; empty: none");
    tool.cli.add_option("--cfm-stacks", cfm_stacks, "stacks at the root of the force-direction rows' CFM");
    return tool.run(argc, argv, [&] {
        hp::LoadedMesh sm = hp::load_mesh(static_path);
        hp::LoadedMesh mm = hp::load_mesh(moving_path, {.scale = moving_scale});
        hp::bench::Field sf = hp::bench::make_field(sm.mesh, sm.diagnostics.bbox, static_voxel);
        // Sagardia et al. 2014's case (the same mesh on both sides) builds its field once.
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
            nlohmann::json j{{"stage", stage}, {"mesh", pair}, {"seconds", total}, {"peak_rss", hp::peak_rss_bytes()},
                             {"notes", notes}, {"p50_us", st.p50}, {"p99_us", st.p99}, {"max_us", st.max}};
            std::printf("%s\n", j.dump().c_str());
            std::fflush(stdout);
        };
        // Force direction of interrupted time-critical queries against the full mode's, with and
        // without the CFM (see the header comment).
        auto direction_rows = [&](const hp::PointSphereTree& tree, const std::vector<hp::Pose>& poses) {
            const hp::MovingObject plain{pts, ps.shell.normals, &tree};
            std::vector<hp::Vec3d> reference;
            for (const hp::Pose& pose : poses) reference.push_back(hp::run_query(field, plain, pose, {}).force);
            const auto t_cfm = std::chrono::steady_clock::now();
            hp::cfm::Options co{.stacks = cfm_stacks, .min_stacks = std::min(4, cfm_stacks)};
            if (mm.diagnostics.orientation == "inward") co.outward_sign = -1;
            const hp::cfm::ClosestFeatureMap map = hp::cfm::build_cfm(mm.mesh, tree, co);
            const double cfm_s = hp::bench::seconds_since(t_cfm);
            const double n = static_cast<double>(poses.size());
            // One row: the forces of one variant against the full mode's.
            auto print_row = [&](const std::string& stage, const std::string& what, double budget,
                                 const std::vector<hp::Vec3d>& forces, const std::vector<double>& latency,
                                 std::size_t interrupted, std::size_t cfm_contacts, double queued, double untested) {
                std::vector<double> angles, ratios;
                std::size_t no_force = 0;
                double total = 0;
                for (std::size_t i = 0; i < poses.size(); ++i) {
                    total += latency[i] * 1e-6;
                    const double a = hp::length(forces[i]), b = hp::length(reference[i]);
                    if (!(b > 0)) continue;  // the full mode found no force (a touching pose)
                    if (!(a > 0)) {
                        ++no_force;
                        continue;
                    }
                    const double c = std::clamp(hp::dot(forces[i], reference[i]) / (a * b), -1.0, 1.0);
                    angles.push_back(std::acos(c) * 180 / M_PI);
                    ratios.push_back(a / b);
                }
                std::sort(angles.begin(), angles.end());
                std::sort(ratios.begin(), ratios.end());
                const double a50 = angles.empty() ? NAN : hp::nearest_rank(angles, 0.5);
                const double a90 = angles.empty() ? NAN : hp::nearest_rank(angles, 0.9);
                const double r50 = ratios.empty() ? NAN : hp::nearest_rank(ratios, 0.5);
                const hp::LatencyStats st = hp::latency_stats(latency);
                char notes[560];
                std::snprintf(notes, sizeof notes,
                              "K=%d budget %g us %s: force angle to full p50 %.1f deg, p90 %.1f deg over %zu poses, %zu "
                              "without force; |F|/|F_full| p50 %.3f; interrupted %zu/%zu, %.1f CFM contacts, %.1f of %.1f "
                              "queued clusters untested; latency p50 %.1f us, p90 %.1f us, p99 %.1f us; CFM (%d stacks) "
                              "built in %.2f s",
                              tree.k, budget, what.c_str(), a50, a90, angles.size(), no_force, r50, interrupted,
                              poses.size(), static_cast<double>(cfm_contacts) / n, untested / n, queued / n, st.p50, st.p90,
                              st.p99, cfm_stacks, cfm_s);
                nlohmann::json j{{"stage", stage}, {"mesh", pair}, {"seconds", total}, {"peak_rss", hp::peak_rss_bytes()},
                                 {"notes", notes}, {"p50_us", st.p50}, {"p90_us", st.p90}, {"p99_us", st.p99}, {"max_us", st.max},
                                 {"angle_p50_deg", a50}, {"angle_p90_deg", a90}, {"no_force", no_force}};
                std::printf("%s\n", j.dump().c_str());
                std::fflush(stdout);
            };
            std::stringstream list(tc_budgets);
            for (std::string item; std::getline(list, item, ',');) {
                const double budget = std::stod(item);
                for (bool with_cfm : {false, true}) {
                    const hp::MovingObject moving{pts, ps.shell.normals, &tree, with_cfm ? &map : nullptr};
                    hp::VpsQuery q(field, moving, {.mode = hp::QueryMode::time_critical, .budget_us = budget});
                    for (std::size_t i = 0; i < std::min<std::size_t>(100, poses.size()); ++i) q(poses[i]);
                    std::vector<double> latency;
                    std::vector<hp::Vec3d> forces, sphere_forces;
                    std::size_t interrupted = 0, cfm_contacts = 0;
                    double queued = 0, untested = 0;
                    for (const hp::Pose& pose : poses) {
                        const auto t0 = std::chrono::steady_clock::now();
                        const hp::QueryResult& r = q(pose);
                        latency.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
                        forces.push_back(r.force);
                        interrupted += r.interrupted;
                        cfm_contacts += r.cfm_contacts;
                        queued += static_cast<double>(r.queued);
                        untested += static_cast<double>(r.queued_untested);
                        // The same contacts with the sphere-geometry normal instead of the map's
                        // (Giang & O'Sullivan 2006's baseline, Dingliana & O'Sullivan 2000: along the line of the
                        // centres, here -grad V at the sphere's centre), outside the timing.
                        hp::Vec3d f = r.force;
                        const auto rot = hp::rotation_rows(pose.quaternion);
                        for (const hp::Contact& c : r.contacts) {
                            if (c.cluster < 0) continue;
                            const hp::Vec3d cb = map.spheres[static_cast<std::size_t>(c.cluster)].center;
                            const hp::Vec3d x = hp::Vec3d{hp::dot(rot[0], cb), hp::dot(rot[1], cb), hp::dot(rot[2], cb)} + pose.position;
                            f += (-hp::normalized(field.gradient(x)) - c.normal) * c.value;
                        }
                        sphere_forces.push_back(f);
                    }
                    const std::string b = item + "us";
                    if (!with_cfm) {
                        print_row("query-tc-dir " + b, "without CFM", budget, forces, latency, interrupted, 0, queued, untested);
                        continue;
                    }
                    print_row("query-tc-dir cfm " + b, "with CFM", budget, forces, latency, interrupted, cfm_contacts, queued, untested);
                    print_row("query-tc-dir sphere-normal " + b, "CFM contacts with -grad V normals", budget, sphere_forces,
                              latency, interrupted, cfm_contacts, queued, untested);
                }
            }
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
            if (!tc_budgets.empty()) direction_rows(tree, poses);
        }
        return 0;
    });
}
