// haptic-sim: runs a scene in Bullet with VPS and Bullet's own collision methods side by side and
// reports, per step and per method, the narrow phase's time, the contacts, the motion, the kinetic
// energy and the exact penetration (Sagardia et al. 2014, section 4). Scenes: docs/sim.md; the
// runs: lib/bullet/sim.hpp. Built only with lib/bullet.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "bullet/sim.hpp"
#include "common/tool.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "plot/plot.hpp"
#include "scene/scene_file.hpp"

namespace hb = hp::bullet;

namespace {

// Like the paper's Figures 8 and 10: per rate and restitution, the narrow phase's time per step
// (log scale) and the first dynamic object's kinetic energy per step (log scale), one series per
// variant (its first rotation). Files: DIR/<scene>[-<rate>hz][-e<restitution>]-time.png and -energy.png.
std::vector<std::filesystem::path> write_plots(const std::filesystem::path& dir, const hb::Scene& scene,
                                               const std::vector<hb::RunResult>& runs) {
    std::vector<std::filesystem::path> written;
    std::vector<std::pair<double, double>> groups;
    for (const hb::RunResult& r : runs)
        if (std::find(groups.begin(), groups.end(), std::pair{r.rate, r.restitution}) == groups.end())
            groups.emplace_back(r.rate, r.restitution);
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) hp::fail_write(dir.string(), "cannot create the plot folder: " + ec.message());
    for (const auto& [rate, restitution] : groups) {
        std::ostringstream stem, what;
        stem << scene.name;
        what << scene.name;
        if (scene.rates.size() > 1) stem << "-" << rate << "hz";
        what << ", " << rate << " Hz";
        if (restitution >= 0) {
            stem << "-e" << restitution;
            what << ", restitution " << restitution;
        }
        hp::plot::LineChart time, energy;
        time.title = what.str() + ": narrow phase per step";
        time.x.label = energy.x.label = "step";
        time.y.label = "collision time (us)";
        time.y.log = true;
        energy.title = what.str() + ": kinetic energy";
        energy.y.label = "kinetic energy (J)";
        energy.y.log = true;
        const int first_count = runs.empty() ? 0 : runs.front().count;
        for (const hb::RunResult& r : runs) {
            if (r.rate != rate || r.restitution != restitution || r.rotation > 0 || r.count != first_count) continue;
            hp::plot::Series t, e;
            t.name = e.name = r.label;
            for (std::size_t k = 0; k < r.steps.size(); ++k) {
                t.x.push_back(double(k + 1));
                t.y.push_back(r.steps[k].collision_us);
                e.x.push_back(double(k + 1));
                e.y.push_back(r.steps[k].objects.front().kinetic);
            }
            time.series.push_back(std::move(t));
            energy.series.push_back(std::move(e));
        }
        if (scene.window_first > 1 || scene.window_last < scene.steps) {
            time.x_marks.push_back({double(scene.window_first), "window", {120, 120, 120}, true});
            time.x_marks.push_back({double(scene.window_last), "", {120, 120, 120}, true});
        }
        const std::filesystem::path tp = dir / (stem.str() + "-time.png"), ep = dir / (stem.str() + "-energy.png");
        hp::plot::write_png(tp, {time}, 1000, 540);
        hp::plot::write_png(ep, {energy}, 1000, 540);
        written.push_back(tp);
        written.push_back(ep);
        // Multibody scenes: the narrow phase's median step time against the number of copies (log-log).
        if (hb::copy_counts(scene).size() > 1) {
            hp::plot::LineChart by_count;
            by_count.title = what.str() + ": narrow phase per step against N";
            by_count.x.label = "copies N";
            by_count.x.log = true;
            by_count.y.label = "median over the window (us)";
            by_count.y.log = true;
            for (const hb::MethodSummary& m : hb::summarize(runs)) {
                if (m.rate != rate || m.restitution != restitution || m.count <= 0) continue;
                auto it = std::find_if(by_count.series.begin(), by_count.series.end(),
                                       [&](const hp::plot::Series& x) { return x.name == m.label; });
                if (it == by_count.series.end()) {
                    by_count.series.emplace_back();
                    it = std::prev(by_count.series.end());
                    it->name = m.label;
                }
                it->x.push_back(double(m.count));
                it->y.push_back(std::max(m.median_collision_us, 1e-3));
            }
            const std::filesystem::path cp = dir / (stem.str() + "-count.png");
            hp::plot::write_png(cp, {by_count}, 1000, 540);
            written.push_back(cp);
        }
    }
    return written;
}

