// haptic-dump: inspect any file of hapticprep (voxelmap, distance field, pointshell, tree, CFM)
// or any mesh; the kind is found from the content, never the extension.
#include <iostream>

#include "common/tool.hpp"
#include "core/error.hpp"
#include "inspect/export_ply.hpp"
#include "inspect/inspect.hpp"
#include "inspect/tree.hpp"

int main(int argc, char** argv) {
    hp::app::Tool tool("haptic-dump", "Inspect a hapticprep file or a mesh: kind, provenance, sizes, statistics.",
                       "Examples:\n"
                       "  haptic-dump part.stl                  mesh diagnostics (watertight? boundary edges?)\n"
                       "  haptic-dump part.stl --units mm       ... with coordinates converted from millimetres\n"
                       "  haptic-dump bunny.layers.vdb          voxelmap: dimensions, metadata, layer histogram\n"
                       "  haptic-dump bunny.layers.vdb --json   the same as one JSON object\n"
                       "  haptic-dump bunny.hps                 pointshell: count, spacing, bounds, provenance\n"
                       "  haptic-dump bunny.hps --export ply -o bunny.ply [--ascii]   points + normals for a viewer\n"
                       "  haptic-dump bunny.hcfm --export json -o bunny.cfm.json       every sphere and sample of a CFM\n"
                       "  haptic-dump bunny.tree.hps            tree: clusters and sphere radii per level\n"
                       "  haptic-dump bunny.tree.hps --export json -o tree.json       every cluster: sphere, points, links\n"
                       "  haptic-dump bunny.tree.hps --level 3 --export ply -o l3.ply  the parent points of level 3\n");
    std::string file;
    hp::MeshLoadOptions mesh_options;
    tool.cli.add_option("FILE", file, "the file to inspect")->required();
    std::string export_format, export_path;
    bool ascii = false;
    int level = 0;
    tool.cli.add_option("--export", export_format,
                        "write the file's content in another format: ply (points of pointshells and trees), json (trees, "
                        "closest feature maps)")
        ->check(CLI::IsMember({"ply", "json"}));
    tool.cli.add_option("--level", level, "--export ply of a tree: only the parent points of this level (1 = root)")
        ->check(CLI::PositiveNumber);
    tool.cli.add_option("-o,--output", export_path, "output file of --export");
    tool.cli.add_flag("--ascii", ascii, "--export ply: text instead of binary little-endian");
    tool.add_mesh_options(mesh_options);
    return tool.run(argc, argv, [&] {
        if (level > 0 && export_format != "ply") hp::fail_usage("--level goes with --export ply");
        if (!export_format.empty()) {
            if (export_path.empty()) hp::fail_usage("--export needs -o OUTPUT");
            if (export_format == "json") {
                if (hp::inspect::is_shell_file(file)) {  // trees; a plain pointshell is refused there
                    const std::size_t n = hp::inspect::export_tree_json(file, export_path);
                    tool.print_json({{"file", file}, {"export", export_format}, {"output", export_path}, {"clusters", n}});
                    if (tool.text_output()) std::cout << "exported     " << n << " clusters and their points to " << export_path << "\n";
                    return 0;
                }
                hp::inspect::export_cfm_json(file, export_path);  // refuses other kinds (exit 3)
                tool.print_json({{"file", file}, {"export", export_format}, {"output", export_path}});
                if (tool.text_output()) std::cout << "exported     the closest feature map as JSON to " << export_path << "\n";
                return 0;
            }
            const std::size_t n = level > 0 ? hp::inspect::export_tree_level_ply(file, export_path, level, ascii)
                                            : hp::inspect::export_shell_ply(file, export_path, ascii);
            tool.print_json({{"file", file}, {"export", export_format}, {"output", export_path},
                             {"encoding", ascii ? "ascii" : "binary_little_endian"}, {"points", n}, {"level", level}});
            if (tool.text_output())
                std::cout << "exported     " << n << (level > 0 ? " parent points of level " + std::to_string(level) : " points")
                          << " with normals to " << export_path << "\n";
            return 0;
        }
        hp::inspect::Summary s = hp::inspect::describe(file, mesh_options);
        if (tool.json) tool.print_json(s.json);
        else if (!tool.quiet) std::cout << s.text;
        return 0;
    });
}
