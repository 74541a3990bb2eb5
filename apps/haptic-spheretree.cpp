// haptic-spheretree: pointshell (.hps) -> the same pointshell with its point-sphere tree (.hps).
// See lib/spheretree/tree.hpp for the clustering and the threshold.
#include <string>

#include "common/stage_call.hpp"
#include "common/tool.hpp"
#include "pipeline/stage_spheretree.hpp"

int main(int argc, char** argv) {
    hp::app::Tool tool(
        "haptic-spheretree",
        "Build the point-sphere tree of a pointshell (Sagardia et al. 2014, section 2.1.2): bottom-up\n"
        "clusters of about K points, each bounded by the minimal sphere of all the points below it. Writes\n"
        "the pointshell with its tree.",
        "Clustering: from a point chosen by --seed, a cluster takes its K-1 nearest unclustered points and the K-th\n"
        "starts the next; the parent point is the member nearest the mean. Members farther from their parent than the\n"
        "threshold are tagged and join the nearest parent within it, or form a cluster of their own. The threshold of a\n"
        "level is T times the median distance from a point of the level to its K-th nearest neighbour (T = --threshold,\n"
        "default 2; 0 = no tagging). The parent points form the next level, up to one root.\n"
        "Same input, K, seed and threshold give byte-identical files whatever --threads is.\n"
        "\nExamples:\n"
        "  haptic-spheretree bunny.hps -o bunny.tree.hps\n"
        "  haptic-spheretree part.hps --k 8 --seed 7 -o part.tree.hps\n"
        "  haptic-spheretree part.hps --threshold 0 --json -o part.tree.hps | jq .tree.per_level\n"
        "  haptic-dump bunny.tree.hps --export json -o bunny.tree.json\n");
    std::string input, output;
    tool.cli.add_option("POINTSHELL", input, "pointshell from haptic-pointshell (.hps)")->required();
    tool.cli.add_option("-o,--output", output, "output tree file (.hps)")->required();
    hp::app::StageCall call(tool, "spheretree");
    return tool.run(argc, argv, [&] {
        return call.input("pointshell", input).run_and_print(&hp::pipeline::run_spheretree, "", output);
    });
}
