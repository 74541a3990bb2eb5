// haptic-cfm: mesh + point-sphere tree -> closest feature map (.hcfm). See lib/cfm.
#include <string>

#include "common/stage_call.hpp"
#include "common/tool.hpp"
#include "pipeline/stage_cfm.hpp"

int main(int argc, char** argv) {
    hp::app::Tool tool(
        "haptic-cfm",
        "Build the closest feature map (Giang & O'Sullivan 2006) of every sphere of a point-sphere tree:\n"
        "for each sample direction, the closest mesh feature (face/edge/vertex), the closest point and the\n"
        "outward normal.",
        "Sampling: adaptive (default; floor((N+1) sin phi) samples on ring phi = i pi/N, 65 at 10 stacks,\n"
        "167 at 16) or polar (N per ring plus the poles, 242 at 16). Stacks: --stacks at the root, --min-stacks at\n"
        "the deepest level, linear in between. --store normal keeps only normals, full also features and points.\n"
        "\nExamples:\n"
        "  haptic-cfm bunny.obj bunny.tree.hps -o bunny.hcfm\n"
        "  haptic-cfm part.stl part.tree.hps --stacks 10 --min-stacks 2 --store full -o part.hcfm\n"
        "  haptic-cfm part.stl part.tree.hps --sampling polar --json -o part.hcfm\n");
    std::string mesh_path, tree_path, output;
    tool.cli.add_option("MESH", mesh_path, "the mesh the tree was made from")->required();
    tool.cli.add_option("TREE", tree_path, "point-sphere tree (.hps) from haptic-spheretree")->required();
    tool.cli.add_option("-o,--output", output, "output closest feature map (.hcfm)")->required();
    hp::app::StageCall call(tool, "cfm");
    return tool.run(argc, argv, [&] {
        return call.input("tree", tree_path).run_and_print(&hp::pipeline::run_cfm, mesh_path, output, tree_path);
    });
}
