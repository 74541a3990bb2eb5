// haptic-dump for octree files (.hoct): summary, --check (the reader's structure, and that every
// voxel lies in the tight sphere of each of its ancestors) and --export obj of one level's spheres.
#include <array>
#include <bit>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/text.hpp"
#include "formats/octree.hpp"
#include "inspect/check.hpp"
#include "inspect/inspect.hpp"
#include "octree/octree.hpp"

namespace hp::inspect {
namespace fs = std::filesystem;

Summary describe_octree(const fs::path& path) {
    const OctreeFile f = read_octree_file(path);
    const octree::Octree& t = f.tree;
    const std::vector<std::size_t> per = octree::nodes_per_level(t);
    Summary s;
    std::ostringstream o;
    o << "file         " << path.string() << "\n";
    o << "kind         octree (" << (t.surface_only ? "surface voxels" : "solid voxels") << ")\n";
    o << "file size    " << human_bytes(static_cast<double>(f.file_size)) << "\n";
    o << "octree       " << t.levels << " levels, " << with_commas(t.nodes()) << " nodes, " << with_commas(t.voxels)
      << " voxels of " << t.voxel_size << ", root cube " << (1 << t.levels) << " voxels per side\n";
    char line[200];
    std::snprintf(line, sizeof line, "origin       %.17g %.17g %.17g\n", t.origin.x, t.origin.y, t.origin.z);
    o << line;
    std::snprintf(line, sizeof line, "storage      %.3f bits per voxel (one byte per node)\n",
                  8.0 * static_cast<double>(t.nodes()) / static_cast<double>(t.voxels));
    o << line << "level  nodes\n";
    for (std::size_t i = 0; i < per.size(); ++i) {
        std::snprintf(line, sizeof line, "%5d  %s\n", t.levels - static_cast<int>(i), with_commas(per[i]).c_str());
        o << line;
    }
    for (const auto& [key, value] : f.metadata.items())
        o << "meta         " << key << " = " << (value.is_string() ? value.get<std::string>() : value.dump()) << "\n";
    s.text = o.str();
    s.json = {{"file", path.string()}, {"kind", "octree"}, {"file_size", f.file_size}, {"levels", t.levels},
              {"nodes", t.nodes()}, {"voxels", t.voxels}, {"voxel_size", t.voxel_size},
              {"origin", {t.origin.x, t.origin.y, t.origin.z}}, {"surface_only", t.surface_only},
              {"nodes_per_level", per}, {"metadata", f.metadata}, {"root_side_voxels", 1 << t.levels},
              {"bits_per_voxel", 8.0 * static_cast<double>(t.nodes()) / static_cast<double>(t.voxels)}};
    return s;
}

void check_octree(const fs::path& path, CheckReport& r) {
    const OctreeFile f = read_octree_file(path);  // throws (exit 3) for a damaged structure
    const octree::Octree& t = f.tree;
    r.pass(with_commas(t.nodes()) + " nodes on " + std::to_string(t.levels) + " levels, none empty, addressing " +
           with_commas(t.voxels) + " voxels");
    // Every voxel's corners in the tight sphere of every ancestor (what the descent relies on).
    const auto coords = octree::voxel_coords(t);
    const auto& table = octree::tight_spheres();
    std::size_t tested = 0, outside = 0;
    // Node index of each voxel's ancestor at each level, found by walking down from the root.
    std::vector<std::uint32_t> node_of(coords.size(), 0);  // at the current depth
    std::vector<std::array<int, 3>> at(coords.size(), {0, 0, 0});
    for (int d = 0; d < t.levels; ++d) {
        const int level = t.levels - d;
        const double side = t.side(level);
        for (std::size_t v = 0; v < coords.size(); ++v) {
            const std::uint32_t node = node_of[v];
            const auto& c = coords[v];
            const int shift = level;
            const std::array<int, 3> n{c[0] >> shift, c[1] >> shift, c[2] >> shift};
            const Vec3d centre = t.origin + Vec3d{(n[0] + 0.5) * side, (n[1] + 0.5) * side, (n[2] + 0.5) * side};
            const octree::TightSphere& ts = table[t.masks[node]];
            const Vec3d sc = centre + ts.offset * side;
            const double rad = ts.scale * side * (1 + 1e-9);
            for (int k = 0; k < 8; ++k) {
                const Vec3d p = t.origin + Vec3d{(c[0] + (k & 1)) * t.voxel_size, (c[1] + ((k >> 1) & 1)) * t.voxel_size,
                                                 (c[2] + ((k >> 2) & 1)) * t.voxel_size};
                ++tested;
                outside += length(p - sc) > rad;
            }
            // The child holding this voxel: its bit in the mask, its rank among the set bits.
            const int b = ((c[0] >> (shift - 1)) & 1) | ((c[1] >> (shift - 1)) & 1) << 1 | ((c[2] >> (shift - 1)) & 1) << 2;
            if (!(t.masks[node] >> b & 1)) {
                r.problem("voxel " + std::to_string(v) + " is not in its parent's mask at level " + std::to_string(level));
                return;
            }
            const unsigned below = t.masks[node] & ((1u << b) - 1u);
            node_of[v] = t.first_child[node] + static_cast<std::uint32_t>(std::popcount(below));
            at[v] = n;
        }
    }
    if (outside == 0)
        r.pass("every voxel's corners lie in the tight sphere of each of its ancestors (" + with_commas(tested) + " corner tests)");
    else
        r.problem(with_commas(outside) + " of " + with_commas(tested) + " voxel corners lie outside an ancestor's tight sphere");
}

std::size_t export_octree_level_obj(const fs::path& input, const fs::path& output, int level) {
    const OctreeFile f = read_octree_file(input);
    const octree::Octree& t = f.tree;
    if (level < 0 || level > t.levels)
        fail_usage("--export obj of an octree needs --level L, 0 (voxels) to " + std::to_string(t.levels) + " (root) for " +
                   input.string());
    const auto spheres = octree::level_spheres(t, level, /*side=*/true);
    // An icosahedron on each sphere: 12 vertices (0, +-1, +-g) cycled over the axes, g = golden ratio.
    const double g = (1 + std::sqrt(5.0)) / 2, norm = std::sqrt(1 + g * g);
    std::array<Vec3d, 12> ico;
    int k = 0;
    for (int axis = 0; axis < 3; ++axis)
        for (int sa : {-1, 1})
            for (int sb : {-1, 1}) {
                Vec3d v;
                v[axis] = 0;
                v[(axis + 1) % 3] = sa * 1.0 / norm;
                v[(axis + 2) % 3] = sb * g / norm;
                ico[k++] = v;
            }
    // Faces: every triple of mutually adjacent vertices (edge length 2 / norm).
    std::vector<std::array<int, 3>> faces;
    const double edge2 = 4.0 / (norm * norm);
    auto adj = [&](int a, int b) { return std::abs(length2(ico[a] - ico[b]) - edge2) < 1e-9; };
    for (int a = 0; a < 12; ++a)
        for (int b = a + 1; b < 12; ++b)
            for (int c = b + 1; c < 12; ++c)
                if (adj(a, b) && adj(b, c) && adj(a, c)) {
                    // Outward winding.
                    if (dot(cross(ico[b] - ico[a], ico[c] - ico[a]), ico[a]) > 0) faces.push_back({a, b, c});
                    else faces.push_back({a, c, b});
                }
    std::ostringstream o;
    o << "# hapticprep: spheres of level " << level << " of " << input.filename().string()
      << (level == 0 ? " (the voxels' circumspheres)" : " (tight spheres of the table)")
      << " as icosahedra (12 vertices on each sphere), one object per node\n";
    char line[160];
    std::size_t base = 1;
    for (std::size_t i = 0; i < spheres.size(); ++i) {
        o << "o node_" << i << "\n";
        for (const Vec3d& u : ico) {
            const Vec3d p = spheres[i].center + u * spheres[i].radius;
            std::snprintf(line, sizeof line, "v %.17g %.17g %.17g\n", p.x, p.y, p.z);
            o << line;
        }
        for (const auto& fc : faces) o << "f " << base + fc[0] << ' ' << base + fc[1] << ' ' << base + fc[2] << "\n";
        base += 12;
    }
    write_file_atomically(output, o.str());
    return spheres.size();
}

}  // namespace hp::inspect
