#include "scene/scene_check.hpp"

#include <algorithm>
#include <cstdio>
#include <map>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "query/scenario.hpp"

namespace hp::scene {

namespace {

using nlohmann::json;

json vec_json(const Vec3d& v) { return json::array({v.x, v.y, v.z}); }

// placement · pose: a pose of the part's frame in the world.
Pose place(const Placement& placement, const Pose& local) {
    const auto& p = placement.quaternion;
    const auto& q = local.quaternion;
    const std::array<double, 4> r{p[0] * q[0] - p[1] * q[1] - p[2] * q[2] - p[3] * q[3],
                                  p[0] * q[1] + p[1] * q[0] + p[2] * q[3] - p[3] * q[2],
                                  p[0] * q[2] - p[1] * q[3] + p[2] * q[0] + p[3] * q[1],
                                  p[0] * q[3] + p[1] * q[2] - p[2] * q[1] + p[3] * q[0]};
    return {placement.apply(local.position), r};
}

std::string csv_text(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) {
        if (c == '"') out += '"';
        out += c;
    }
    return out + "\"";
}

}  // namespace

QueryMode parse_scene_mode(const std::string& name) {
    if (name == "full") return QueryMode::full;
    if (name == "brute") return QueryMode::brute;
    if (name == "segmented") return QueryMode::segmented;
    if (name == "time-critical") return QueryMode::time_critical;
    fail_usage("query mode '" + name + "' does not run on a scene (full, brute, segmented or time-critical)");
}

FrameSummary summarize(const FrameResult& f) {
    FrameSummary s;
    s.broad_phase_parts = f.candidates.size();
    s.parts_touched = f.parts_touched;
    s.contacts = f.contacts.size();
    s.max_penetration = f.max_penetration;
    s.force = f.force;
    s.torque = f.torque;
    s.broad_us = f.broad_us;
    s.narrow_us = f.narrow_us;
    s.frame_us = f.frame_us;
    s.pairs.reserve(f.pairs.size());
    for (const PairResult& p : f.pairs) {
        s.interrupted_pairs += p.interrupted;
        s.pairs.push_back({p.part, p.contacts, p.max_penetration, p.force, p.torque, p.spheres_tested, p.points_tested,
                           p.level_reached, p.interrupted});
    }
    return s;
}

std::vector<Pose> scene_scenario(const SceneQuery& sq, const SceneCheckSpec& spec, const Progress& progress) {
    const ScenarioKind kind = parse_scenario_kind(spec.scenario);
    if (spec.count == 0) fail_usage("the number of poses must be at least 1");
    const Scene& scene = sq.scene();
    std::vector<std::uint32_t> targets;
    if (!spec.target.empty()) {
        const std::size_t t = scene.find_part(spec.target, sq.scene_path().string() + ": --target");
        if (std::find(sq.static_parts().begin(), sq.static_parts().end(), t) == sq.static_parts().end())
            fail_usage("--target " + spec.target + ": not a static part of the scene (it is the tool, or its geometry failed)");
        targets.push_back(static_cast<std::uint32_t>(t));
    } else {
        targets = sq.static_parts();
    }
    if (targets.empty()) fail_usage("the scene has no static part to make poses against");
    const bool paths = kind == ScenarioKind::approach || kind == ScenarioKind::trajectory;
    const std::size_t steps = paths ? ScenarioOptions{}.path_steps : 1;
    const std::size_t blocks = (spec.count + steps - 1) / steps;
    // Blocks grouped by the geometry of their target; only the last block overall may be short, and
    // it is then the last of its geometry, as generate_scenario makes its last path.
    std::map<std::size_t, std::vector<std::size_t>> by_geometry;
    for (std::size_t b = 0; b < blocks; ++b) by_geometry[scene.parts[targets[b % targets.size()]].geometry].push_back(b);
    std::vector<Pose> poses(spec.count);
    std::size_t done = 0;
    for (const auto& [g, list] : by_geometry) {
        std::size_t n = 0;
        for (std::size_t b : list) n += std::min(steps, spec.count - b * steps);
        const std::uint32_t any = targets[list.front() % targets.size()];
        const ScenarioOptions options{.kind = kind, .count = n, .seed = spec.seed + 0x9E3779B97F4A7C15ULL * (g + 1),
                                      .depth = spec.depth};
        std::vector<Pose> local;
        try {
            local = generate_scenario(sq.field(any).field, sq.tool_view(), options);
        } catch (const Error& e) {
            if (e.code() != ExitCode::bad_input) throw;
            throw Error(e.code(), sq.scene_path().string() + ": part '" + scene.parts[any].name + "': " + e.what());
        }
        std::size_t k = 0;
        for (std::size_t b : list) {
            const Placement& placement = scene.parts[targets[b % targets.size()]].placement;
            for (std::size_t i = b * steps; i < std::min(spec.count, (b + 1) * steps); ++i) poses[i] = place(placement, local[k++]);
        }
        done += list.size();
        progress.report("poses", static_cast<double>(done) / static_cast<double>(blocks));
    }
    return poses;
}

