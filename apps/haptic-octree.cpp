// haptic-octree: voxelmap -> octree (.hoct) for implicit sphere tree queries. See lib/octree.
#include <string>

#include "common/stage_call.hpp"
#include "common/tool.hpp"
#include "pipeline/stage_octree.hpp"

int main(int argc, char** argv) {
    hp::app::Tool tool(
        "haptic-octree",
        "Build the octree of a voxelmap's voxels for implicit sphere tree queries (Ruffaldi et al.): one 8-bit\n"
        "child mask per node, plus the root's level, origin and voxel size; spheres are computed during the\n"
        "descent from the table of tight spheres (haptic-query --mode ist).",
        "Voxels: every solid voxel (layer >= 0), or with --surface-only the surface voxels (layer 0; the\n"
        "paper's surface descriptor). A distance field works too (it holds the voxelmap's layers).\n"
        "\nExamples:\n"
        "  haptic-octree bunny.layers.vdb -o bunny.hoct\n"
        "  haptic-octree bunny.layers.vdb --surface-only -o bunny.surface.hoct --json\n");
    std::string voxelmap, output;
    tool.cli.add_option("VOXELMAP", voxelmap, "voxelmap (haptic-voxelize) or distance field (haptic-distance)")->required();
    tool.cli.add_option("-o,--output", output, "output octree (.hoct)")->required();
    hp::app::StageCall call(tool, "octree");
    return tool.run(argc, argv, [&] {
        return call.input("voxelmap", voxelmap).run_and_print(&hp::pipeline::run_octree, "", output, voxelmap);
    });
}
