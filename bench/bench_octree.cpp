// bench_octree MESH --voxel S [--count N] [--seed S] [--depth D] [--per-pose FILE] [--rerun K] [--fifo]
// Implicit sphere trees (Ruffaldi et al.) against VPS on the same poses (make bench): builds the
// mesh's voxelmap and distance field in process (pad 2), its pointshell and point-sphere tree
// (K = 4, the VPS moving object) and its octrees (surface voxels, and all solid voxels), generates
// `count` contact poses of the mesh against itself (--depth voxels: shallow contact), and times
// on one thread (100 warm-up queries) the VPS full query and the IST query with each combination
// of the one-child and side optimizations (the paper's Figure 5), the solid octree, and the
// time-critical early stops (at most 1,000 pairs, level 1, level 2), with the contacts' normals
// (-grad V) and force as haptic-query's ist mode computes them (IstResponse). Each query is timed
// by the wall clock and by the thread's CPU time, and its preemptions (involuntary context
// switches) counted, so that a slow query can be told apart as work or as the scheduler's.
// The aim's row takes the poses whose full descent finds 750 to 1,250 voxel pairs ("about 1,000
// contacts") and gives their p50/p99 with each early stop, marked met or missed against 200 us.
// One JSON line per row in make bench's format; the notes give latency p50/p99, contacts, tests
// and memory, and the paper's figure beside (under 1 ms for about 1,000 contacts, Core2 Quad
// 2.4 GHz). --per-pose writes one TSV line per row and pose; --rerun reruns each row's ten slowest
// poses alone K times (stderr); --fifo times under SCHED_FIFO when permitted (not in make bench).
#include <sched.h>
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <filesystem>
#include <string>

#include <tbb/global_control.h>

#include "bench_field.hpp"
#include "common/tool.hpp"
#include "contact/query.hpp"
#include "octree/ist.hpp"
#include "octree/octree.hpp"
#include "pointshell/pointshell.hpp"
#include "query/ist_check.hpp"
#include "query/scenario.hpp"
#include "query/timing.hpp"
#include "spheretree/tree.hpp"

namespace {

// Wall and thread CPU time and the thread's involuntary context switches (preemptions), around
// one query; the wall clock is read innermost.
struct Probe {
    double wall_us, cpu_us;
    long switches;
};
double wall_now_us() { return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
double cpu_now_us() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) * 1e-3;
}
long switches_now() {
    rusage ru{};
    getrusage(RUSAGE_THREAD, &ru);
    return ru.ru_nivcsw;
}
Probe probe_begin() {
    const long s = switches_now();
    const double c = cpu_now_us();
    return {wall_now_us(), c, s};
}
Probe probe_end() {
    const double w = wall_now_us();
    const double c = cpu_now_us();
    return {w, c, switches_now()};
}

// What every row shares: its mesh column, the poses, the field, the per-pose file and --rerun.
struct Context {
    std::string name;
    std::vector<hp::Pose> poses;
    const hp::DistanceSampler* field = nullptr;
    std::ofstream per_pose;
    int rerun = 0;
    hp::LatencyStats vps;  // the VPS row's latency on the same poses (the IST rows' ratios)
};

void emit(const Context& ctx, const std::string& stage, double seconds, const hp::LatencyStats& st, const std::string& text,
          const nlohmann::json& extra) {
    nlohmann::json j{{"stage", stage}, {"mesh", ctx.name}, {"seconds", seconds}, {"peak_rss", hp::peak_rss_bytes()},
                     {"notes", text}, {"p50_us", st.p50}, {"p99_us", st.p99}, {"max_us", st.max}};
    j.update(extra);
    std::printf("%s\n", j.dump().c_str());
    std::fflush(stdout);
}

// The surface voxels' octree and the solid voxels' octree of a voxelmap, timed; row octree-build.
struct Octrees {
    hp::octree::Octree surface, solid;
    std::size_t n_surface = 0, n_solid = 0;
};

