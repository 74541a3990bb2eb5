// haptic-dump: inspect any file of hapticprep (voxelmap, distance field, pointshell, tree, CFM)
// or any mesh; the kind is found from the content, never the extension.
#include <iostream>

#include "common/tool.hpp"
#include "inspect/inspect.hpp"

int main(int argc, char** argv) {
    hp::app::Tool tool("haptic-dump", "Inspect a hapticprep file or a mesh: kind, provenance, sizes, statistics.",
                       "Examples:\n"
                       "  haptic-dump part.stl                  mesh diagnostics (watertight? boundary edges?)\n"
                       "  haptic-dump part.stl --units mm       ... with coordinates converted from millimetres\n"
                       "  haptic-dump bunny.layers.vdb          voxelmap: dimensions, metadata, layer histogram\n"
                       "  haptic-dump bunny.layers.vdb --json   the same as one JSON object\n");
    std::string file;
    hp::MeshLoadOptions mesh_options;
    tool.cli.add_option("FILE", file, "the file to inspect")->required();
    tool.add_mesh_options(mesh_options);
    return tool.run(argc, argv, [&] {
        hp::inspect::Summary s = hp::inspect::describe(file, mesh_options);
        if (tool.json) tool.print_json(s.json);
        else if (!tool.quiet) std::cout << s.text;
        return 0;
    });
}
