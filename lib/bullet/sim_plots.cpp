// haptic-sim's plots (sim.hpp): the narrow phase's time and the kinetic energy per step, and the
// time against the number of copies, as PNG charts (lib/plot).
#include <algorithm>
#include <iterator>
#include <sstream>
#include <system_error>

#include "bullet/sim.hpp"
#include "core/error.hpp"
#include "plot/plot.hpp"

namespace hp::bullet {

// Like the paper's Figures 8 and 10: per rate and restitution, the narrow phase's time per step
// (log scale) and the first dynamic object's kinetic energy per step (log scale), one series per
// variant (its first rotation). Files: DIR/<scene>[-<rate>hz][-e<restitution>]-time.png and -energy.png.
std::vector<std::filesystem::path> write_plots(const std::filesystem::path& dir, const Scene& scene,
                                               const std::vector<RunResult>& runs) {
    std::vector<std::filesystem::path> written;
    std::vector<std::pair<double, double>> groups;
    for (const RunResult& r : runs)
        if (std::find(groups.begin(), groups.end(), std::pair{r.rate, r.restitution}) == groups.end())
            groups.emplace_back(r.rate, r.restitution);
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) fail_write(dir.string(), "cannot create the plot folder: " + ec.message());
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
        plot::LineChart time, energy;
        time.title = what.str() + ": narrow phase per step";
        time.x.label = energy.x.label = "step";
        time.y.label = "collision time (us)";
        time.y.log = true;
        energy.title = what.str() + ": kinetic energy";
        energy.y.label = "kinetic energy (J)";
        energy.y.log = true;
        const int first_count = runs.empty() ? 0 : runs.front().count;
        for (const RunResult& r : runs) {
            if (r.rate != rate || r.restitution != restitution || r.rotation > 0 || r.count != first_count) continue;
            plot::Series t, e;
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
        plot::write_png(tp, {time}, 1000, 540);
        plot::write_png(ep, {energy}, 1000, 540);
        written.push_back(tp);
        written.push_back(ep);
        // Multibody scenes: the narrow phase's median step time against the number of copies (log-log).
        if (copy_counts(scene).size() > 1) {
            plot::LineChart by_count;
            by_count.title = what.str() + ": narrow phase per step against N";
            by_count.x.label = "copies N";
            by_count.x.log = true;
            by_count.y.label = "median over the window (us)";
            by_count.y.log = true;
            for (const MethodSummary& m : summarize(runs)) {
                if (m.rate != rate || m.restitution != restitution || m.count <= 0) continue;
                auto it = std::find_if(by_count.series.begin(), by_count.series.end(),
                                       [&](const plot::Series& x) { return x.name == m.label; });
                if (it == by_count.series.end()) {
                    by_count.series.emplace_back();
                    it = std::prev(by_count.series.end());
                    it->name = m.label;
                }
                it->x.push_back(double(m.count));
                it->y.push_back(std::max(m.median_collision_us, 1e-3));
            }
            const std::filesystem::path cp = dir / (stem.str() + "-count.png");
            plot::write_png(cp, {by_count}, 1000, 540);
            written.push_back(cp);
        }
    }
    return written;
}

}  // namespace hp::bullet