SceneCheck run_scene_check(const SceneCheckSpec& spec, const Progress& progress) {
    const QueryMode mode = parse_scene_mode(spec.mode);
    if (spec.budget_tests > 0 && mode != QueryMode::time_critical)
        fail_usage("a budget in sphere tests applies only to the time-critical mode, not mode '" + spec.mode + "'");
    if (spec.poses_path.empty() && spec.scenario.empty()) fail_usage("give poses (a file) or a scenario (contact, approach, random or trajectory)");
    if (!spec.poses_path.empty() && !spec.target.empty()) fail_usage("--target chooses the part a scenario's poses are made against; not with --poses");
    if (!spec.scenario.empty()) parse_scenario_kind(spec.scenario);  // a usage error before loading
    SceneQuery sq(spec.scene_path, spec.tool,
                  {.mode = mode, .level = spec.level, .budget_us = spec.budget_us, .budget_tests = spec.budget_tests},
                  spec.threads);
    SceneCheck out;
    out.warnings = sq.warnings();
    const auto t0 = Clock::now();
    out.poses = spec.poses_path.empty() ? scene_scenario(sq, spec, progress) : read_poses(spec.poses_path);
    const double generation_s = spec.poses_path.empty() ? seconds_since(t0) : 0.0;

    const std::size_t warmup = spec.warmup ? *spec.warmup : std::min<std::size_t>(out.poses.size(), 100);
    for (std::size_t i = 0; i < warmup && !out.poses.empty(); ++i) sq.query(out.poses[i % out.poses.size()]);
    out.frames.reserve(out.poses.size());
    for (const Pose& p : out.poses) out.frames.push_back(summarize(sq.query(p)));

    std::vector<double> broad, narrow, frame, in_broad, touched, contacts;
    std::size_t over = 0, with_contact = 0, interrupted = 0;
    for (const FrameSummary& f : out.frames) {
        broad.push_back(f.broad_us);
        narrow.push_back(f.narrow_us);
        frame.push_back(f.frame_us);
        in_broad.push_back(static_cast<double>(f.broad_phase_parts));
        touched.push_back(static_cast<double>(f.parts_touched));
        contacts.push_back(static_cast<double>(f.contacts));
        over += f.frame_us > spec.budget_us;
        with_contact += f.contacts > 0;
        interrupted += f.interrupted_pairs;
    }
    const LatencyStats frame_stats = latency_stats(frame);
    const double n = std::max<double>(1, static_cast<double>(out.frames.size()));
    const Scene& scene = sq.scene();
    json& r = out.report;
    r["scene"] = spec.scene_path.string();
    r["tool"] = {{"part", sq.tool_part() ? json(scene.parts[*sq.tool_part()].name) : json(nullptr)},
                 {"file", sq.tool_file().string()},
                 {"points", sq.tool().points.size()},
                 {"clusters", sq.tool().tree.clusters.size()},
                 {"radius", sq.tool_radius()}};
    r["parts"] = scene.parts.size();
    r["static_parts"] = sq.static_parts().size();
    r["geometries_loaded"] = sq.geometries_loaded();
    r["field_bytes"] = sq.memory_bytes();
    r["load_seconds"] = sq.load_seconds();
    const LoadTimes& lt = sq.load_times();
    r["load"] = {{"verify_seconds", lt.verify}, {"fields_seconds", lt.fields}, {"tool_seconds", lt.tool}, {"reach_seconds", lt.reach}};
    r["mode"] = spec.mode;
    r["level"] = mode == QueryMode::segmented ? json(spec.level) : json(nullptr);
    r["budget_us"] = spec.budget_us;
    r["budget_tests"] = spec.budget_tests > 0 ? json(spec.budget_tests) : json(nullptr);
    r["threads"] = sq.threads();
    r["poses"] = spec.poses_path.empty()
                     ? json{{"scenario", spec.scenario}, {"target", spec.target.empty() ? json(nullptr) : json(spec.target)},
                            {"seed", spec.seed}, {"count", spec.count}, {"depth", spec.depth}, {"generation_seconds", generation_s}}
                     : json{{"file", spec.poses_path.string()}};
    r["frames"] = out.frames.size();
    r["warmup"] = warmup;
    r["broad_phase_parts"] = to_json(latency_stats(in_broad));
    r["parts_touched"] = to_json(latency_stats(touched));
    r["contacts"] = to_json(latency_stats(contacts));
    r["broad_phase_us"] = to_json(latency_stats(broad));
    r["narrow_phase_us"] = to_json(latency_stats(narrow));
    r["frame_us"] = to_json(frame_stats);
    r["frames_with_contact"] = with_contact;
    r["interrupted_pairs"] = interrupted;
    r["over_budget"] = over;
    r["over_budget_fraction"] = static_cast<double>(over) / n;
    r["criterion"] = spec.max_over_budget >= 0 ? "over_budget_fraction <= " + std::to_string(spec.max_over_budget)
                                               : std::string("frame p99 <= budget");
    out.pass = spec.max_over_budget >= 0 ? static_cast<double>(over) / n <= spec.max_over_budget : frame_stats.p99 <= spec.budget_us;
    r["pass"] = out.pass;

    out.per_frame = json::array();
    for (const FrameSummary& f : out.frames) {
        json pairs = json::array();
        for (const PairSummary& p : f.pairs)
            pairs.push_back({{"part", scene.parts[p.part].name}, {"contacts", p.contacts}, {"max_penetration", p.max_penetration},
                             {"force", vec_json(p.force)}, {"torque", vec_json(p.torque)}, {"spheres_tested", p.spheres_tested},
                             {"points_tested", p.points_tested}, {"level_reached", p.level_reached}, {"interrupted", p.interrupted}});
        out.per_frame.push_back({{"broad_phase_parts", f.broad_phase_parts}, {"parts_touched", f.parts_touched},
                                 {"contacts", f.contacts}, {"max_penetration", f.max_penetration},
                                 {"force", vec_json(f.force)}, {"torque", vec_json(f.torque)}, {"broad_phase_us", f.broad_us},
                                 {"narrow_phase_us", f.narrow_us}, {"frame_us", f.frame_us}, {"pairs", std::move(pairs)}});
    }
    for (const ScenePart& p : scene.parts) out.part_names.push_back(p.name);
    return out;
}

