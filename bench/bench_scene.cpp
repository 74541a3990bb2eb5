// bench_scene: a tool against a scene of many placed parts (docs/scene.md, "Querying a scene"),
// one thread: the scene's load time, the broad phase and the frame per pose, and the same pair
// queries run alone (a fresh query per geometry, each pair timed by itself on its composed pose)
// for the frame-versus-pairs ratio. One JSON line on stdout (bench/run.sh rows), a summary on stderr.
//   bench_scene SCENE.json TOOL.hps [--count 2000] [--seed 1] [--depth 5] [--mode full]
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/cpu.hpp"
#include "core/memory.hpp"
#include "query/timing.hpp"
#include "scene/scene_check.hpp"
#include "scene/scene_query.hpp"

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: bench_scene SCENE.json TOOL.hps [--count N] [--seed S] [--depth D] [--mode M]\n");
        return 2;
    }
    hp::scene::SceneCheckSpec spec;
    spec.scene_path = argv[1];
    spec.tool.tree_file = argv[2];
    spec.poses.scenario = "contact";
    spec.poses.count = 2000;
    for (int i = 3; i + 1 < argc; i += 2) {
        const std::string k = argv[i];
        if (k == "--count") spec.poses.count = std::strtoull(argv[i + 1], nullptr, 10);
        else if (k == "--seed") spec.poses.seed = std::strtoull(argv[i + 1], nullptr, 10);
        else if (k == "--depth") spec.poses.depth = std::strtod(argv[i + 1], nullptr);
        else if (k == "--mode") spec.mode = argv[i + 1];
    }
    hp::pin_to_current_core();
    try {
        const hp::QueryOptions options{.mode = hp::scene::parse_scene_mode(spec.mode)};
        const std::size_t rss0 = hp::peak_rss_bytes();
        // CPU time as well: on a shared machine the wall clock also counts the other processes.
        auto cpu_seconds = [] {
            timespec t{};
            clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
            return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
        };
        const double cpu0 = cpu_seconds();
        hp::scene::SceneQuery sq(spec.scene_path, spec.tool, options, 1);
        const double load_cpu = cpu_seconds() - cpu0;
        const hp::scene::LoadTimes& lt = sq.load_times();
        const std::size_t rss_loaded = hp::peak_rss_bytes();
        const std::vector<hp::Pose> poses = hp::scene::scene_scenario(sq, spec);
        const hp::scene::Scene& scene = sq.scene();

        for (std::size_t i = 0; i < std::min<std::size_t>(100, poses.size()); ++i) sq.query(poses[i]);
        // Per frame also the thread's CPU time (CLOCK_THREAD_CPUTIME_ID): on a loaded machine the wall
        // clock's tail is the scheduler's, not the query's.
        auto thread_us = [] {
            timespec t{};
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
            return 1e6 * static_cast<double>(t.tv_sec) + 1e-3 * static_cast<double>(t.tv_nsec);
        };
        std::vector<double> broad, frame, narrow, pairs_alone, over, frame_cpu, pairs_cpu;
        std::vector<std::vector<std::uint32_t>> candidates(poses.size());
        std::map<std::size_t, std::size_t> touched_hist;
        std::size_t contacts = 0;
        for (std::size_t i = 0; i < poses.size(); ++i) {
            const double c0 = thread_us();
            const hp::scene::FrameResult& f = sq.query(poses[i]);
            frame_cpu.push_back(thread_us() - c0);
            broad.push_back(f.broad_us);
            narrow.push_back(f.narrow_us);
            frame.push_back(f.frame_us);
            candidates[i] = f.candidates;
            touched_hist[f.parts_touched]++;
            contacts += f.contacts.size();
        }
        // The same pairs alone: a query per geometry of its own (its own packed tree), each pair timed.
        std::map<std::size_t, std::unique_ptr<hp::VpsQuery>> alone;
        const hp::MovingObject tool = sq.tool_view();
        for (std::uint32_t p : sq.static_parts())
            if (!alone.count(scene.parts[p].geometry))
                alone[scene.parts[p].geometry] = std::make_unique<hp::VpsQuery>(sq.field(p).field, tool, options);
        auto run_pairs = [&](std::size_t i, bool timed) {
            double sum = 0, cpu = 0;
            for (std::uint32_t p : candidates[i]) {
                const hp::Pose local = hp::scene::compose_into(scene.parts[p].placement, poses[i]);
                hp::VpsQuery& q = *alone[scene.parts[p].geometry];
                const double c0 = thread_us();
                const auto t0 = std::chrono::steady_clock::now();
                q(local);
                const auto t1 = std::chrono::steady_clock::now();
                const double c1 = thread_us();
                if (timed) sum += std::chrono::duration<double, std::micro>(t1 - t0).count();
                cpu += c1 - c0;
            }
            if (timed) pairs_cpu.push_back(cpu);
            return sum;
        };
        for (std::size_t i = 0; i < std::min<std::size_t>(100, poses.size()); ++i) run_pairs(i, false);
        for (std::size_t i = 0; i < poses.size(); ++i) pairs_alone.push_back(run_pairs(i, true));
        std::vector<double> excess;  // frame - pairs alone, per frame
        for (std::size_t i = 0; i < poses.size(); ++i) excess.push_back(frame[i] - pairs_alone[i]);

        const hp::LatencyStats fc = hp::latency_stats(frame_cpu), pc = hp::latency_stats(pairs_cpu);
        const hp::LatencyStats b = hp::latency_stats(broad), fr = hp::latency_stats(frame), pa = hp::latency_stats(pairs_alone),
                               ex = hp::latency_stats(excess);
        std::vector<double> cand_n;
        for (const auto& c : candidates) cand_n.push_back(static_cast<double>(c.size()));
        const hp::LatencyStats cn = hp::latency_stats(cand_n);
        nlohmann::json hist;
        for (const auto& [k, v] : touched_hist) hist[std::to_string(k)] = v;
        const double limit = 1.1 * pa.p99 + 10;
        char notes[1536];
        std::snprintf(notes, sizeof notes,
                      "%zu parts of %zu geometries, tool %zu points, %zu contact poses, one thread: load %.3f s (CPU %.3f s: verify %.3f, "
                      "fields %.3f, tool %.3f, reach %.3f s wall); broad phase "
                      "p50 %.2f p99 %.2f us; frame p50 %.1f p99 %.1f us; the same pairs alone p50 %.1f p99 %.1f us "
                      "(target frame p99 <= 1.1 x %.1f + 10 = %.1f us: %s); frame - pairs p50 %.1f p99 %.1f us; "
                      "candidates p50 %.0f p99 %.0f max %.0f; thread CPU time: frame p50 %.1f p99 %.1f us, the pairs alone "
                      "p50 %.1f p99 %.1f us (each pair's own clock reads included)",
                      scene.parts.size(), sq.geometries_loaded(), tool.points.size(), poses.size(), sq.load_seconds(), load_cpu, lt.verify,
                      lt.fields, lt.tool, lt.reach, b.p50, b.p99,
                      fr.p50, fr.p99, pa.p50, pa.p99, pa.p99, limit, fr.p99 <= limit ? "met" : "missed", ex.p50, ex.p99, cn.p50,
                      cn.p99, cn.max, fc.p50, fc.p99, pc.p50, pc.p99);
        const nlohmann::json row{{"stage", "scene query"},
                                 {"mesh", "1000 parts"},
                                 {"seconds", sq.load_seconds()},
                                 {"peak_rss", rss_loaded},
                                 {"notes", notes},
                                 {"load_seconds", sq.load_seconds()},
                                 {"load_cpu_seconds", load_cpu},
                                 {"load", {{"verify_seconds", lt.verify}, {"fields_seconds", lt.fields}, {"tool_seconds", lt.tool},
                                           {"reach_seconds", lt.reach}}},
                                 {"field_bytes", sq.memory_bytes()},
                                 {"rss_before_load", rss0},
                                 {"broad_phase_us", hp::to_json(b)},
                                 {"frame_us", hp::to_json(fr)},
                                 {"narrow_phase_us", hp::to_json(hp::latency_stats(narrow))},
                                 {"pairs_alone_us", hp::to_json(pa)},
                                 {"frame_minus_pairs_us", hp::to_json(ex)},
                                 {"candidates", hp::to_json(cn)},
                                 {"frame_thread_cpu_us", hp::to_json(fc)},
                                 {"pairs_alone_thread_cpu_us", hp::to_json(pc)},
                                 {"parts_touched_histogram", hist},
                                 {"contacts_per_frame_mean", static_cast<double>(contacts) / static_cast<double>(poses.size())}};
        std::printf("%s\n", row.dump().c_str());
        std::fprintf(stderr, "bench_scene: %s\n", notes);
        std::fprintf(stderr, "bench_scene: parts touched per frame: %s\n", hist.dump().c_str());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_scene: %s\n", e.what());
        return 3;
    }
    return 0;
}
