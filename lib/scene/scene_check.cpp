#include "scene/scene_check.hpp"

#include <algorithm>
#include <cstdio>
#include <map>

#include "core/atomic_file.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "query/ist_check.hpp"
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
    if (const auto mode = query_mode_from_name(name)) return *mode;
    fail_usage("query mode '" + name + "' does not run on a scene (" + query_mode_list() + ")");
}

FrameSummary summarize(const FrameResult& f) {
    FrameSummary s;
    s.broad_phase_parts = f.candidates.size();
    s.parts_touched = f.parts_touched;
    s.contacts = f.contacts.size() + f.ist_contacts.size();
    s.max_penetration = f.max_penetration;
    s.force = f.force;
    s.torque = f.torque;
    s.broad_us = f.broad_us;
    s.narrow_us = f.narrow_us;
    s.frame_us = f.frame_us;
    s.pairs.reserve(f.pairs.size());
    for (const PairResult& p : f.pairs) {
        s.interrupted_pairs += p.interrupted;
        s.cfm_contacts += p.cfm_contacts;
        s.pairs.push_back({p.tool, p.part, p.contacts, p.max_penetration, p.force, p.torque, p.spheres_tested, p.points_tested,
                           p.level_reached, p.interrupted, p.cfm_contacts});
    }
    for (const ToolResult& t : f.tools)
        s.tools.push_back({t.pairs, t.parts_touched, t.contacts, t.max_penetration, t.force, t.torque});
    return s;
}

std::vector<Pose> scene_scenario(const SceneQuery& sq, const SceneCheckSpec& spec, const Progress& progress, std::size_t tool) {
    const ScenarioKind kind = parse_scenario_kind(spec.poses.scenario);
    if (spec.poses.count == 0) fail_usage("the number of poses must be at least 1");
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
    const std::size_t blocks = (spec.poses.count + steps - 1) / steps;
    // Blocks grouped by the geometry of their target; only the last block overall may be short, and
    // it is then the last of its geometry, as generate_scenario makes its last path.
    std::map<std::size_t, std::vector<std::size_t>> by_geometry;
    auto target_of = [&](std::size_t b) { return targets[(b + tool) % targets.size()]; };
    for (std::size_t b = 0; b < blocks; ++b) by_geometry[scene.parts[target_of(b)].geometry].push_back(b);
    std::vector<Pose> poses(spec.poses.count);
    std::size_t done = 0;
    for (const auto& [g, list] : by_geometry) {
        std::size_t n = 0;
        for (std::size_t b : list) n += std::min(steps, spec.poses.count - b * steps);
        const std::uint32_t any = target_of(list.front());
        const ScenarioOptions options{.kind = kind, .count = n,
                                      .seed = spec.poses.seed + 0x9E3779B97F4A7C15ULL * (g + 1) + 0xD1B54A32D192ED03ULL * tool,
                                      .depth = spec.poses.depth};
        std::vector<Pose> local;
        try {
            local = generate_scenario(sq.field(any).field, sq.tool_view(tool), options);
        } catch (const Error& e) {
            if (e.code() != ExitCode::bad_input) throw;
            throw Error(e.code(), part_where(sq.scene_path(), scene.parts[any].name) + ": " + e.what());
        }
        std::size_t k = 0;
        for (std::size_t b : list) {
            const Placement& placement = scene.parts[target_of(b)].placement;
            for (std::size_t i = b * steps; i < std::min(spec.poses.count, (b + 1) * steps); ++i) poses[i] = place(placement, local[k++]);
        }
        done += list.size();
        progress.report("poses", static_cast<double>(done) / static_cast<double>(blocks));
    }
    return poses;
}

std::vector<std::vector<Pose>> read_tool_poses(const std::filesystem::path& path, std::size_t tools) {
    const json j = json::parse(read_file(path), nullptr, false);
    if (!j.is_object() || !j.contains("tools")) {
        if (tools == 1) return {read_poses(path)};  // a plain poses file (its own messages)
        fail_input(path.string(), "expected one pose per tool and frame: {\"tools\": [{\"tool\": NAME, \"poses\": [...]}, ...]} with " +
                                      std::to_string(tools) + " tools");
    }
    const json& list = j["tools"];
    if (!list.is_array() || list.size() != tools)
        fail_input(path.string(), "\"tools\" must list " + std::to_string(tools) + " tools (one per --tool or --tool-files, in their order)");
    std::vector<std::vector<Pose>> out;
    for (std::size_t t = 0; t < tools; ++t) {
        out.push_back(poses_from_json(list[t], path.string() + ": tools[" + std::to_string(t) + "]"));
        if (out[t].size() != out[0].size())
            fail_input(path.string(), "tools[" + std::to_string(t) + "] has " + std::to_string(out[t].size()) + " poses, tools[0] " +
                                          std::to_string(out[0].size()) + " (one per frame for every tool)");
    }
    return out;
}

