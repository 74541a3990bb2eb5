// make_vertex_tree MESH OUT.hps [--k K] [--units U] [--scale F]: a stand-in moving object for
// tests and benches that do not depend on haptic-pointshell/haptic-spheretree: the mesh's
// vertices as points, inward normals = minus the angle-weighted vertex pseudo-normals, the tree of
// lib/spheretree. Not a product tool (the points are not evenly spaced like a real pointshell).
#include <cstdio>
#include <string>

#include "common/tool.hpp"
#include "formats/shell.hpp"
#include "geometry/pseudo_normals.hpp"
#include "spheretree/tree.hpp"

int main(int argc, char** argv) {
    hp::app::Tool tool("make_vertex_tree", "Write a point-sphere tree file of a mesh's vertices (test helper).",
                       "Example:\n  make_vertex_tree bunny.obj bunny.vertices.hps --k 4\n");
    std::string mesh_path, out;
    int k = 4;
    hp::MeshLoadOptions mopt;
    tool.cli.add_option("MESH", mesh_path)->required();
    tool.cli.add_option("OUTPUT", out)->required();
    tool.cli.add_option("--k", k, "points per cluster")->check(CLI::Range(2, 64));
    tool.add_mesh_options(mopt);
    return tool.run(argc, argv, [&] {
        hp::LoadedMesh m = hp::load_mesh(mesh_path, mopt);
        hp::PseudoNormals normals(m.mesh);
        std::vector<std::uint32_t> triangle_of(m.mesh.vertices.size(), UINT32_MAX);
        for (std::uint32_t t = 0; t < m.mesh.triangles.size(); ++t)
            for (std::uint32_t v : m.mesh.triangles[t])
                if (triangle_of[v] == UINT32_MAX) triangle_of[v] = t;
        hp::Pointshell shell;
        for (std::uint32_t v = 0; v < m.mesh.vertices.size(); ++v) {
            const hp::Vec3d n = normals.vertex(v);
            if (triangle_of[v] == UINT32_MAX || !(hp::length(n) > 0.5)) continue;
            shell.points.push_back(m.mesh.vertices[v]);
            shell.normals.push_back(-n);
            shell.triangles.push_back(triangle_of[v]);
        }
        hp::PointSphereTree tree = hp::build_point_sphere_tree(shell.points, {.k = k});
        hp::write_shell_file(out, {{"tool", "make_vertex_tree"}, {"source_hash", m.source_hash}, {"k", k}}, shell, &tree);
        if (tool.text_output())
            std::printf("%zu points, %zu clusters, %d levels -> %s\n", shell.points.size(), tree.clusters.size(), tree.levels,
                        out.c_str());
        return 0;
    });
}
