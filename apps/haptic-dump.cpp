// haptic-dump: inspect any file of hapticprep (voxelmap, distance field, pointshell, tree, CFM)
// or any mesh; the kind is found from the content, never the extension.
#include <iostream>

#include "common/tool.hpp"
#include "core/error.hpp"
#include "inspect/check.hpp"
#include "inspect/export.hpp"
#include "inspect/inspect.hpp"
#include "inspect/slice.hpp"

int main(int argc, char** argv) {
    hp::app::Tool tool("haptic-dump", "Inspect a hapticprep file or a mesh: kind, provenance, sizes, statistics.",
                       "Examples:\n"
                       "  haptic-dump part.stl                  mesh diagnostics (watertight? boundary edges?)\n"
                       "  haptic-dump part.stl --units mm       ... with coordinates converted from millimetres\n"
                       "  haptic-dump gearbox.glb --parts       the parts of an assembly: placements, geometries, instances\n"
                       "  haptic-dump gearbox.glb --part 3      one part in its own frame, as --part gives it to every tool\n"
                       "  haptic-dump gearbox.step --parts      STEP/IGES: parts, tessellated and exact area and volume (docs/cad.md)\n"
                       "  haptic-dump bunny.layers.vdb          voxelmap: dimensions, metadata, layer histogram\n"
                       "  haptic-dump bunny.layers.vdb --json   the same as one JSON object\n"
                       "  haptic-dump bunny.hps                 pointshell: count, spacing, bounds, provenance\n"
                       "  haptic-dump bunny.hps --export ply -o bunny.ply [--ascii]   points + normals for a viewer\n"
                       "  haptic-dump bunny.hcfm --export json -o bunny.cfm.json       every sphere and sample of a CFM\n"
                       "  haptic-dump bunny.tree.hps            tree: clusters and sphere radii per level\n"
                       "  haptic-dump bunny.tree.hps --export json -o tree.json       every cluster: sphere, points, links\n"
                       "  haptic-dump bunny.tree.hps --level 3 --export ply -o l3.ply  the parent points of level 3\n"
                       "  haptic-dump bunny.tree.hps --level 3 --export obj -o l3.obj  the spheres of level 3 as low-poly meshes\n"
                       "  haptic-dump out/g0/distance.hsmp --check   prepared sampler: its layout against its grid (exit 3 if wrong)\n"
                       "  haptic-dump bunny.dist.vdb --slice z=40 --png z40.png   an image of one slice\n"
                       "  haptic-dump cube.layers.vdb --slice x=6                 the same as ASCII (small grids)\n"
                       "  haptic-dump bunny.dist.vdb --export levelset -o bunny.ls.vdb   a level set for other VDB tools\n"
                       "\n"
                       "Slice colours (voxelmaps and distance fields): one voxel = NxN pixels (N = 512 / longest\n"
                       "side, at least 1); x=I shows y right and z up, y=J x right and z up, z=K x right and y up.\n"
                       "Surface voxels (layer 0) black; inside warm: #fddbc7 one step in, through #f4a582, #d6604d\n"
                       "to #b2182b; outside cool: #d1e5f0 through #92c5de, #4393c3 to #2166ac; linear in the value\n"
                       "(layers, or distance / voxel size), saturating at the largest |value| in the file, which\n"
                       "is printed. ASCII: # surface, 1-9 inside, a-i outside (voxels from the surface), + ~ farther.\n");
    std::string file, slice, png, export_format, output;
    hp::inspect::ExportOptions export_options;
    hp::MeshLoadOptions mesh_options;
    tool.cli.add_option("FILE", file, "the file to inspect")->required();
    tool.cli.add_option("--slice", slice, "x=I, y=J or z=K: one slice of a voxelmap or distance field (ASCII, or --png)");
    tool.cli.add_option("--png", png, "write the --slice as a PNG image to this file");
    tool.cli.add_option("--export", export_format,
                        "write the file's content in another format: ply (points of pointshells and trees), json (trees, "
                        "closest feature maps), obj (a tree level's spheres, with --level), levelset (voxelmaps, distance fields)");
    tool.cli.add_option("--level", export_options.level, "--export ply of a tree: only the parent points of this level (1 = root); --export obj: this level's spheres")
        ->check(CLI::PositiveNumber);
    tool.cli.add_option("-o,--output", output, "output file of --export");
    bool check = false, parts = false;
    tool.cli.add_flag("--parts", parts, "a mesh file's parts: name, geometry, placement, triangles, bounds, instances");
    tool.cli.add_flag("--check", check, "full integrity check; exit 1 listing the first problems (3 if unreadable)");
    tool.cli.add_flag("--ascii", export_options.ascii, "--export ply: text instead of binary little-endian");
    tool.add_mesh_options(mesh_options);
    // One thing per run: describe the file, or check it, list its parts, slice it, export it.
    const std::string describing = "describing", checking = "--check", listing = "--parts", slicing = "--slice",
                      exporting = "--export";
    tool.set_modes({{describing, {}}, {checking, {"--check"}}, {listing, {"--parts"}}, {slicing, {"--slice", "z=0"}},
                    {exporting, {"--export", "ply"}}},
                   [&] {
                       return check ? checking : parts ? listing : !slice.empty() ? slicing : !export_format.empty() ? exporting : describing;
                   });
    tool.applies("--check", {checking});
    tool.applies("--parts", {listing});
    for (const char* o : {"--slice", "--png"}) tool.applies(o, {slicing});
    for (const char* o : {"--export", "--level", "--output", "--ascii"}) tool.applies(o, {exporting});
    // The mesh options: how a mesh file is read (the other modes read hapticprep's files).
    for (const char* o : {"--scale", "--units", "--part", "--linear-deflection", "--angular-deflection"})
        tool.applies(o, {describing, checking, listing});
    return tool.run(argc, argv, [&] {
        hp::inspect::Summary s;
        int code = 0;
        if (check) {
            const hp::inspect::CheckReport r = hp::inspect::check(file, mesh_options);
            s = r.summary();
            code = r.ok() ? 0 : 1;
        } else if (parts) s = hp::inspect::describe_parts(file, mesh_options);
        else if (!slice.empty()) s = hp::inspect::slice_command(file, slice, png);
        else if (!export_format.empty())
            s = hp::inspect::export_file(file, export_format, output, export_options, tool.progress());
        else s = hp::inspect::describe(file, mesh_options);
        if (tool.json) tool.print_json(s.json);
        else if (!tool.quiet) std::cout << s.text;
        return code;
    });
}