void write_tool_poses(const std::filesystem::path& path, const SceneCheck& check) {
    if (check.poses.size() == 1) return write_poses(path, check.poses[0]);
    json list = json::array();
    for (std::size_t t = 0; t < check.poses.size(); ++t) {
        json entry = poses_to_json(check.poses[t]);
        entry["tool"] = check.tool_names[t];
        list.push_back(std::move(entry));
    }
    write_file_atomically(path, json{{"tools", std::move(list)}}.dump(1) + "\n");
}

namespace {

json tool_json(const SceneQuery& sq, std::size_t t) {
    const auto part = sq.tool_part(t);
    json j{{"part", part ? json(sq.scene().parts[*part].name) : json(nullptr)},
           {"file", sq.tool_file(t).string()},
           {"points", sq.tool(t).points.size()},
           {"clusters", sq.tool(t).tree.clusters.size()},
           {"radius", sq.tool_radius(t)},
           {"cfm", sq.tool_cfm_file(t).empty() ? json(nullptr) : json(sq.tool_cfm_file(t).string())}};
    if (sq.tool_count() > 1) j["collides_with_tools"] = sq.tool_has_field(t);
    return j;
}

json pair_json(const SceneCheck& check, const PairSummary& p) {
    json j{{"part", check.part_names[p.part]}, {"contacts", p.contacts}, {"max_penetration", p.max_penetration},
           {"force", vec_json(p.force)}, {"torque", vec_json(p.torque)}, {"spheres_tested", p.spheres_tested},
           {"points_tested", p.points_tested}, {"level_reached", p.level_reached}, {"interrupted", p.interrupted},
           {"cfm_contacts", p.cfm_contacts}};
    if (check.tool_names.size() > 1) j["tool"] = check.tool_names[p.tool];
    return j;
}

json frame_json(const SceneCheck& check, const FrameSummary& f) {
    json pairs = json::array();
    for (const PairSummary& p : f.pairs) pairs.push_back(pair_json(check, p));
    json j{{"broad_phase_parts", f.broad_phase_parts}, {"parts_touched", f.parts_touched}, {"contacts", f.contacts},
           {"max_penetration", f.max_penetration}, {"force", vec_json(f.force)}, {"torque", vec_json(f.torque)},
           {"broad_phase_us", f.broad_us}, {"narrow_phase_us", f.narrow_us}, {"frame_us", f.frame_us},
           {"cfm_contacts", f.cfm_contacts}, {"pairs", std::move(pairs)}};
    if (check.tool_names.size() < 2) return j;
    json tools = json::array();
    for (std::size_t t = 0; t < f.tools.size(); ++t) {
        const ToolSummary& s = f.tools[t];
        tools.push_back({{"tool", check.tool_names[t]}, {"broad_phase_parts", s.broad_phase_parts}, {"parts_touched", s.parts_touched},
                         {"contacts", s.contacts}, {"max_penetration", s.max_penetration}, {"force", vec_json(s.force)},
                         {"torque", vec_json(s.torque)}});
    }
    j["tools"] = std::move(tools);
    return j;
}

// Percentiles of a count over the frames, for all tools (t < 0) or one.
json count_stats(const std::vector<FrameSummary>& frames, int t, std::size_t ToolSummary::*tool_field,
                 std::size_t FrameSummary::*frame_field) {
    std::vector<double> v;
    v.reserve(frames.size());
    for (const FrameSummary& f : frames)
        v.push_back(static_cast<double>(t < 0 ? f.*frame_field : f.tools[static_cast<std::size_t>(t)].*tool_field));
    return to_json(latency_stats(std::move(v)));
}

void add_frame_stats(SceneCheck& out, const SceneCheckSpec& spec) {
    std::vector<double> broad, narrow;
    std::size_t over = 0, with_contact = 0, interrupted = 0, cfm_contacts = 0, with_cfm = 0;
    for (const FrameSummary& f : out.frames) {
        broad.push_back(f.broad_us);
        narrow.push_back(f.narrow_us);
        out.frame_us.push_back(f.frame_us);
        over += f.frame_us > spec.budget_us;
        with_contact += f.contacts > 0;
        interrupted += f.interrupted_pairs;
        cfm_contacts += f.cfm_contacts;
        with_cfm += f.cfm_contacts > 0;
    }
    const LatencyStats frame_stats = latency_stats(out.frame_us);
    const double n = std::max<double>(1, static_cast<double>(out.frames.size()));
    json& r = out.report;
    r["broad_phase_parts"] = count_stats(out.frames, -1, nullptr, &FrameSummary::broad_phase_parts);
    r["parts_touched"] = count_stats(out.frames, -1, nullptr, &FrameSummary::parts_touched);
    r["contacts"] = count_stats(out.frames, -1, nullptr, &FrameSummary::contacts);
    r["broad_phase_us"] = to_json(latency_stats(broad));
    r["narrow_phase_us"] = to_json(latency_stats(narrow));
    r["frame_us"] = to_json(frame_stats);
    r["frames_with_contact"] = with_contact;
    r["interrupted_pairs"] = interrupted;
    r["cfm_contacts"] = cfm_contacts;
    r["frames_with_cfm_contacts"] = with_cfm;
    r["over_budget"] = over;
    r["over_budget_fraction"] = static_cast<double>(over) / n;
    r["criterion"] = spec.max_over_budget >= 0 ? "over_budget_fraction <= " + std::to_string(spec.max_over_budget)
                                               : std::string("frame p99 <= budget");
    out.pass = spec.max_over_budget >= 0 ? static_cast<double>(over) / n <= spec.max_over_budget : frame_stats.p99 <= spec.budget_us;
    r["pass"] = out.pass;
}

json tools_json(const SceneQuery& sq, const SceneCheck& out) {
    json tools = json::array();
    for (std::size_t t = 0; t < sq.tool_count(); ++t) {
        json j = tool_json(sq, t);
        const int ti = static_cast<int>(t);
        j["broad_phase_parts"] = count_stats(out.frames, ti, &ToolSummary::broad_phase_parts, nullptr);
        j["parts_touched"] = count_stats(out.frames, ti, &ToolSummary::parts_touched, nullptr);
        j["contacts"] = count_stats(out.frames, ti, &ToolSummary::contacts, nullptr);
        tools.push_back(std::move(j));
    }
    return tools;
}

// The tools of `spec`, each with its map when spec.cfm; the one outside tool gets the map file and
// the octree file given (the parts' are the scene's).
std::vector<ToolSpec> tools_with_files(const SceneCheckSpec& spec) {
    std::vector<ToolSpec> tools = spec.tools.empty() ? std::vector<ToolSpec>{spec.tool} : spec.tools;
    if (!spec.cfm && !spec.cfm_file.empty())
        fail_usage(spec.cfm_file.string() + ": a closest feature map file without asking for the maps");
    const auto outside = static_cast<std::size_t>(std::count_if(tools.begin(), tools.end(), [](const ToolSpec& t) { return t.part.empty(); }));
    for (const auto& [file, what] : {std::pair{spec.cfm_file, "closest feature map"}, std::pair{spec.moving_octree_file, "octree"}})
        if (!file.empty() && outside != 1)
            fail_usage(file.string() + ": one " + what + " file serves one outside tool (" + std::to_string(outside) +
                       " given); the parts' are the scene's files");
    for (ToolSpec& t : tools) {
        t.cfm = spec.cfm;
        if (!t.part.empty()) continue;
        t.cfm_file = spec.cfm_file;
        t.octree_file = spec.moving_octree_file;
    }
    return tools;
}

// The ist modes' spec; hp::Error(usage) for the descent's options in other modes, as for a pair.
IstSpec ist_spec(const SceneCheckSpec& spec) {
    IstSpec ist{.on = is_ist_mode(spec.mode), .brute = spec.mode == kIstModeNames[1],
                .descent = {.one_child = spec.ist_one_child, .side = spec.ist_side, .stop_level = spec.ist_level,
                            .max_contacts = spec.ist_max_contacts}};
    const bool descent = spec.ist_level > 0 || spec.ist_max_contacts > 0;
    if (!ist.on && (descent || !spec.ist_one_child || !spec.ist_side || !spec.moving_octree_file.empty()))
        fail_usage("octrees and the descent's options apply only to the modes ist and ist-brute, not mode '" + spec.mode + "'");
    if (ist.brute && descent) fail_usage("mode ist-brute tests every voxel pair: a stop level or contact count applies only to mode ist");
    if (ist.on && spec.cfm) fail_usage("a closest feature map serves only the time-critical mode, not mode '" + spec.mode + "'");
    return ist;
}

json ist_json(const SceneQuery& sq) {
    const SceneIst* ist = sq.ist();
    if (!ist) return nullptr;
    const octree::IstOptions& d = ist->spec().descent;
    json tools = json::array();
    for (std::size_t t = 0; t < sq.tool_count(); ++t)
        tools.push_back({{"file", ist->tool_file(t).string()}, {"nodes", ist->tool_octree(t).nodes()}, {"voxels", ist->tool_octree(t).voxels}});
    return {{"brute", ist->spec().brute}, {"one_child", d.one_child}, {"side", d.side}, {"stop_level", d.stop_level},
            {"max_contacts", d.max_contacts}, {"tool_octrees", std::move(tools)}};
}

std::vector<std::vector<Pose>> check_poses(const SceneQuery& sq, const SceneCheckSpec& spec, const Progress& progress) {
    if (!spec.poses.file.empty()) return read_tool_poses(spec.poses.file, sq.tool_count());
    std::vector<std::vector<Pose>> poses;
    for (std::size_t t = 0; t < sq.tool_count(); ++t) poses.push_back(scene_scenario(sq, spec, progress, t));
    return poses;
}

}  // namespace

