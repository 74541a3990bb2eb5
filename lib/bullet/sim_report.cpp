// haptic-sim's summaries and reports (sim.hpp): per method over its runs, as JSON, CSV and text.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <sstream>

#include "bullet/sim.hpp"
#include "bullet/sim_objects.hpp"

namespace hp::bullet {

using detail::median;

std::vector<MethodSummary> summarize(const std::vector<RunResult>& runs) {
    std::vector<MethodSummary> out;
    std::vector<std::vector<const RunResult*>> groups;
    for (const RunResult& r : runs) {
        std::size_t g = 0;
        while (g < out.size() && !(out[g].label == r.label && out[g].rate == r.rate && out[g].restitution == r.restitution &&
                                   out[g].count == r.count))
            ++g;
        if (g == out.size()) {
            MethodSummary s;
            s.label = r.label;
            s.method = r.method;
            s.rate = r.rate;
            s.restitution = r.restitution;
            s.count = r.count;
            s.points = r.points;
            s.parts = r.parts;
            out.push_back(s);
            groups.emplace_back();
        }
        groups[g].push_back(&r);
    }
    for (std::size_t g = 0; g < out.size(); ++g) {
        MethodSummary& s = out[g];
        std::vector<double> means, maxes, finals, pile_finals, drifts, drift_steps;
        for (const RunResult* r : groups[g]) {
            drift_steps.push_back(r->drift_step > 0 ? r->drift_step : std::numeric_limits<double>::infinity());
            pile_finals.push_back(r->final_pile_penetration);
            drifts.push_back(r->drift);
            s.max_pile_penetration = std::max(s.max_pile_penetration, r->max_pile_penetration);
            s.max_drift = std::max(s.max_drift, r->max_drift);
            means.push_back(r->mean_collision_us);
            maxes.push_back(r->max_penetration);
            finals.push_back(r->final_penetration);
            s.mean_contacts += r->mean_contacts / double(groups[g].size());
            s.mean_step_contacts += r->mean_step_contacts / double(groups[g].size());
            s.max_penetration = std::max(s.max_penetration, r->max_penetration);
            s.max_penetration_window = std::max(s.max_penetration_window, r->max_penetration_window);
            s.fell_through += r->fell_through;
        }
        s.runs = groups[g].size();
        for (double m : means) s.mean_collision_us += m / double(means.size());
        for (const RunResult* r : groups[g]) s.median_collision_us += r->median_collision_us / double(groups[g].size());
        s.median_max_penetration = median(maxes);
        s.final_penetration = median(finals);
        s.final_pile_penetration = median(pile_finals);
        s.drift = median(drifts);
        const double ds = median(drift_steps);
        s.drift_step = std::isfinite(ds) ? int(ds) : 0;
    }
    return out;
}

nlohmann::json report_json(const Scene& scene, const std::vector<RunResult>& runs, bool steps) {
    using nlohmann::json;
    auto vec = [](Vec3d v) { return json::array({v.x, v.y, v.z}); };
    json j;
    j["scene"] = {{"name", scene.name}, {"file", scene.file.string()}, {"kind", scene.source_kind}, {"steps", scene.steps},
                  {"window", json::array({scene.window_first, scene.window_last})}, {"rotations", scene.rotations},
                  {"gravity", vec(scene.gravity)}};
    json summary = json::array();
    for (const MethodSummary& s : summarize(runs)) {
        json e = {{"method", s.label}, {"kind", s.method}, {"rate", s.rate}, {"runs", s.runs},
                  {"points", s.points}, {"parts", s.parts},
                  {"mean_collision_us", s.mean_collision_us}, {"median_collision_us", s.median_collision_us},
                  {"mean_contacts", s.mean_contacts}, {"mean_step_contacts", s.mean_step_contacts},
                  {"max_penetration", s.max_penetration},
                  {"median_max_penetration", s.median_max_penetration},
                  {"max_penetration_window", s.max_penetration_window},
                  {"median_final_penetration", s.final_penetration}, {"fell_through", s.fell_through}};
        if (s.restitution >= 0) e["restitution"] = s.restitution;
        if (s.count > 0) {
            e["count"] = s.count;
            e["max_pile_penetration"] = s.max_pile_penetration;
            e["median_final_pile_penetration"] = s.final_pile_penetration;
            e["median_drift"] = s.drift;
            e["max_drift"] = s.max_drift;
            e["median_drift_step"] = s.drift_step;
        }
        summary.push_back(e);
    }
    j["summary"] = summary;
    json rs = json::array();
    for (const RunResult& r : runs) {
        json e = {{"method", r.label}, {"kind", r.method}, {"rate", r.rate}, {"points", r.points}, {"parts", r.parts},
                  {"objects", r.dynamic_objects}, {"mean_collision_us", r.mean_collision_us},
                  {"median_collision_us", r.median_collision_us}, {"mean_contacts", r.mean_contacts},
                  {"mean_step_contacts", r.mean_step_contacts},
                  {"max_penetration", r.max_penetration}, {"max_penetration_window", r.max_penetration_window},
                  {"final_penetration", r.final_penetration}, {"lowest_height", r.lowest_height},
                  {"first_contact_step", r.first_contact_step}, {"fell_through", r.fell_through},
                  {"static_moved", r.static_moved}};
        if (r.rotation >= 0) e["rotation"] = r.rotation;
        if (r.count > 0) {
            e["count"] = r.count;
            e["max_pile_penetration"] = r.max_pile_penetration;
            e["final_pile_penetration"] = r.final_pile_penetration;
            e["drift"] = r.drift;
            e["max_drift"] = r.max_drift;
            e["drift_step"] = r.drift_step;
        }
        if (r.restitution >= 0) e["restitution"] = r.restitution;
        if (steps) {
            json st = json::array();
            for (const StepRecord& s : r.steps) {
                json objs = json::array();
                for (const ObjectStep& o : s.objects)
                    objs.push_back({{"contacts", o.contacts}, {"position", vec(o.position)}, {"velocity", vec(o.velocity)},
                                    {"quaternion", json::array({o.quaternion[0], o.quaternion[1], o.quaternion[2], o.quaternion[3]})},
                                    {"kinetic", o.kinetic}, {"penetration", o.penetration},
                                    {"pile_penetration", o.pile_penetration}});
                st.push_back({{"collision_us", s.collision_us}, {"contacts", s.contacts}, {"objects", objs}});
            }
            e["steps"] = st;
        }
        rs.push_back(e);
    }
    j["runs"] = rs;
    return j;
}

std::string report_csv(const std::vector<RunResult>& runs) {
    std::ostringstream out;
    out.precision(9);
    out << "method,kind,rotation,rate,restitution,step,time_s,object,collision_us,contacts,x,y,z,vx,vy,vz,qw,qx,qy,qz,kinetic,penetration\n";
    for (const RunResult& r : runs)
        for (std::size_t k = 0; k < r.steps.size(); ++k)
            for (std::size_t i = 0; i < r.steps[k].objects.size(); ++i) {
                const ObjectStep& o = r.steps[k].objects[i];
                out << r.label << ',' << r.method << ',' << r.rotation << ',' << r.rate << ','
                    << (r.restitution >= 0 ? std::to_string(r.restitution) : std::string()) << ',' << k + 1 << ','
                    << double(k + 1) / r.rate << ',' << r.dynamic_objects[i] << ',' << r.steps[k].collision_us << ','
                    << o.contacts << ',' << o.position.x << ',' << o.position.y << ',' << o.position.z << ','
                    << o.velocity.x << ',' << o.velocity.y << ',' << o.velocity.z << ',' << o.quaternion[0] << ','
                    << o.quaternion[1] << ',' << o.quaternion[2] << ',' << o.quaternion[3] << ',' << o.kinetic << ','
                    << o.penetration << '\n';
            }
    return out.str();
}

std::string format_text(const Scene& scene, const std::vector<RunResult>& runs) {
    std::ostringstream out;
    char line[512];
    std::snprintf(line, sizeof line, "scene %s: %d steps, summary over steps %d-%d%s\n", scene.name.c_str(), scene.steps,
                  scene.window_first, scene.window_last,
                  scene.rotations > 0 ? (", " + std::to_string(scene.rotations) + " random rotations each").c_str() : "");
    out << line;
    const bool copies = copy_counts(scene).front() > 0;
    std::snprintf(line, sizeof line, "%-16s %-8s %6s %6s %5s %8s %12s %12s %9s %13s %13s %6s", "method", "kind", "rate",
                  "restit", "runs", "points", "mean us", "median us", "contacts", "max pen mm", "median pen mm", "fell");
    out << line;
    // Multibody scenes: the copies, the pile's deepest exact penetration (any body into any other),
    // the largest drift across gravity at the end.
    if (copies) {
        std::snprintf(line, sizeof line, " %6s %12s %14s %9s", "N", "pile pen mm", "final pile mm", "drift mm");
        out << line;
    }
    out << "\n";
    for (const MethodSummary& s : summarize(runs)) {
        std::snprintf(line, sizeof line, "%-16s %-8s %6g %6s %5zu %8zu %12.2f %12.2f %9.2f %13.2f %13.2f %6d",
                      s.label.c_str(), s.method.c_str(), s.rate,
                      s.restitution >= 0 ? std::to_string(s.restitution).substr(0, 4).c_str() : "-", s.runs, s.points,
                      s.mean_collision_us, s.median_collision_us, s.mean_contacts, s.max_penetration * 1000,
                      s.median_max_penetration * 1000, s.fell_through);
        out << line;
        if (copies) {
            std::snprintf(line, sizeof line, " %6d %12.2f %14.2f %9.2f", s.count, s.max_pile_penetration * 1000,
                          s.final_pile_penetration * 1000, s.drift * 1000);
            out << line;
        }
        out << "\n";
    }
    return out.str();
}

}  // namespace hp::bullet
