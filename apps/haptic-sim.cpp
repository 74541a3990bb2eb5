// haptic-sim: runs a scene in Bullet with VPS and Bullet's own collision methods side by side and
// reports, per step and per method, the narrow phase's time, the contacts, the motion, the kinetic
// energy and the exact penetration (Sagardia et al. 2014, section 4). Scenes: docs/sim.md; the
// runs, the scene's overrides, the reports and plots: lib/bullet/sim.hpp. Built only with lib/bullet.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "bullet/sim.hpp"
#include "common/tool.hpp"
#include "core/atomic_file.hpp"

namespace hb = hp::bullet;

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
    std::string scene_path, report_path, csv_path, cache_path, plots_path;
    hb::SceneOverrides overrides;
    tool.cli.add_option("SCENE", scene_path, "scene file (JSON, docs/sim.md)")->required();
    tool.cli.add_option("--report", report_path, "write the report with every step (JSON)");
    tool.cli.add_option("--csv", csv_path, "write one row per step, run and dynamic object (CSV)");
    tool.cli.add_option("--plots", plots_path, "write PNG plots into this folder: time per step (log) and kinetic "
                                               "energy per step, per rate and restitution");
    tool.cli.add_option("--cache", cache_path, "folder for prepared VPS files and HACD decompositions "
                                               "(default: $XDG_CACHE_HOME/hapticprep or ~/.cache/hapticprep)");
    tool.cli.add_option("--steps", overrides.steps, "override the scene's steps (the summary window is clipped to them)")
        ->check(CLI::PositiveNumber);
    tool.cli.add_option("--rotations", overrides.rotations, "override the scene's number of random rotations")
        ->check(CLI::NonNegativeNumber);
    CLI::Option* dynamic = tool.cli.add_option("--dynamic", overrides.dynamic,
                        "scene.json of haptic-pipeline --assembly: this part moves (its name or index; NAME=KG gives its "
                        "mass); repeat for several. Every other part is static");
    tool.cli.add_option("--mass", overrides.default_mass, "scene.json: the mass (kg) of the --dynamic parts without =KG (default 1)")
        ->check(CLI::PositiveNumber)
        ->needs(dynamic);
    tool.cli.add_option("--count", overrides.counts, "multibody scenes: run these counts of copies instead of the scene's "
                                           "(comma-separated)")
        ->delimiter(',')
        ->check(CLI::Range(1, 100000));
    tool.cli.add_option("--only", overrides.only, "run only these variants of the scene's \"methods\" (comma-separated names)");
    return tool.run(argc, argv, [&] {
        auto note = [&](const std::string& line) {
            if (tool.text_output()) std::fprintf(stderr, "haptic-sim: %s\n", line.c_str());
        };
        const hb::Scene scene = hb::load_sim_scene(scene_path, overrides, note);
        const std::filesystem::path cache = cache_path.empty() ? hb::default_cache_dir() : std::filesystem::path(cache_path);
        const std::vector<hb::RunResult> runs = hb::run_scene(scene, hb::cached_hooks(cache, note));
        // Outputs only once every run is done, each written atomically.
        if (!report_path.empty()) hp::write_file_atomically(report_path, hb::report_json(scene, runs, true).dump(1) + "\n");
        if (!csv_path.empty()) hp::write_file_atomically(csv_path, hb::report_csv(runs));
        if (!plots_path.empty())
            for (const auto& p : hb::write_plots(plots_path, scene, runs))
                if (tool.text_output()) std::printf("wrote %s\n", p.string().c_str());
        tool.print_json(hb::report_json(scene, runs, false));
        if (tool.text_output()) std::fputs(hb::format_text(scene, runs).c_str(), stdout);
        return 0;
    });
}