SceneCheck run_scene_check(const SceneCheckSpec& spec, const Progress& progress) {
    const IstSpec ist = ist_spec(spec);
    const QueryMode mode = ist.on ? QueryMode::full : parse_scene_mode(spec.mode);  // ist: the broad phase's alone
    if (spec.budget_tests > 0 && mode != QueryMode::time_critical)
        fail_usage("a budget in sphere tests applies only to the time-critical mode, not mode '" + spec.mode + "'");
    spec.poses.require();
    if (!spec.poses.file.empty() && !spec.target.empty()) fail_usage("--target chooses the part a scenario's poses are made against; not with --poses");
    if (!spec.poses.scenario.empty()) parse_scenario_kind(spec.poses.scenario);  // a usage error before loading
    SceneQuery sq(spec.scene_path,
                  {.mode = mode, .level = spec.level, .budget_us = spec.budget_us, .budget_tests = spec.budget_tests},
                  tools_with_files(spec), spec.threads, ist);
    SceneCheck out;
    out.warnings = sq.warnings();
    for (std::size_t t = 0; t < sq.tool_count(); ++t) out.tool_names.push_back(sq.tool_label(t));
    const auto t0 = Clock::now();
    out.poses = check_poses(sq, spec, progress);
    const double generation_s = spec.poses.file.empty() ? seconds_since(t0) : 0.0;
    const std::size_t frames = out.poses[0].size();

    std::vector<Pose> frame_poses(sq.tool_count());
    auto at = [&](std::size_t i) -> const std::vector<Pose>& {
        for (std::size_t t = 0; t < frame_poses.size(); ++t) frame_poses[t] = out.poses[t][i];
        return frame_poses;
    };
    const std::size_t warmup = spec.warmup ? *spec.warmup : std::min<std::size_t>(frames, 100);
    for (std::size_t i = 0; i < warmup && frames > 0; ++i) sq.query(at(i % frames));
    out.frames.reserve(frames);
    for (std::size_t i = 0; i < frames; ++i) out.frames.push_back(summarize(sq.query(at(i))));

    const Scene& scene = sq.scene();
    for (const ScenePart& p : scene.parts) out.part_names.push_back(p.name);
    json& r = out.report;
    r["scene"] = spec.scene_path.string();
    if (sq.tool_count() == 1) r["tool"] = tool_json(sq, 0);
    else r["tools"] = tools_json(sq, out);
    r["parts"] = scene.parts.size();
    r["static_parts"] = sq.static_parts().size();
    r["geometries_loaded"] = sq.geometries_loaded();
    r["field_bytes"] = sq.memory_bytes();
    r["load_seconds"] = sq.load_seconds();
    const LoadTimes& lt = sq.load_times();
    r["load"] = {{"verify_seconds", lt.verify}, {"fields_seconds", lt.fields}, {"tool_seconds", lt.tool}, {"reach_seconds", lt.reach}};
    r["mode"] = spec.mode;
    r["cfm"] = spec.cfm;
    r["ist"] = ist_json(sq);
    r["level"] = mode == QueryMode::segmented ? json(spec.level) : json(nullptr);
    r["budget_us"] = spec.budget_us;
    r["budget_tests"] = spec.budget_tests > 0 ? json(spec.budget_tests) : json(nullptr);
    r["threads"] = sq.threads();
    r["poses"] = spec.poses.file.empty()
                     ? json{{"scenario", spec.poses.scenario}, {"target", spec.target.empty() ? json(nullptr) : json(spec.target)},
                            {"seed", spec.poses.seed}, {"count", spec.poses.count}, {"depth", spec.poses.depth}, {"generation_seconds", generation_s}}
                     : json{{"file", spec.poses.file.string()}};
    r["frames"] = out.frames.size();
    r["warmup"] = warmup;
    add_frame_stats(out, spec);
    out.per_frame = json::array();
    for (const FrameSummary& f : out.frames) out.per_frame.push_back(frame_json(out, f));
    return out;
}