Octrees build_octrees(const Context& ctx, const hp::GridSpec& g, const std::vector<std::int32_t>& layers) {
    std::vector<std::array<int, 3>> solid, surface;
    for (int k = 0; k < g.dims[2]; ++k)
        for (int j = 0; j < g.dims[1]; ++j)
            for (int i = 0; i < g.dims[0]; ++i) {
                const std::int32_t l = layers[g.index(i, j, k)];
                if (l >= 0) solid.push_back({i, j, k});
                if (l == 0) surface.push_back({i, j, k});
            }
    Octrees o;
    o.n_solid = solid.size();
    o.n_surface = surface.size();
    auto t0 = std::chrono::steady_clock::now();
    o.surface = hp::octree::build(surface, g.origin, g.voxel_size, true);
    const double build_surface_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    t0 = std::chrono::steady_clock::now();
    o.solid = hp::octree::build(solid, g.origin, g.voxel_size, false);
    const double build_solid_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    char notes[1024];
    std::snprintf(notes, sizeof notes,
                  "surface: %zu voxels, %zu nodes (%.2f bits per surface voxel), %.3f s; solid: %zu voxels, %zu nodes "
                  "(%.2f bits per solid voxel, %.2f per surface voxel), %.3f s",
                  o.n_surface, o.surface.nodes(), 8.0 * o.surface.nodes() / o.n_surface, build_surface_s, o.n_solid,
                  o.solid.nodes(), 8.0 * o.solid.nodes() / o.n_solid, 8.0 * o.solid.nodes() / o.n_surface, build_solid_s);
    emit(ctx, "octree-build", build_surface_s + build_solid_s, hp::LatencyStats{}, notes, nlohmann::json::object());
    return o;
}

// Row ist-vps: VPS, full mode (Sagardia et al.'s traversal), on the same poses.
hp::LatencyStats vps_row(const Context& ctx, const hp::MovingObject& moving, std::size_t field_bytes, std::size_t tree_bytes) {
    hp::VpsQuery vps(*ctx.field, moving, {.mode = hp::QueryMode::full});
    const hp::TimedRun vrun = hp::run_timed(vps, ctx.poses, 100);
    const hp::LatencyStats vst = hp::latency_stats(vrun.latency_us);
    double vtotal = 0, vcontacts = 0, vspheres = 0;
    for (std::size_t i = 0; i < ctx.poses.size(); ++i) {
        vtotal += vrun.latency_us[i] * 1e-6;
        vcontacts += static_cast<double>(vrun.results[i].contacts);
        vspheres += static_cast<double>(vrun.results[i].spheres_tested + vrun.results[i].points_tested);
    }
    const double n = static_cast<double>(ctx.poses.size());
    char notes[1024];
    std::snprintf(notes, sizeof notes,
                  "VPS full K=4: p50 %.1f us, p99 %.1f us, %.0f contacts, %.0f sphere+point tests; memory field %.1f MB + tree %.1f MB",
                  vst.p50, vst.p99, vcontacts / n, vspheres / n, field_bytes / 1048576.0, tree_bytes / 1048576.0);
    emit(ctx, "ist-vps", vtotal, vst, notes, {{"contacts", vcontacts / n}, {"memory_bytes", field_bytes + tree_bytes}});
    return vst;
}

// "About 1,000 contacts" (the aim): poses whose full descent finds 750 to 1,250 voxel pairs.
// Rows that stop early are binned by the full descent's count on the same pose (ref).
constexpr std::size_t kNearLo = 750, kNearHi = 1250;
constexpr double kAimUs = 200;

struct RowFigures {
    hp::LatencyStats wall, cpu, near_wall, near_cpu;
    std::size_t near = 0, preempted = 0, near_preempted = 0;
};

// An IST row's measurements, per pose.
struct IstSamples {
    std::vector<double> lat, cpu_us, near_lat, near_cpu;
    std::vector<long> preempted;
    std::vector<std::size_t> kk, sph, vox;
    double contacts = 0, tests = 0, vtests = 0, skipped = 0, total = 0;
    std::size_t n_pre = 0, near_pre = 0;
};

// --rerun: the row's ten slowest poses again, alone, K times each (stderr).
template <class One>
void rerun_slowest(const Context& ctx, const std::string& stage, const IstSamples& m, One&& one) {
    std::vector<std::size_t> order(ctx.poses.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return m.lat[x] > m.lat[y]; });
    for (std::size_t r = 0; r < std::min<std::size_t>(10, order.size()); ++r) {
        const std::size_t i = order[r];
        std::vector<double> again;
        for (int k = 0; k < ctx.rerun; ++k) {
            const Probe p0 = probe_begin();
            one(ctx.poses[i]);
            again.push_back(probe_end().wall_us - p0.wall_us);
        }
        std::sort(again.begin(), again.end());
        std::fprintf(stderr, "%s pose %zu: %.1f us (cpu %.1f, %ld preemptions), %zu contacts, %zu+%zu tests; alone x%d: min %.1f median %.1f max %.1f us\n",
                     stage.c_str(), i, m.lat[i], m.cpu_us[i], m.preempted[i], m.kk[i], m.sph[i], m.vox[i], ctx.rerun, again.front(),
                     again[again.size() / 2], again.back());
    }
}

