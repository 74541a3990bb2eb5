// haptic-voxelize: mesh -> layered voxelmap (OpenVDB Int32 grid "layers"). See lib/voxel.
#include <string>

#include "common/stage_call.hpp"
#include "common/tool.hpp"
#include "pipeline/stage_voxelize.hpp"

int main(int argc, char** argv) {
    hp::app::Tool tool(
        "haptic-voxelize", "Build a layered voxelmap (surface = 0, inside +n, outside -n) from a triangle mesh.",
        "Fill methods (--fill):\n"
        "  auto      scanline for watertight meshes, hybrid otherwise (default)\n"
        "  scanline  exact crossing parity along x rows (closed meshes, any orientation, many parts)\n"
        "  vote      parity along x, y and z; rows through holes (odd counts) abstain; majority wins;\n"
        "            ties join their neighbours' majority, the rest the generalized winding number\n"
        "  hybrid    the generalized winding number wherever it is decisive (|w - 1/2| > 0.1) or the\n"
        "            vote is not unanimous, the unanimous vote elsewhere (open meshes: scans, shells)\n"
        "  winding   generalized winding number at every voxel (tree evaluated; slow on big grids)\n"
        "  flood     outside = reachable from the border (closed meshes; leaks through holes)\n"
        "Layers count breadth-first steps from the surface through voxels of the same side; a pocket of\n"
        "one side that no surface voxel borders (left by votes at a hole) joins the side around it.\n"
        "--max-layers 0 (default) keeps every layer; otherwise values are clamped to +-L.\n"
        "\nExamples:\n"
        "  haptic-voxelize bunny.obj --voxel-size 0.0005 -o bunny.layers.vdb\n"
        "  haptic-voxelize part.stl --units mm --resolution 256 -o part.layers.vdb --json\n"
        "  haptic-voxelize scan.ply --voxel-size 0.002 --max-layers 20 --connectivity 6 -o scan.vdb\n");
    std::string input, output;
    tool.cli.add_option("MESH", input, "input mesh (any format Assimp reads)")->required();
    tool.cli.add_option("-o,--output", output, "output voxelmap (.vdb)")->required();
    hp::app::StageCall call(tool, "voxelize");
    return tool.run(argc, argv, [&] {
        return call.run_and_print(&hp::pipeline::run_voxelize, input, output);
    });
}