json full_report(const SceneCheck& check) {
    json r = check.report;
    r["per_frame"] = check.per_frame;
    return r;
}

std::string to_csv(const SceneCheck& check) {
    const std::vector<std::string>& names = check.part_names;
    std::string out =
        "frame,part,contacts,max_penetration,fx,fy,fz,tx,ty,tz,spheres_tested,points_tested,level_reached,interrupted,"
        "broad_phase_parts,parts_touched,broad_phase_us,narrow_phase_us,frame_us\n";
    char line[640];
    auto row = [&](std::size_t i, const std::string& part, std::size_t contacts, double pen, const Vec3d& f, const Vec3d& t,
                   const std::string& tail) {
        std::snprintf(line, sizeof line, "%zu,%s,%zu,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,", i, csv_text(part).c_str(), contacts, pen,
                      f.x, f.y, f.z, t.x, t.y, t.z);
        out += line;
        out += tail;
    };
    for (std::size_t i = 0; i < check.frames.size(); ++i) {
        const FrameSummary& fr = check.frames[i];
        std::size_t spheres = 0, points = 0;
        int level = 0;
        for (const PairSummary& p : fr.pairs) {
            std::snprintf(line, sizeof line, "%zu,%zu,%d,%d,,,,,\n", p.spheres_tested, p.points_tested, p.level_reached,
                          p.interrupted ? 1 : 0);
            row(i, names.at(p.part), p.contacts, p.max_penetration, p.force, p.torque, line);
            spheres += p.spheres_tested;
            points += p.points_tested;
            level = std::max(level, p.level_reached);
        }
        std::snprintf(line, sizeof line, "%zu,%zu,%d,%zu,%zu,%zu,%.3f,%.3f,%.3f\n", spheres, points, level, fr.interrupted_pairs,
                      fr.broad_phase_parts, fr.parts_touched, fr.broad_us, fr.narrow_us, fr.frame_us);
        row(i, "*", fr.contacts, fr.max_penetration, fr.force, fr.torque, line);
    }
    return out;
}