// One IST row: the octree against itself on every pose (100 warm-up queries), with the contacts'
// normals and force as haptic-query's ist mode computes them.
RowFigures ist_row(Context& ctx, const std::string& stage, const hp::octree::Octree& t, hp::octree::IstOptions o,
                   std::size_t voxels_for_bits, std::vector<std::size_t>* full_counts, const std::vector<std::size_t>* ref) {
    hp::octree::IstQuery q(t, t, o);
    hp::IstResponse respond(*ctx.field);
    auto one = [&](const hp::Pose& pose) {
        const auto& c = q({hp::rotation_rows(pose.quaternion), pose.position});
        const hp::IstForce f = respond(c, pose.position);
        return c.size() + (f.force.x > 1e300 ? 1 : 0);
    };
    const std::vector<hp::Pose>& poses = ctx.poses;
    for (std::size_t i = 0; i < std::min<std::size_t>(100, poses.size()); ++i) one(poses[i]);
    IstSamples m;
    for (std::size_t i = 0; i < poses.size(); ++i) {
        const Probe p0 = probe_begin();
        const std::size_t k = one(poses[i]);
        const Probe p1 = probe_end();
        const double us = p1.wall_us - p0.wall_us;
        m.cpu_us.push_back(p1.cpu_us - p0.cpu_us);
        m.preempted.push_back(p1.switches - p0.switches);
        m.kk.push_back(k);
        m.sph.push_back(q.stats().sphere_tests);
        m.vox.push_back(q.stats().voxel_tests);
        if (ctx.per_pose)
            ctx.per_pose << stage << '\t' << i << '\t' << us << '\t' << m.cpu_us.back() << '\t' << m.preempted.back() << '\t' << k
                         << '\t' << q.stats().sphere_tests << '\t' << q.stats().voxel_tests << '\n';
        m.lat.push_back(us);
        m.n_pre += m.preempted.back() > 0;
        const std::size_t full = ref ? (*ref)[i] : k;
        if (full >= kNearLo && full <= kNearHi) {
            m.near_lat.push_back(us);
            m.near_cpu.push_back(m.cpu_us.back());
            m.near_pre += m.preempted.back() > 0;
        }
        m.total += us * 1e-6;
        m.contacts += static_cast<double>(k);
        m.tests += static_cast<double>(q.stats().sphere_tests);
        m.vtests += static_cast<double>(q.stats().voxel_tests);
        m.skipped += static_cast<double>(q.stats().skipped);
    }
    if (full_counts) *full_counts = m.kk;
    if (ctx.rerun > 0) rerun_slowest(ctx, stage, m, one);
    RowFigures f{hp::latency_stats(m.lat), hp::latency_stats(m.cpu_us), hp::latency_stats(m.near_lat), hp::latency_stats(m.near_cpu),
                 m.near_lat.size(), m.n_pre, m.near_pre};
    const double bits = 8.0 * static_cast<double>(t.nodes()) / static_cast<double>(voxels_for_bits);
    const double n = static_cast<double>(poses.size());
    const hp::LatencyStats& vst = ctx.vps;
    char notes[1024];
    std::snprintf(notes, sizeof notes,
                  "p50 %.1f us, p99 %.1f us (VPS %.2fx / %.2fx; thread CPU p50 %.1f, p99 %.1f us; %zu of %zu queries preempted), "
                  "%.0f contacts%s, %.0f sphere + %.0f voxel tests, %.0f skipped; "
                  "%zu poses with %zu-%zu contacts: p50 %.1f us, p99 %.1f us (CPU p99 %.1f us, %zu preempted); "
                  "octree %.1f KB, %.2f bits per surface voxel; paper: < 1 ms at ~1000 contacts",
                  f.wall.p50, f.wall.p99, f.wall.p50 / vst.p50, f.wall.p99 / vst.p99, f.cpu.p50, f.cpu.p99, m.n_pre, poses.size(),
                  m.contacts / n, o.stop_level > 0 || o.max_contacts > 0 ? " (node pairs where stopped)" : "", m.tests / n,
                  m.vtests / n, m.skipped / n, f.near, kNearLo, kNearHi, f.near_wall.p50, f.near_wall.p99, f.near_cpu.p99,
                  m.near_pre, static_cast<double>(t.nodes()) / 1024.0, bits);
    emit(ctx, stage, m.total, f.wall, notes,
         {{"contacts", m.contacts / n}, {"sphere_tests", m.tests / n}, {"voxel_tests", m.vtests / n},
          {"octree_bytes", t.nodes()}, {"ratio_p99_vps", f.wall.p99 / vst.p99},
          {"cpu_p50_us", f.cpu.p50}, {"cpu_p99_us", f.cpu.p99}, {"preempted", m.n_pre},
          {"poses_near_1000", f.near}, {"near_1000_p50_us", f.near_wall.p50}, {"near_1000_p99_us", f.near_wall.p99},
          {"near_1000_cpu_p99_us", f.near_cpu.p99}, {"near_1000_preempted", m.near_pre}});
    return f;
}

