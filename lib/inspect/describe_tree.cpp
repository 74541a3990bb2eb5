// haptic-dump on point-sphere tree files: per-level cluster counts and radii, and the JSON and
// per-level PLY exports (lib/inspect/tree.hpp).
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/text.hpp"
#include "formats/container.hpp"
#include "formats/shell.hpp"
#include "inspect/export_ply.hpp"
#include "inspect/tree.hpp"

namespace hp::inspect {
namespace fs = std::filesystem;

namespace {

ShellFile read_tree_file(const fs::path& path) {
    if (!container::looks_like_container(path))
        fail_input(path.string(), "is not a point-sphere tree file (make one with haptic-spheretree)");
    return read_shell_file(path, /*require_tree=*/true);
}

}  // namespace

bool is_shell_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    char head[16] = {};
    if (!in.read(head, sizeof head)) return false;
    const std::string_view magic(head, 8), tag(head + 12, 4);
    return magic == "HAPTICPF" && (tag == "SHEL" || tag == "TREE");  // formats/container.md
}

std::string format_tree_levels(const nlohmann::json& summary) {
    std::ostringstream o;
    char buf[256];
    o << "tree         K = " << summary["k"].get<int>() << ", " << summary["levels"].get<int>() << " levels, "
      << with_commas(summary["clusters"].get<std::size_t>()) << " clusters ("
      << with_commas(summary["leaves"].get<std::size_t>()) << " leaves)\n";
    o << "level        clusters     points   radius min      median        mean         max   threshold\n";
    for (const auto& l : summary["per_level"]) {
        const auto& r = l["radius"];
        std::snprintf(buf, sizeof buf, "  %-8d %10s %10s %12.5g %11.5g %11.5g %11.5g %11.5g\n", l["level"].get<int>(),
                      with_commas(l["clusters"].get<std::size_t>()).c_str(), with_commas(l["points"].get<std::size_t>()).c_str(),
                      r["min"].get<double>(), r["median"].get<double>(), r["mean"].get<double>(), r["max"].get<double>(),
                      l["threshold"].get<double>());
        o << buf;
    }
    return o.str();
}

nlohmann::json tree_levels_json(const PointSphereTree& tree, const std::vector<TreeLevelStats>& levels) {
    nlohmann::json per_level = nlohmann::json::array();
    std::size_t leaves = 0;
    for (const TreeLevelStats& l : levels) {
        leaves += l.leaves;
        per_level.push_back({{"level", l.level}, {"clusters", l.clusters}, {"leaves", l.leaves}, {"points", l.points},
                             {"radius", {{"min", l.radius_min}, {"median", l.radius_median}, {"mean", l.radius_mean},
                                         {"max", l.radius_max}}},
                             {"threshold", l.threshold}});
    }
    return {{"k", tree.k}, {"levels", tree.levels}, {"clusters", tree.clusters.size()}, {"leaves", leaves},
            {"per_level", per_level}};
}

void describe_tree(const fs::path& path, Summary& s) {
    const ShellFile f = read_tree_file(path);
    const std::vector<TreeLevelStats> levels = level_statistics(*f.tree);
    s.text += format_tree_levels(tree_levels_json(*f.tree, levels));
    s.json["tree"] = tree_levels_json(*f.tree, levels);
}

std::size_t export_tree_json(const fs::path& input, const fs::path& output) {
    const ShellFile f = read_tree_file(input);
    const Pointshell& sh = f.shell;
    const PointSphereTree& t = *f.tree;
    nlohmann::json points = nlohmann::json::array();
    for (std::size_t i = 0; i < sh.points.size(); ++i) {
        const Vec3d p = sh.points[i], n = sh.normals[i];
        points.push_back({p.x, p.y, p.z, n.x, n.y, n.z});
    }
    nlohmann::json clusters = nlohmann::json::array();
    for (std::size_t id = 0; id < t.clusters.size(); ++id) {
        const TreeCluster& c = t.clusters[id];
        const Vec3d ctr = c.sphere.center;
        clusters.push_back({{"id", id}, {"level", c.level}, {"center", {ctr.x, ctr.y, ctr.z}},
                            {"radius", c.sphere.radius}, {"points", c.points}, {"children", c.children},
                            {"parent", c.parent}});
    }
    const nlohmann::json j{{"k", t.k}, {"levels", t.levels}, {"source", input.filename().string()},
                           {"points", std::move(points)}, {"clusters", std::move(clusters)}};
    write_file_atomically(output, j.dump() + "\n");
    return t.clusters.size();
}

