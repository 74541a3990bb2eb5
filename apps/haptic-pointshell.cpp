// haptic-pointshell: mesh + voxelmap/distance field -> pointshell (.hps). See lib/pointshell.
#include <string>

#include "common/stage_call.hpp"
#include "common/tool.hpp"
#include "pipeline/stage_pointshell.hpp"

int main(int argc, char** argv) {
    hp::app::Tool tool(
        "haptic-pointshell",
        "Sample the surface of a mesh into a pointshell: points on the mesh about alpha voxels apart, each with a unit\n"
        "inward normal and its source triangle (Sagardia et al. 2014, section 2.1.2).",
        "FIELD is the voxelmap (haptic-voxelize) or distance field (haptic-distance) made from MESH: its surface\n"
        "voxels define the sampling; gradient normals come from its distances (or, for a voxelmap, its layers).\n"
        "\nExamples:\n"
        "  haptic-pointshell bunny.obj bunny.dist.vdb -o bunny.hps\n"
        "  haptic-pointshell part.stl part.layers.vdb --normals surface --alpha 2 -o part.hps\n"
        "  haptic-pointshell part.stl part.dist.vdb --json -o part.hps | jq .spacing\n");
    std::string mesh_path, field_path, output;
    tool.cli.add_option("MESH", mesh_path, "the mesh the field was made from")->required();
    tool.cli.add_option("FIELD", field_path, "voxelmap or distance field (.vdb) of the mesh")->required();
    tool.cli.add_option("-o,--output", output, "output pointshell (.hps)")->required();
    hp::app::StageCall call(tool, "pointshell");
    return tool.run(argc, argv, [&] {
        return call.input("distance", field_path).run_and_print(&hp::pipeline::run_pointshell, mesh_path, output);
    });
}