// The aim, answered directly: p99 at about 1,000 contacts, wall clock and thread CPU time, with
// each early stop.
void aim_row(const Context& ctx, const RowFigures& main, const RowFigures& cap, const RowFigures& l1, const RowFigures& l2,
             const std::string& sched) {
    auto mark = [&](double us) { return us < kAimUs ? "met" : "missed"; };
    char notes[1024];
    std::snprintf(notes, sizeof notes,
                  "aim: IST p99 < %.0f us for about 1000 contacts; %zu poses with %zu-%zu contacts (ist surface): wall p50 %.1f, "
                  "p99 %.1f us: %s (%zu preempted); thread CPU p99 %.1f us: %s; early stops on the same poses, wall / CPU p99: "
                  "max 1000 pairs %.1f / %.1f us (%s / %s), level 1 %.1f / %.1f us (%s / %s), level 2 %.1f / %.1f us (%s / %s); "
                  "over all %zu poses: wall p99 %.1f us, CPU p99 %.1f us; %s",
                  kAimUs, main.near, kNearLo, kNearHi, main.near_wall.p50, main.near_wall.p99, mark(main.near_wall.p99),
                  main.near_preempted, main.near_cpu.p99, mark(main.near_cpu.p99), cap.near_wall.p99, cap.near_cpu.p99,
                  mark(cap.near_wall.p99), mark(cap.near_cpu.p99), l1.near_wall.p99, l1.near_cpu.p99, mark(l1.near_wall.p99),
                  mark(l1.near_cpu.p99), l2.near_wall.p99, l2.near_cpu.p99, mark(l2.near_wall.p99), mark(l2.near_cpu.p99),
                  ctx.poses.size(), main.wall.p99, main.cpu.p99, sched.c_str());
    emit(ctx, "ist aim ~1000 contacts", 0, main.near_wall, notes,
         {{"aim_p99_us", kAimUs}, {"poses", main.near}, {"cpu_p99_us", main.near_cpu.p99}, {"preempted", main.near_preempted},
          {"wall_met", main.near_wall.p99 < kAimUs}, {"cpu_met", main.near_cpu.p99 < kAimUs},
          {"max1000_p99_us", cap.near_wall.p99}, {"max1000_cpu_p99_us", cap.near_cpu.p99},
          {"level1_p99_us", l1.near_wall.p99}, {"level1_cpu_p99_us", l1.near_cpu.p99},
          {"level2_p99_us", l2.near_wall.p99}, {"level2_cpu_p99_us", l2.near_cpu.p99}});
}

// --fifo: SCHED_FIFO when permitted; what the rows say of their scheduling.
std::string set_scheduling(bool fifo) {
    if (!fifo) return "normal scheduling";
    sched_param sp{};
    sp.sched_priority = 1;
    const std::string sched = sched_setscheduler(0, SCHED_FIFO, &sp) == 0 ? "SCHED_FIFO" : "normal scheduling (SCHED_FIFO refused)";
    std::fprintf(stderr, "bench_octree: %s\n", sched.c_str());
    return sched;
}

}  // namespace

