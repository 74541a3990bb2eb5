// Times the point-sphere tree builder and checks its spheres. Prints one JSON line per K for
// bench/run.sh: median build time, levels against log_K(N), clusters, and the largest relative
// radius excess over a lower bound of the true minimum (brute force over all 1-4 point supports
// of the cluster's farthest points from the returned centre: the minimal ball of a subset is never
// larger than the minimal ball of the set, so (r - r_subset) / r bounds the excess from above).
//
// Input: the mesh's pointshell built through the library at --voxel-size (voxelize, then sample
// with surface normals; not timed), or a pointshell/tree file (--shell), or else a seeded
// area-weighted uniform random sampling of the mesh's surface with --points points.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <optional>
#include <random>
#include <sstream>
#include <vector>

#include <tbb/parallel_for.h>

#include "common/tool.hpp"
#include "formats/shell.hpp"
#include "pointshell/pointshell.hpp"
#include "voxel/voxelize.hpp"
#include "spheretree/tree.hpp"

namespace {

using hp::Vec3d;

std::vector<Vec3d> sample_surface(const hp::TriMesh& mesh, std::size_t n, unsigned seed) {
    std::vector<double> cumulative;
    double total = 0;
    for (const auto& t : mesh.triangles) {
        const Vec3d a = mesh.vertices[t[0]], b = mesh.vertices[t[1]], c = mesh.vertices[t[2]];
        total += 0.5 * hp::length(hp::cross(b - a, c - a));
        cumulative.push_back(total);
    }
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(0, 1);
    std::vector<Vec3d> pts;
    pts.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        std::size_t tri = static_cast<std::size_t>(std::lower_bound(cumulative.begin(), cumulative.end(), u(rng) * total) -
                                                   cumulative.begin());
        tri = std::min(tri, mesh.triangles.size() - 1);
        const auto& t = mesh.triangles[tri];
        double s = std::sqrt(u(rng)), v = u(rng);
        pts.push_back(mesh.vertices[t[0]] * (1 - s) + mesh.vertices[t[1]] * (s * (1 - v)) + mesh.vertices[t[2]] * (s * v));
    }
    return pts;
}

// Sphere through 1-4 points with its centre in their affine hull, by closed formulas (not the
// library's solver); nullopt for degenerate supports.
std::optional<hp::Ball> closed_form_sphere(const std::vector<Vec3d>& s) {
    if (s.size() == 1) return hp::Ball{s[0], 0};
    if (s.size() == 2) return hp::Ball{(s[0] + s[1]) * 0.5, hp::length(s[1] - s[0]) * 0.5};
    if (s.size() == 3) {
        Vec3d ab = s[1] - s[0], ac = s[2] - s[0], n = hp::cross(ab, ac);
        double n2 = hp::length2(n);
        if (n2 <= 1e-24 * hp::length2(ab) * hp::length2(ac)) return std::nullopt;
        Vec3d off = (hp::cross(n, ab) * hp::length2(ac) + hp::cross(ac, n) * hp::length2(ab)) / (2 * n2);
        return hp::Ball{s[0] + off, hp::length(off)};
    }
    Vec3d a = s[1] - s[0], b = s[2] - s[0], c = s[3] - s[0];
    double det = 2 * hp::dot(a, hp::cross(b, c));
    if (std::abs(det) <= 1e-12 * hp::length(a) * hp::length(b) * hp::length(c)) return std::nullopt;
    Vec3d x = (hp::cross(b, c) * hp::length2(a) + hp::cross(c, a) * hp::length2(b) + hp::cross(a, b) * hp::length2(c)) / det;
    return hp::Ball{s[0] + x, hp::length(x)};
}

double brute_force_radius(const std::vector<Vec3d>& pts) {
    double best = INFINITY;
    const std::size_t n = pts.size();
    std::vector<Vec3d> s;
    for (unsigned mask = 1; mask < (1u << n); ++mask) {
        if (__builtin_popcount(mask) > 4) continue;
        s.clear();
        for (std::size_t i = 0; i < n; ++i)
            if (mask & (1u << i)) s.push_back(pts[i]);
        auto b = closed_form_sphere(s);
        if (!b || b->radius >= best) continue;
        bool contains = true;
        for (const Vec3d& p : pts) contains = contains && hp::length(p - b->center) <= b->radius * (1 + 1e-12);
        if (contains) best = b->radius;
    }
    return best;
}

void gather(const hp::PointSphereTree& t, std::uint32_t id, std::vector<std::uint32_t>& out) {
    const auto& c = t.clusters[id];
    if (c.children.empty()) out.insert(out.end(), c.points.begin(), c.points.end());
    for (std::uint32_t ch : c.children) gather(t, ch, out);
}

