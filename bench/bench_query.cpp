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

namespace {

// What the rows share: the pair's name, the static field and the moving shell.
struct Context {
    std::string pair;
    const hp::DistanceSampler* field = nullptr;
    const hp::Pointshell* shell = nullptr;
};

void print_json(const nlohmann::json& j) {
    std::printf("%s\n", j.dump().c_str());
    std::fflush(stdout);
}

// One row per query mode: latency percentiles against the 1 ms budget, points and spheres tested.
void mode_row(const Context& ctx, const std::string& stage, const hp::PointSphereTree& tree, const std::vector<hp::Pose>& poses,
              hp::QueryOptions o) {
    hp::MovingObject moving{ctx.shell->points, ctx.shell->normals, &tree};
    hp::VpsQuery q(*ctx.field, moving, o);
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
    print_json({{"stage", stage}, {"mesh", ctx.pair}, {"seconds", total}, {"peak_rss", hp::peak_rss_bytes()},
                {"notes", notes}, {"p50_us", st.p50}, {"p99_us", st.p99}, {"max_us", st.max}});
}

// A time-critical run's forces and counts on every pose.
struct TcRun {
    std::vector<double> latency;
    std::vector<hp::Vec3d> forces, sphere_forces;
    std::size_t interrupted = 0, cfm_contacts = 0;
    double queued = 0, untested = 0;
};

// The time-critical query at `budget`, with or without the map, on every pose (100 warm-up
// queries); with the map, also the same contacts' force with the sphere-geometry normal instead of
// the map's (Giang & O'Sullivan 2006's baseline, Dingliana & O'Sullivan 2000: along the line of the
// centres, here -grad V at the sphere's centre), outside the timing.
TcRun time_critical_run(const Context& ctx, const hp::PointSphereTree& tree, const hp::cfm::ClosestFeatureMap* map,
                        const std::vector<hp::Pose>& poses, double budget) {
    const hp::MovingObject moving{ctx.shell->points, ctx.shell->normals, &tree, map};
    hp::VpsQuery q(*ctx.field, moving, {.mode = hp::QueryMode::time_critical, .budget_us = budget});
    for (std::size_t i = 0; i < std::min<std::size_t>(100, poses.size()); ++i) q(poses[i]);
    TcRun run;
    for (const hp::Pose& pose : poses) {
        const auto t0 = std::chrono::steady_clock::now();
        const hp::QueryResult& r = q(pose);
        run.latency.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
        run.forces.push_back(r.force);
        run.interrupted += r.interrupted;
        run.cfm_contacts += r.cfm_contacts;
        run.queued += static_cast<double>(r.queued);
        run.untested += static_cast<double>(r.queued_untested);
        if (!map) continue;
        hp::Vec3d f = r.force;
        const auto rot = hp::rotation_rows(pose.quaternion);
        for (const hp::Contact& c : r.contacts) {
            if (c.cluster < 0) continue;
            const hp::Vec3d cb = map->spheres[static_cast<std::size_t>(c.cluster)].center;
            const hp::Vec3d x = hp::Vec3d{hp::dot(rot[0], cb), hp::dot(rot[1], cb), hp::dot(rot[2], cb)} + pose.position;
            f += (-hp::normalized(ctx.field->gradient(x)) - c.normal) * c.value;
        }
        run.sphere_forces.push_back(f);
    }
    return run;
}

// What a direction row says of the map it used.
struct MapFacts {
    int k = 0, stacks = 0;
    double build_s = 0;
};

// One row query-tc-dir: the forces of one variant against the full mode's (`reference`).
void direction_row(const Context& ctx, const std::string& stage, const std::string& what, double budget, const MapFacts& map,
                   const std::vector<hp::Vec3d>& reference, const std::vector<hp::Vec3d>& forces, const TcRun& run,
                   std::size_t cfm_contacts) {
    const std::size_t poses = reference.size();
    std::vector<double> angles, ratios;
    std::size_t no_force = 0;
    double total = 0;
    for (std::size_t i = 0; i < poses; ++i) {
        total += run.latency[i] * 1e-6;
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
    const hp::LatencyStats st = hp::latency_stats(run.latency);
    const double n = static_cast<double>(poses);
    char notes[560];
    std::snprintf(notes, sizeof notes,
                  "K=%d budget %g us %s: force angle to full p50 %.1f deg, p90 %.1f deg over %zu poses, %zu "
                  "without force; |F|/|F_full| p50 %.3f; interrupted %zu/%zu, %.1f CFM contacts, %.1f of %.1f "
                  "queued clusters untested; latency p50 %.1f us, p90 %.1f us, p99 %.1f us; CFM (%d stacks) "
                  "built in %.2f s",
                  map.k, budget, what.c_str(), a50, a90, angles.size(), no_force, r50, run.interrupted, poses,
                  static_cast<double>(cfm_contacts) / n, run.untested / n, run.queued / n, st.p50, st.p90, st.p99, map.stacks,
                  map.build_s);
    print_json({{"stage", stage}, {"mesh", ctx.pair}, {"seconds", total}, {"peak_rss", hp::peak_rss_bytes()},
                {"notes", notes}, {"p50_us", st.p50}, {"p90_us", st.p90}, {"p99_us", st.p99}, {"max_us", st.max},
                {"angle_p50_deg", a50}, {"angle_p90_deg", a90}, {"no_force", no_force}});
}

// Force direction of interrupted time-critical queries against the full mode's, with and without
// the CFM (see the header comment), for each budget of the list.
void direction_rows(const Context& ctx, const hp::TriMesh& mesh, bool inward, const hp::PointSphereTree& tree,
                    const std::vector<hp::Pose>& poses, const std::string& budgets, int cfm_stacks) {
    const hp::MovingObject plain{ctx.shell->points, ctx.shell->normals, &tree};
    std::vector<hp::Vec3d> reference;
    for (const hp::Pose& pose : poses) reference.push_back(hp::run_query(*ctx.field, plain, pose, {}).force);
    const auto t_cfm = std::chrono::steady_clock::now();
    hp::cfm::Options co{.stacks = cfm_stacks, .min_stacks = std::min(4, cfm_stacks)};
    if (inward) co.outward_sign = -1;
    const hp::cfm::ClosestFeatureMap map = hp::cfm::build_cfm(mesh, tree, co);
    const MapFacts facts{tree.k, cfm_stacks, hp::bench::seconds_since(t_cfm)};
    std::stringstream list(budgets);
    for (std::string item; std::getline(list, item, ',');) {
        const double budget = std::stod(item);
        const std::string b = item + "us";
        const TcRun plain_run = time_critical_run(ctx, tree, nullptr, poses, budget);
        direction_row(ctx, "query-tc-dir " + b, "without CFM", budget, facts, reference, plain_run.forces, plain_run, 0);
        const TcRun cfm_run = time_critical_run(ctx, tree, &map, poses, budget);
        direction_row(ctx, "query-tc-dir cfm " + b, "with CFM", budget, facts, reference, cfm_run.forces, cfm_run, cfm_run.cfm_contacts);
        direction_row(ctx, "query-tc-dir sphere-normal " + b, "CFM contacts with -grad V normals", budget, facts, reference,
                      cfm_run.sphere_forces, cfm_run, cfm_run.cfm_contacts);
    }
}

}  // namespace

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
        hp::MeshLoadOptions scaled;
        scaled.scale = moving_scale;
        hp::LoadedMesh mm = hp::load_mesh(moving_path, scaled);
        hp::bench::Field sf = hp::bench::make_field(sm.mesh, sm.diagnostics.bbox, static_voxel);
        // Sagardia et al. 2014's case (the same mesh on both sides) builds its field once.
        const bool same = static_path == moving_path && static_voxel == moving_voxel && moving_scale == 1;
        hp::bench::Field mf = same ? sf : hp::bench::make_field(mm.mesh, mm.diagnostics.bbox, moving_voxel);
        const hp::DistanceSampler field(sf.grid, std::move(sf.distance));
        const hp::PointshellResult ps = hp::sample_pointshell(mm.mesh, {mf.grid, std::move(mf.layers), std::move(mf.distance)}, {});
        const auto& pts = ps.shell.points;
        Context ctx;
        ctx.field = &field;
        ctx.shell = &ps.shell;
        ctx.pair = std::filesystem::path(static_path).filename().string() + " @" + std::to_string(static_voxel).substr(0, 6) + " vs " +
                   std::filesystem::path(moving_path).filename().string() + " " + std::to_string(pts.size()) + " pts";
        tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
        for (int k : {4, 8}) {
            hp::PointSphereTree tree = hp::build_point_sphere_tree(pts, {.k = k});
            hp::MovingObject moving{pts, ps.shell.normals, &tree};
            std::vector<hp::Pose> poses =
                hp::generate_scenario(field, moving, {.kind = hp::ScenarioKind::contact, .count = count, .seed = seed, .depth = depth});
            mode_row(ctx, "query-full", tree, poses, {.mode = hp::QueryMode::full});
            if (k != 4) continue;
            mode_row(ctx, "query-brute", tree, poses, {.mode = hp::QueryMode::brute});
            mode_row(ctx, "query-tc", tree, poses, {.mode = hp::QueryMode::time_critical, .budget_us = 1000});
            for (int level = 1; level <= std::min(max_level, tree.levels); ++level)
                mode_row(ctx, "query-seg L" + std::to_string(level), tree, poses, {.mode = hp::QueryMode::segmented, .level = level});
            if (!tc_budgets.empty())
                direction_rows(ctx, mm.mesh, mm.diagnostics.orientation == "inward", tree, poses, tc_budgets, cfm_stacks);
        }
        return 0;
    });
}
