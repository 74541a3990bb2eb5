// haptic-dump --check of pointshell and tree files (lib/inspect/check.hpp).
#include <algorithm>
#include <cmath>
#include <string>

#include "core/text.hpp"
#include "formats/shell.hpp"
#include "inspect/check.hpp"

namespace hp::inspect {

void check_shell(const std::filesystem::path& path, CheckReport& r) {
    // The reader validates the structure (counts, unit normals, links, one leaf per point) and
    // throws for a file that breaks it: such a file cannot be used at all (exit 3).
    const ShellFile f = read_shell_file(path);
    const std::size_t n = f.shell.points.size();
    r.pass(with_commas(n) + " points with finite coordinates, unit normals and a source triangle each");
    if (!f.tree) return;
    const PointSphereTree& t = *f.tree;
    r.pass(with_commas(t.clusters.size()) + " clusters in " + std::to_string(t.levels) +
           " levels: one root, parent and child links agree, every point in exactly one leaf");
    // Containment: every point lies in the sphere of its leaf and of every ancestor, within
    // rounding (1e-9 relative to the radius, 1e-12 of the coordinates' scale).
    double scale = 0;
    for (const Vec3d& p : f.shell.points) scale = std::max({scale, std::abs(p.x), std::abs(p.y), std::abs(p.z)});
    std::size_t tested = 0, outside = 0;
    for (std::size_t id = 0; id < t.clusters.size(); ++id) {
        if (!t.clusters[id].children.empty()) continue;
        for (std::uint32_t p : t.clusters[id].points)
            for (std::int32_t c = static_cast<std::int32_t>(id); c >= 0; c = t.clusters[static_cast<std::size_t>(c)].parent) {
                const Ball& b = t.clusters[static_cast<std::size_t>(c)].sphere;
                const double d = length(f.shell.points[p] - b.center);
                ++tested;
                if (d > b.radius * (1 + 1e-9) + 1e-12 * scale) {
                    if (++outside <= 5)
                        r.problem("point " + std::to_string(p) + " lies outside the sphere of cluster " + std::to_string(c) +
                                  " (distance " + std::to_string(d) + ", radius " + std::to_string(b.radius) + ")");
                }
            }
    }
    if (outside == 0)
        r.pass("every sphere contains every point below it (" + with_commas(tested) + " point-sphere pairs)");
    else if (outside > 5)
        r.problem(with_commas(outside) + " point-sphere pairs in all have the point outside the sphere");
}

}  // namespace hp::inspect
