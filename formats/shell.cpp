#include "formats/shell.hpp"

#include <cmath>
#include <stdexcept>

#include "core/atomic_file.hpp"

namespace hp {
namespace {

// One record of the "clusters" section (56 bytes, little-endian).
struct ClusterRecord {
    std::int32_t level;
    std::int32_t parent;
    std::uint32_t first_point;  // into "cluster_points"
    std::uint32_t point_count;
    std::uint32_t first_child;  // cluster id of the first child (children are consecutive)
    std::uint32_t child_count;
    double center[3];
    double radius;
};
static_assert(sizeof(ClusterRecord) == 56);

std::vector<double> flatten(const std::vector<Vec3d>& v) {
    std::vector<double> out;
    out.reserve(v.size() * 3);
    for (const Vec3d& p : v) out.insert(out.end(), {p.x, p.y, p.z});
    return out;
}

std::vector<Vec3d> unflatten(const std::vector<double>& v) {
    std::vector<Vec3d> out(v.size() / 3);
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = {v[3 * i], v[3 * i + 1], v[3 * i + 2]};
    return out;
}

bool finite(const Vec3d& p) { return std::isfinite(p.x) && std::isfinite(p.y) && std::isfinite(p.z); }

}  // namespace

std::string serialize_shell_file(const nlohmann::json& metadata, const Pointshell& shell, const PointSphereTree* tree) {
    const std::size_t n = shell.points.size();
    if (shell.normals.size() != n || shell.triangles.size() != n)
        throw std::invalid_argument("serialize_shell_file: points, normals and triangles differ in length");
    container::Writer w(tree ? container::Kind::tree : container::Kind::pointshell, metadata);
    w.add_array("points", flatten(shell.points));
    w.add_array("normals", flatten(shell.normals));
    w.add_array("triangles", shell.triangles);
    if (tree) {
        nlohmann::json info = {{"k", tree->k}, {"levels", tree->levels}, {"thresholds", tree->thresholds},
                               {"clusters", tree->clusters.size()}};
        w.add_bytes("tree", info.dump());
        std::vector<ClusterRecord> records;
        std::vector<std::uint32_t> members;
        records.reserve(tree->clusters.size());
        for (const TreeCluster& c : tree->clusters) {
            ClusterRecord r{};
            r.level = c.level;
            r.parent = c.parent;
            r.first_point = static_cast<std::uint32_t>(members.size());
            r.point_count = static_cast<std::uint32_t>(c.points.size());
            r.first_child = c.children.empty() ? 0 : c.children.front();
            r.child_count = static_cast<std::uint32_t>(c.children.size());
            for (std::size_t i = 1; i < c.children.size(); ++i)
                if (c.children[i] != c.children[0] + i)
                    throw std::invalid_argument("serialize_shell_file: children of a cluster are not consecutive");
            r.center[0] = c.sphere.center.x;
            r.center[1] = c.sphere.center.y;
            r.center[2] = c.sphere.center.z;
            r.radius = c.sphere.radius;
            members.insert(members.end(), c.points.begin(), c.points.end());
            records.push_back(r);
        }
        w.add_array("clusters", records);
        w.add_array("cluster_points", members);
    }
    return w.serialize();
}

void write_shell_file(const std::filesystem::path& path, const nlohmann::json& metadata, const Pointshell& shell,
                      const PointSphereTree* tree) {
    write_file_atomically(path, serialize_shell_file(metadata, shell, tree));
}

namespace {

ShellFile decode(const container::Reader& r, const std::string& where, bool require_tree) {
    if (r.kind() != container::Kind::pointshell && r.kind() != container::Kind::tree)
        fail_input(where, std::string("is a ") + container::kind_name(r.kind()) +
                              ", expected a pointshell or a point-sphere tree");
    if (require_tree && r.kind() != container::Kind::tree)
        fail_input(where, "is a pointshell without a tree; build one with haptic-spheretree");
    ShellFile f;
    f.kind = r.kind();
    f.metadata = r.metadata();
    std::vector<double> pts = r.array<double>("points");
    if (pts.size() % 3 != 0 || pts.empty()) fail_input(where, "section 'points' is empty or not a list of 3-vectors");
    const std::size_t n = pts.size() / 3;
    f.shell.points = unflatten(pts);
    f.shell.normals = unflatten(r.array<double>("normals", 3 * n));
    f.shell.triangles = r.array<std::uint32_t>("triangles", n);
    for (std::size_t i = 0; i < n; ++i) {
        if (!finite(f.shell.points[i])) fail_input(where, "point " + std::to_string(i) + " is not finite");
        const double len = length(f.shell.normals[i]);
        if (!finite(f.shell.normals[i]) || std::abs(len - 1) > 1e-3)
            fail_input(where, "normal " + std::to_string(i) + " is not a unit vector");
    }
    if (r.kind() != container::Kind::tree) return f;

    nlohmann::json info = nlohmann::json::parse(r.bytes("tree"), nullptr, false);
    if (!info.is_object() || !info.contains("k") || !info["k"].is_number_integer() || !info.contains("levels") ||
        !info["levels"].is_number_integer() || !info.contains("thresholds") || !info["thresholds"].is_array())
        fail_input(where, "section 'tree' is not a JSON object with k, levels and thresholds");
    const std::vector<ClusterRecord> records = r.array<ClusterRecord>("clusters");
    const std::vector<std::uint32_t> members = r.array<std::uint32_t>("cluster_points");
    PointSphereTree t;
    t.k = info["k"].get<int>();
    t.levels = info["levels"].get<int>();
    for (const auto& v : info["thresholds"]) {
        if (!v.is_number()) fail_input(where, "section 'tree' has a threshold that is not a number");
        t.thresholds.push_back(v.get<double>());
    }
    const std::size_t m = records.size();
    if (m == 0) fail_input(where, "the tree has no clusters");
    if (t.k < 2 || t.levels < 1) fail_input(where, "the tree has k < 2 or no levels");
    auto bad = [&](std::size_t id, const std::string& what) {
        fail_input(where, "cluster " + std::to_string(id) + " " + what);
    };
    std::vector<int> leaf_count(n, 0);
    int deepest = 0;
    t.clusters.resize(m);
    for (std::size_t id = 0; id < m; ++id) {
        const ClusterRecord& c = records[id];
        TreeCluster& out = t.clusters[id];
        if (id == 0 ? (c.parent != -1 || c.level != 1) : (c.parent < 0 || static_cast<std::size_t>(c.parent) >= id))
            bad(id, "has a bad parent or level (the root must be cluster 0 at level 1; parents come first)");
        if (id > 0) {
            const ClusterRecord& p = records[static_cast<std::size_t>(c.parent)];
            if (c.level != p.level + 1 || id < p.first_child || id >= std::size_t{p.first_child} + p.child_count)
                bad(id, "disagrees with its parent " + std::to_string(c.parent) + " about level or children");
        }
        if (c.child_count > 0 && (c.first_child <= id || std::size_t{c.first_child} + c.child_count > m))
            bad(id, "has children out of range");
        for (std::uint32_t ch = 0; ch < c.child_count; ++ch)
            if (records[c.first_child + ch].parent != static_cast<std::int32_t>(id))
                bad(id, "lists child " + std::to_string(c.first_child + ch) + " whose parent is another cluster");
        if (c.point_count == 0 || std::size_t{c.first_point} + c.point_count > members.size())
            bad(id, "has no points or points out of range");
        const Vec3d center{c.center[0], c.center[1], c.center[2]};
        if (!finite(center) || !std::isfinite(c.radius) || c.radius < 0) bad(id, "has a sphere that is not finite");
        out.level = c.level;
        out.parent = c.parent;
        out.sphere = {center, c.radius};
        out.points.assign(members.begin() + c.first_point, members.begin() + c.first_point + c.point_count);
        for (std::uint32_t ch = 0; ch < c.child_count; ++ch) out.children.push_back(c.first_child + ch);
        for (std::uint32_t p : out.points) {
#ifdef HP_FUZZ_CANARY
            // The fuzzing canary (docs/fuzzing.md): the range check below, off by one.
            if (p == static_cast<std::uint32_t>(n)) __builtin_trap();
#endif
            if (p >= n) bad(id, "has point index " + std::to_string(p) + " out of range");
            if (c.child_count == 0) ++leaf_count[p];
        }
        deepest = std::max(deepest, c.level);
    }
    if (deepest != t.levels) fail_input(where, "the tree says it has " + std::to_string(t.levels) + " levels but has " +
                                                   std::to_string(deepest));
    for (std::size_t i = 0; i < n; ++i)
        if (leaf_count[i] != 1)
            fail_input(where, "point " + std::to_string(i) + " is in " + std::to_string(leaf_count[i]) +
                                  " leaf clusters (expected exactly one)");
    f.tree = std::move(t);
    return f;
}

}  // namespace

ShellFile parse_shell_file(std::string bytes, const std::string& where, bool require_tree) {
    return decode(container::Reader::parse(std::move(bytes), where), where, require_tree);
}

ShellFile read_shell_file(const std::filesystem::path& path, bool require_tree) {
    return decode(container::Reader::open(path), path.string(), require_tree);
}

}  // namespace hp
