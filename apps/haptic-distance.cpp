// haptic-distance: mesh + layered voxelmap -> signed distance field (OpenVDB). See lib/distance.
#include <string>

#include "common/stage_call.hpp"
#include "common/tool.hpp"
#include "pipeline/stage_distance.hpp"

int main(int argc, char** argv) {
    hp::app::Tool tool(
        "haptic-distance",
        "Compute a signed distance field (inside positive, world units) over the voxels of a layered voxelmap.",
        "Encodings (--encoding): float (default), double, scaled = Int32 round(d * 10^P) (Sagardia et al.\n"
        "2014, eq. 1).\n"
        "The output holds the 'distance' grid, a copy of the voxelmap's 'layers' grid, and with --gradient\n"
        "a Vec3f 'gradient' grid (unit gradient of the distance, pointing to increasing penetration).\n"
        "\nExamples:\n"
        "  haptic-distance bunny.obj bunny.layers.vdb -o bunny.dist.vdb\n"
        "  haptic-distance part.stl part.layers.vdb --encoding scaled --precision 6 -o part.dist.vdb\n"
        "  haptic-distance part.stl part.layers.vdb --gradient --json -o part.dist.vdb\n"
        "  haptic-distance part.stl part.layers.vdb --exact-layers 7 -o part.dist.vdb   (exact 7 voxels deep)\n");
    std::string mesh_path, map_path, output;
    tool.cli.add_option("MESH", mesh_path, "the mesh the voxelmap was made from")->required();
    tool.cli.add_option("VOXELMAP", map_path, "layered voxelmap from haptic-voxelize")->required();
    tool.cli.add_option("-o,--output", output, "output distance field (.vdb)")->required();
    hp::app::StageCall call(tool, "distance");
    return tool.run(argc, argv, [&] {
        return call.input("voxelmap", map_path).run_and_print(&hp::pipeline::run_distance, mesh_path, output);
    });
}