json full_report(const SceneCheck& check) {
    json r = check.report;
    r["per_frame"] = check.per_frame;
    return r;
}

std::string to_csv(const SceneCheck& check) {
    const std::vector<std::string>& names = check.part_names;
    const bool several = check.tool_names.size() > 1;
    std::string out =
        "frame,part,contacts,max_penetration,fx,fy,fz,tx,ty,tz,spheres_tested,points_tested,level_reached,interrupted,"
        "broad_phase_parts,parts_touched,broad_phase_us,narrow_phase_us,frame_us";
    out += several ? ",tool,mode\n" : ",mode\n";
    const std::string mode = check.report.value("mode", std::string()) + (check.report.value("cfm", false) ? "+cfm" : "");
    char line[640];
    auto row = [&](std::size_t i, const std::string& part, std::size_t contacts, double pen, const Vec3d& f, const Vec3d& t,
                   const std::string& tail, const std::string& tool) {
        std::snprintf(line, sizeof line, "%zu,%s,%zu,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,", i, csv_text(part).c_str(), contacts, pen,
                      f.x, f.y, f.z, t.x, t.y, t.z);
        out += line;
        out += tail;
        out += (several ? "," + csv_text(tool) : std::string()) + "," + mode + "\n";
    };
    for (std::size_t i = 0; i < check.frames.size(); ++i) {
        const FrameSummary& fr = check.frames[i];
        std::vector<std::size_t> spheres(fr.tools.size()), points(fr.tools.size()), interrupted(fr.tools.size());
        std::vector<int> level(fr.tools.size());
        for (const PairSummary& p : fr.pairs) {
            std::snprintf(line, sizeof line, "%zu,%zu,%d,%d,,,,,", p.spheres_tested, p.points_tested, p.level_reached,
                          p.interrupted ? 1 : 0);
            row(i, names.at(p.part), p.contacts, p.max_penetration, p.force, p.torque, line, check.tool_names[p.tool]);
            spheres[p.tool] += p.spheres_tested;
            points[p.tool] += p.points_tested;
            interrupted[p.tool] += p.interrupted;
            level[p.tool] = std::max(level[p.tool], p.level_reached);
        }
        for (std::size_t t = 0; several && t < fr.tools.size(); ++t) {
            const ToolSummary& ts = fr.tools[t];
            std::snprintf(line, sizeof line, "%zu,%zu,%d,%zu,%zu,%zu,,,", spheres[t], points[t], level[t], interrupted[t],
                          ts.broad_phase_parts, ts.parts_touched);
            row(i, "*", ts.contacts, ts.max_penetration, ts.force, ts.torque, line, check.tool_names[t]);
        }
        std::size_t all_spheres = 0, all_points = 0;
        for (std::size_t t = 0; t < fr.tools.size(); ++t) {
            all_spheres += spheres[t];
            all_points += points[t];
        }
        std::snprintf(line, sizeof line, "%zu,%zu,%d,%zu,%zu,%zu,%.3f,%.3f,%.3f", all_spheres, all_points,
                      level.empty() ? 0 : *std::max_element(level.begin(), level.end()), fr.interrupted_pairs, fr.broad_phase_parts,
                      fr.parts_touched, fr.broad_us, fr.narrow_us, fr.frame_us);
        row(i, "*", fr.contacts, fr.max_penetration, fr.force, fr.torque, line, "*");
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
    for (const json& tool : r.contains("tools") ? r["tools"] : json::array({r["tool"]})) {
        std::snprintf(line, sizeof line, "tool              %s (%zu points, %zu clusters, radius %.6g)%s%s\n",
                      tool["part"].is_null() ? tool["file"].get<std::string>().c_str()
                                             : ("part '" + tool["part"].get<std::string>() + "'").c_str(),
                      tool["points"].get<std::size_t>(), tool["clusters"].get<std::size_t>(), tool["radius"].get<double>(),
                      tool["cfm"].is_null() ? "" : (", closest feature map " + tool["cfm"].get<std::string>()).c_str(),
                      !tool.contains("collides_with_tools")      ? ""
                      : tool["collides_with_tools"].get<bool>() ? ", the other tools collide with it"
                                                                 : ", no field: only the moving side");
        out += line;
        if (!tool.contains("contacts")) continue;
        stat_line("  parts touched", tool["parts_touched"], "", 1);
        stat_line("  contacts", tool["contacts"], "", 1);
    }
    const json& poses = r["poses"];
    std::snprintf(line, sizeof line, "frames            %zu (%s), mode %s, %d thread%s, warm-up %zu\n", r["frames"].get<std::size_t>(),
                  poses.contains("file") ? poses["file"].get<std::string>().c_str()
                                         : ("scenario " + poses["scenario"].get<std::string>()).c_str(),
                  (r["mode"].get<std::string>() + (r["cfm"].get<bool>() ? " with closest feature maps" : "")).c_str(), r["threads"].get<int>(), r["threads"].get<int>() == 1 ? "" : "s",
                  r["warmup"].get<std::size_t>());
    out += line;
    stat_line("broad-phase parts", r["broad_phase_parts"], "", 1);
    stat_line("parts touched", r["parts_touched"], "", 1);
    stat_line("contacts", r["contacts"], "", 1);
    stat_line("broad phase", r["broad_phase_us"], " us", 2);
    stat_line("narrow phase", r["narrow_phase_us"], " us", 1);
    stat_line("frame", r["frame_us"], " us", 1);
    if (!r["ist"].is_null()) {
        const json& ist = r["ist"];
        std::string files;
        for (const json& t : ist["tool_octrees"]) files += (files.empty() ? "" : ", ") + t["file"].get<std::string>();
        std::snprintf(line, sizeof line, "ist               the tools' octrees (%s) against the parts'; stop level %d, max contacts %zu a frame, one-child %s, side %s\n",
                      files.c_str(), ist["stop_level"].get<int>(), ist["max_contacts"].get<std::size_t>(),
                      ist["one_child"].get<bool>() ? "on" : "off", ist["side"].get<bool>() ? "on" : "off");
        out += line;
    }
    if (r["cfm"].get<bool>()) {
        std::snprintf(line, sizeof line, "cfm               %zu contacts from the tools' closest feature maps in %zu frames; %zu pairs interrupted\n",
                      r["cfm_contacts"].get<std::size_t>(), r["frames_with_cfm_contacts"].get<std::size_t>(),
                      r["interrupted_pairs"].get<std::size_t>());
        out += line;
    }
    std::snprintf(line, sizeof line, "budget            %.6g us per frame: %zu of %zu frames over (%s): %s\n", r["budget_us"].get<double>(),
                  r["over_budget"].get<std::size_t>(), r["frames"].get<std::size_t>(), r["criterion"].get<std::string>().c_str(),
                  r["pass"].get<bool>() ? "PASS" : "FAIL");
    out += line;
    return out;
}

}  // namespace hp::scene