int main(int argc, char** argv) {
    hp::app::Tool tool("bench_octree", "Time implicit sphere tree queries next to VPS (make bench).", "");
    std::string mesh_path, per_pose_path;
    double voxel = 0, depth = 0.5;
    std::size_t count = 1000;
    std::uint64_t seed = 1;
    bool fifo = false;
    Context ctx;
    tool.cli.add_option("MESH", mesh_path)->required();
    tool.cli.add_option("--voxel", voxel)->required();
    tool.cli.add_option("--count", count);
    tool.cli.add_option("--seed", seed);
    tool.cli.add_option("--depth", depth, "contact poses: maximum penetration in voxels");
    tool.cli.add_option("--per-pose", per_pose_path, "write one TSV line per row and pose: wall and thread CPU time, preemptions, contacts, tests");
    tool.cli.add_flag("--fifo", fifo, "time the IST rows under SCHED_FIFO (needs the privilege; not in make bench): what the queries take without preemption");
    tool.cli.add_option("--rerun", ctx.rerun, "rerun each row's 10 slowest poses alone this many times (to stderr)");
    return tool.run(argc, argv, [&] {
        hp::LoadedMesh m = hp::load_mesh(mesh_path);
        hp::bench::Field f = hp::bench::make_field(m.mesh, m.diagnostics.bbox, voxel);
        const hp::GridSpec g = f.grid;
        hp::PointshellResult ps = hp::sample_pointshell(m.mesh, {g, f.layers, f.distance}, {});
        const std::size_t field_bytes = g.count() * sizeof(double);  // lib/query/static_field.hpp: one double per voxel
        const hp::DistanceSampler field(g, std::move(f.distance));
        const auto& pts = ps.shell.points;
        const hp::PointSphereTree tree = hp::build_point_sphere_tree(pts, {.k = 4});
        std::size_t tree_bytes = pts.size() * 2 * sizeof(hp::Vec3d);  // points and normals
        for (const auto& c : tree.clusters)
            tree_bytes += sizeof(c) + (c.points.size() + c.children.size()) * sizeof(std::uint32_t);
        const hp::MovingObject moving{pts, ps.shell.normals, &tree};
        ctx.field = &field;
        ctx.poses = hp::generate_scenario(field, moving, {.kind = hp::ScenarioKind::contact, .count = count, .seed = seed, .depth = depth});
        ctx.name = std::filesystem::path(mesh_path).stem().string() + " @" + std::to_string(voxel).substr(0, 6) + " vs itself";
        tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
        if (!per_pose_path.empty()) {
            ctx.per_pose.open(per_pose_path);
            ctx.per_pose << "row\tpose\twall_us\tcpu_us\tpreemptions\tcontacts\tsphere_tests\tvoxel_tests\n";
        }
        const std::string sched = set_scheduling(fifo);
        ctx.vps = vps_row(ctx, moving, field_bytes, tree_bytes);
        const Octrees oct = build_octrees(ctx, g, f.layers);
        const std::size_t ns = oct.n_surface;
        std::vector<std::size_t> full_surface, full_solid;
        const RowFigures main = ist_row(ctx, "ist surface", oct.surface, {.one_child = true, .side = true}, ns, &full_surface, nullptr);
        ist_row(ctx, "ist surface -1child", oct.surface, {.one_child = false, .side = true}, ns, nullptr, nullptr);
        ist_row(ctx, "ist surface -side", oct.surface, {.one_child = true, .side = false}, ns, nullptr, nullptr);
        ist_row(ctx, "ist surface -both", oct.surface, {.one_child = false, .side = false}, ns, nullptr, nullptr);
        ist_row(ctx, "ist solid", oct.solid, {.one_child = true, .side = true}, ns, &full_solid, nullptr);
        // Time-critical early stops on the same poses: the p99 they buy.
        const RowFigures cap = ist_row(ctx, "ist surface max 1000", oct.surface, {.one_child = true, .side = true, .max_contacts = 1000},
                                       ns, nullptr, &full_surface);
        const RowFigures l1 = ist_row(ctx, "ist surface L1", oct.surface, {.one_child = true, .side = true, .stop_level = 1}, ns,
                                      nullptr, &full_surface);
        const RowFigures l2 = ist_row(ctx, "ist surface L2", oct.surface, {.one_child = true, .side = true, .stop_level = 2}, ns,
                                      nullptr, &full_surface);
        aim_row(ctx, main, cap, l1, l2, sched);
        return 0;
    });
}