std::string text_summary(const hb::Scene& scene, const std::vector<hb::RunResult>& runs) {
    std::ostringstream out;
    char line[512];
    std::snprintf(line, sizeof line, "scene %s: %d steps, summary over steps %d-%d%s\n", scene.name.c_str(), scene.steps,
                  scene.window_first, scene.window_last,
                  scene.rotations > 0 ? (", " + std::to_string(scene.rotations) + " random rotations each").c_str() : "");
    out << line;
    const bool copies = hb::copy_counts(scene).front() > 0;
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
    for (const hb::MethodSummary& s : hb::summarize(runs)) {
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

}  // namespace

int main(int argc, char** argv) {
    hp::app::Tool tool(
        "haptic-sim",
        "Run a scene in Bullet: objects fall onto a ground with VPS, GImpact, GJK on a convex hull, GJK on an HACD "
        "convex decomposition or Bullet's native shapes as the collision method; report per step and method the "
        "narrow phase's time, the contacts, position, velocity, kinetic energy and the exact penetration.",
        "The scene file (JSON) is described in docs/sim.md; the paper's experiments are in scenes/.\n"
        "VPS objects are prepared by the pipeline the scene names (cached in --cache), HACD decompositions too.\n"
        "\nExamples:\n"
        "  haptic-sim scenes/bouncing-ball.json\n"
        "  haptic-sim scenes/bunny-drop-box.json --report bunny.json --csv bunny.csv --plots plots\n"
        "  haptic-sim scenes/bunny-drop-plane.json --only vps-799,hacd --rotations 3 --json\n"
        "  haptic-sim my-scene.json --steps 100 --cache /tmp/hp-cache --quiet --report r.json\n"
        "  haptic-sim scenes/bunny-pile.json --plots plots     # 1, 8, 64 bunnies dropped into a box\n"
        "  haptic-sim out/fixture/scene.json --dynamic peg --mass 0.05 --steps 200   # a haptic-pipeline --assembly scene\n");
    std::string scene_path, report_path, csv_path, cache_path, only, plots_path;
    std::vector<std::string> dynamic_parts;
    std::vector<int> counts;
    double default_mass = 1;
    int steps = 0, rotations = -1;
    tool.cli.add_option("SCENE", scene_path, "scene file (JSON, docs/sim.md)")->required();
    tool.cli.add_option("--report", report_path, "write the report with every step (JSON)");
    tool.cli.add_option("--csv", csv_path, "write one row per step, run and dynamic object (CSV)");
    tool.cli.add_option("--plots", plots_path, "write PNG plots into this folder: time per step (log) and kinetic "
                                               "energy per step, per rate and restitution");
    tool.cli.add_option("--cache", cache_path, "folder for prepared VPS files and HACD decompositions "
                                               "(default: $XDG_CACHE_HOME/hapticprep or ~/.cache/hapticprep)");
    tool.cli.add_option("--steps", steps, "override the scene's steps (the summary window is clipped to them)")
        ->check(CLI::PositiveNumber);
    tool.cli.add_option("--rotations", rotations, "override the scene's number of random rotations")
        ->check(CLI::NonNegativeNumber);
    tool.cli.add_option("--dynamic", dynamic_parts,
                        "scene.json of haptic-pipeline --assembly: this part moves (its name or index; NAME=KG gives its "
                        "mass); repeat for several. Every other part is static");
    tool.cli.add_option("--mass", default_mass, "scene.json: the mass (kg) of the --dynamic parts without =KG (default 1)")
        ->check(CLI::PositiveNumber);
    tool.cli.add_option("--count", counts, "multibody scenes: run these counts of copies instead of the scene's "
                                           "(comma-separated)")
        ->delimiter(',')
        ->check(CLI::Range(1, 100000));
    tool.cli.add_option("--only", only, "run only these variants of the scene's \"methods\" (comma-separated names)");
    return tool.run(argc, argv, [&] {
        hb::Scene scene;
        if (hp::scene::looks_like_scene(scene_path)) {
            std::vector<hb::DynamicPart> parts;
            for (const std::string& d : dynamic_parts) {
                hb::DynamicPart part{d, default_mass};
                if (const auto eq = d.rfind('='); eq != std::string::npos) {
                    part.name = d.substr(0, eq);
                    char* end = nullptr;
                    const std::string kg = d.substr(eq + 1);
                    part.mass = std::strtod(kg.c_str(), &end);
                    if (kg.empty() || *end || !(part.mass > 0) || !std::isfinite(part.mass))
                        hp::fail_usage("--dynamic " + d + ": the mass after '=' must be a number > 0 (kg)");
                }
                parts.push_back(part);
            }
            std::vector<std::string> notes;
            scene = hb::scene_from_assembly(scene_path, parts, &notes);
            for (const std::string& n : notes)
                if (tool.text_output()) std::fprintf(stderr, "haptic-sim: %s\n", n.c_str());
        } else {
            if (!dynamic_parts.empty())
                hp::fail_usage("--dynamic: only for a scene.json of haptic-pipeline --assembly; " + scene_path +
                               " is a haptic-sim scene file (give masses in it)");
            scene = hb::load_scene(scene_path);
        }
        if (steps > 0) {
            scene.steps = steps;
            scene.window_last = std::min(scene.window_last, steps);
            if (scene.window_first > steps) scene.window_first = 1;
        }
        if (rotations >= 0) scene.rotations = rotations;
        if (!counts.empty()) {
            bool copied = false;
            for (hb::SceneObject& o : scene.objects)
                if (o.copies) {
                    o.copies->counts = counts;
                    copied = true;
                }
            if (!copied) hp::fail_usage("--count: the scene has no object with \"copies\"");
        }
        if (!only.empty()) {
            std::vector<hb::MethodSpec> kept;
            std::stringstream names(only);
            std::string name;
            while (std::getline(names, name, ',')) {
                bool found = false;
                for (const hb::MethodSpec& m : scene.methods)
                    if (m.name == name) {
                        kept.push_back(m);
                        found = true;
                    }
                if (!found) hp::fail_usage("--only: the scene has no method variant named '" + name + "'");
            }
            scene.methods = kept;
        }
        const std::filesystem::path cache = cache_path.empty() ? hb::default_cache_dir() : std::filesystem::path(cache_path);
        const hb::SimHooks hooks = hb::cached_hooks(cache, [&](const std::string& line) {
            if (tool.text_output()) std::fprintf(stderr, "haptic-sim: %s\n", line.c_str());
        });
        const std::vector<hb::RunResult> runs = hb::run_scene(scene, hooks);
        // Outputs only once every run is done, each written atomically.
        if (!report_path.empty()) hp::write_file_atomically(report_path, hb::report_json(scene, runs, true).dump(1) + "\n");
        if (!csv_path.empty()) hp::write_file_atomically(csv_path, hb::report_csv(runs));
        if (!plots_path.empty())
            for (const auto& p : write_plots(plots_path, scene, runs))
                if (tool.text_output()) std::printf("wrote %s\n", p.string().c_str());
        tool.print_json(hb::report_json(scene, runs, false));
        if (tool.text_output()) std::fputs(text_summary(scene, runs).c_str(), stdout);
        return 0;
    });
}