// Largest (r - r_lower) / r over all clusters, and whether every sphere contains its points.
std::pair<double, bool> check_spheres(const hp::PointSphereTree& t, const std::vector<Vec3d>& pts) {
    std::vector<double> excess(t.clusters.size(), 0);
    std::vector<char> contains(t.clusters.size(), 1);
    tbb::parallel_for(std::size_t{0}, t.clusters.size(), [&](std::size_t id) {
        std::vector<std::uint32_t> below;
        gather(t, static_cast<std::uint32_t>(id), below);
        const hp::Ball& b = t.clusters[id].sphere;
        std::vector<std::pair<double, std::uint32_t>> by_distance;
        for (std::uint32_t p : below) by_distance.push_back({hp::length(pts[p] - b.center), p});
        std::sort(by_distance.begin(), by_distance.end(), std::greater<>());
        contains[id] = by_distance.front().first <= b.radius;
        std::vector<Vec3d> farthest;
        for (std::size_t i = 0; i < std::min<std::size_t>(10, by_distance.size()); ++i) farthest.push_back(pts[by_distance[i].second]);
        double lower = brute_force_radius(farthest);
        excess[id] = b.radius > 0 ? (b.radius - lower) / b.radius : 0;
    });
    return {*std::max_element(excess.begin(), excess.end()),
            std::all_of(contains.begin(), contains.end(), [](char c) { return c != 0; })};
}

}  // namespace

int main(int argc, char** argv) {
    hp::app::Tool tool("bench_spheretree", "Time and check the point-sphere tree builder.",
                       "Examples:\n  bench_spheretree bunny.obj --voxel-size 0.0005 --k 4,8 --runs 5\n"
                       "  bench_spheretree bunny.obj --points 35000 --k 4 --runs 5\n");
    std::string file;
    int runs = 5;
    std::vector<int> ks{4};
    double threshold = 2, voxel_size = 0;
    std::string shell_file;
    std::size_t n = 35000;
    tool.cli.add_option("MESH", file)->required();
    tool.cli.add_option("--points", n, "random surface samples (without --voxel-size or --shell)")->check(CLI::Range(1, 100000000));
    tool.cli.add_option("--voxel-size", voxel_size, "build the mesh's pointshell at this voxel size")->check(CLI::PositiveNumber);
    tool.cli.add_option("--shell", shell_file, "read the points of this pointshell file");
    tool.cli.add_option("--k", ks, "points per cluster; a list (4,8) prints one row per K")->delimiter(',')->check(CLI::Range(2, 64));
    tool.cli.add_option("--runs", runs)->check(CLI::Range(1, 100));
    tool.cli.add_option("--threshold", threshold, "tagging threshold, multiples of the typical cluster extent (0: none)")->check(CLI::NonNegativeNumber);
    return tool.run(argc, argv, [&] {
        hp::LoadedMesh m = hp::load_mesh(file);
        std::vector<Vec3d> pts;
        std::string input;
        if (!shell_file.empty()) {
            pts = hp::read_shell_file(shell_file).shell.points;
            input = "pointshell file";
        } else if (voxel_size > 0) {
            const hp::GridSpec g = hp::grid_around(m.diagnostics.bbox, voxel_size, 2);
            hp::ShellField field;
            field.grid = g;
            const hp::LayerMap map = hp::voxelize(m.mesh, g, {});
            field.layers.resize(g.count());
            for (int z = 0; z < g.dims[2]; ++z)
                for (int y = 0; y < g.dims[1]; ++y)
                    for (int x = 0; x < g.dims[0]; ++x) field.layers[g.index(x, y, z)] = map.at(x, y, z);
            hp::PointshellOptions popt;
            popt.normals = hp::ShellNormals::surface;
            pts = hp::sample_pointshell(m.mesh, std::move(field), popt).shell.points;
            std::ostringstream o;
            o << "pointshell at voxel " << voxel_size;
            input = o.str();
        } else {
            pts = sample_surface(m.mesh, n, 1);
            input = "random surface samples";
        }
        std::ostringstream label;
        label << m.source_name;
        if (shell_file.empty() && voxel_size > 0) label << " @" << voxel_size;
        const std::string mesh_label = label.str();
        for (const int k : ks) {
            std::vector<double> seconds;
            hp::PointSphereTree tree;
            for (int r = 0; r < runs; ++r) {
                auto t0 = std::chrono::steady_clock::now();
                tree = hp::build_point_sphere_tree(pts, {.k = k, .seed = 1, .threshold = threshold});
                seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
            }
            std::sort(seconds.begin(), seconds.end());
            auto [excess, contains] = check_spheres(tree, pts);
            std::size_t leaves = 0;
            for (const auto& c : tree.clusters) leaves += c.children.empty() ? 1 : 0;
            const double log_k = std::log(static_cast<double>(pts.size())) / std::log(static_cast<double>(k));
            std::ostringstream notes;
            notes.precision(3);
            notes << "K=" << k << ", " << pts.size() << " points (" << input << "), " << tree.levels << " levels (log_K N = " << log_k
                  << "), " << tree.clusters.size() << " clusters, " << leaves << " leaves, max radius excess " << excess
                  << (contains ? "" : ", CONTAINMENT FAILED");
            nlohmann::json j{{"stage", "spheretree"}, {"mesh", mesh_label}, {"runs", runs},
                             {"seconds", seconds[seconds.size() / 2]}, {"peak_rss", hp::peak_rss_bytes()},
                             {"k", k}, {"points", pts.size()}, {"input", input}, {"levels", tree.levels}, {"log_k_points", log_k},
                             {"clusters", tree.clusters.size()}, {"leaves", leaves}, {"max_radius_excess", excess},
                             {"contains_all", contains}, {"notes", notes.str()}};
            std::cout << j.dump() << std::endl;
        }
        return 0;
    });
}