std::size_t export_tree_level_ply(const fs::path& input, const fs::path& output, int level, bool ascii) {
    const ShellFile f = read_tree_file(input);
    const PointSphereTree& t = *f.tree;
    if (level < 1 || level > t.levels)
        fail_usage("--level " + std::to_string(level) + ": " + input.string() + " has levels 1 (root) to " +
                   std::to_string(t.levels));
    std::vector<Vec3d> points, normals;
    for (const TreeCluster& c : t.clusters) {
        if (c.level != level) continue;
        points.push_back(f.shell.points[c.points.front()]);
        normals.push_back(f.shell.normals[c.points.front()]);
    }
    write_ply(output, points, normals, ascii,
              "parent points of level " + std::to_string(level) + " of " + input.filename().string());
    return points.size();
}

namespace {
// The regular icosahedron's 12 vertices (unit circumradius) and 20 faces, wound outwards.
const std::array<Vec3d, 12>& icosahedron_vertices() {
    static const std::array<Vec3d, 12> v = [] {
        const double p = (1 + std::sqrt(5.0)) / 2, r = std::sqrt(1 + p * p);
        std::array<Vec3d, 12> out{Vec3d{-1, p, 0}, {1, p, 0},  {-1, -p, 0}, {1, -p, 0}, {0, -1, p},  {0, 1, p},
                                  {0, -1, -p},     {0, 1, -p}, {p, 0, -1},  {p, 0, 1},  {-p, 0, -1}, {-p, 0, 1}};
        for (Vec3d& x : out) x = x * (1 / r);
        return out;
    }();
    return v;
}
constexpr int kIcosahedronFaces[20][3] = {{0, 11, 5}, {0, 5, 1},  {0, 1, 7},   {0, 7, 10}, {0, 10, 11},
                                          {1, 5, 9},  {5, 11, 4}, {11, 10, 2}, {10, 7, 6}, {7, 1, 8},
                                          {3, 9, 4},  {3, 4, 2},  {3, 2, 6},   {3, 6, 8},  {3, 8, 9},
                                          {4, 9, 5},  {2, 4, 11}, {6, 2, 10},  {8, 6, 7}, {9, 8, 1}};
}  // namespace

std::size_t export_tree_level_obj(const fs::path& input, const fs::path& output, int level) {
    const ShellFile f = read_tree_file(input);
    const PointSphereTree& t = *f.tree;
    if (level < 1 || level > t.levels)
        fail_usage("--export obj needs --level L, 1 (root) to " + std::to_string(t.levels) + " for " + input.string());
    std::ostringstream o;
    o << "# hapticprep: spheres of level " << level << " of " << input.filename().string()
      << " as icosahedra (12 vertices on each sphere), one object per cluster\n";
    char line[160];
    std::size_t count = 0, base = 1;
    for (std::size_t id = 0; id < t.clusters.size(); ++id) {
        const TreeCluster& c = t.clusters[id];
        if (c.level != level) continue;
        o << "o cluster_" << id << "\n";
        for (const Vec3d& u : icosahedron_vertices()) {
            const Vec3d p = c.sphere.center + u * c.sphere.radius;
            std::snprintf(line, sizeof line, "v %.17g %.17g %.17g\n", p.x, p.y, p.z);
            o << line;
        }
        for (const auto& face : kIcosahedronFaces)
            o << "f " << base + face[0] << ' ' << base + face[1] << ' ' << base + face[2] << "\n";
        base += 12;
        ++count;
    }
    write_file_atomically(output, o.str());
    return count;
}

}  // namespace hp::inspect