std::string format_text(const SceneCheck& check) {
    const json& r = check.report;
    std::string out;
    char line[512];
    auto stat_line = [&](const char* label, const json& s, const char* unit, int digits) {
        std::snprintf(line, sizeof line, "%-18s p50 %.*f  p90 %.*f  p99 %.*f  max %.*f  mean %.*f%s\n", label, digits,
                      s["p50"].get<double>(), digits, s["p90"].get<double>(), digits, s["p99"].get<double>(), digits,
                      s["max"].get<double>(), digits, s["mean"].get<double>(), unit);
        out += line;
    };
    std::snprintf(line, sizeof line, "scene             %s: %zu parts, %zu static, %zu geometries loaded (%.1f MB of fields) in %.3f s\n",
                  r["scene"].get<std::string>().c_str(), r["parts"].get<std::size_t>(), r["static_parts"].get<std::size_t>(),
                  r["geometries_loaded"].get<std::size_t>(), static_cast<double>(r["field_bytes"].get<std::size_t>()) / 1e6,
                  r["load_seconds"].get<double>());
    out += line;
    const json& tool = r["tool"];
    std::snprintf(line, sizeof line, "tool              %s (%zu points, %zu clusters, radius %.6g)\n",
                  tool["part"].is_null() ? tool["file"].get<std::string>().c_str()
                                         : ("part '" + tool["part"].get<std::string>() + "'").c_str(),
                  tool["points"].get<std::size_t>(), tool["clusters"].get<std::size_t>(), tool["radius"].get<double>());
    out += line;
    const json& poses = r["poses"];
    std::snprintf(line, sizeof line, "frames            %zu (%s), mode %s, %d thread%s, warm-up %zu\n", r["frames"].get<std::size_t>(),
                  poses.contains("file") ? poses["file"].get<std::string>().c_str()
                                         : ("scenario " + poses["scenario"].get<std::string>()).c_str(),
                  r["mode"].get<std::string>().c_str(), r["threads"].get<int>(), r["threads"].get<int>() == 1 ? "" : "s",
                  r["warmup"].get<std::size_t>());
    out += line;
    stat_line("broad-phase parts", r["broad_phase_parts"], "", 1);
    stat_line("parts touched", r["parts_touched"], "", 1);
    stat_line("contacts", r["contacts"], "", 1);
    stat_line("broad phase", r["broad_phase_us"], " us", 2);
    stat_line("narrow phase", r["narrow_phase_us"], " us", 1);
    stat_line("frame", r["frame_us"], " us", 1);
    std::snprintf(line, sizeof line, "budget            %.6g us per frame: %zu of %zu frames over (%s): %s\n", r["budget_us"].get<double>(),
                  r["over_budget"].get<std::size_t>(), r["frames"].get<std::size_t>(), r["criterion"].get<std::string>().c_str(),
                  r["pass"].get<bool>() ? "PASS" : "FAIL");
    out += line;
    return out;
}

}  // namespace hp::scene
