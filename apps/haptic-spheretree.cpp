// haptic-spheretree: pointshell (.hps) -> the same pointshell with its point-sphere tree (.hps).
// See lib/spheretree/tree.hpp for the clustering and the threshold.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "core/clock.hpp"
#include "common/stage_call.hpp"
#include "common/tool.hpp"
#include "core/text.hpp"
#include "inspect/tree.hpp"
#include "spheretree/tree.hpp"


int main(int argc, char** argv) {
    hp::app::Tool tool(
        "haptic-spheretree",
        "Build the point-sphere tree of a pointshell (paper 000, section 2.1.2): bottom-up clusters of about K points,\n"
        "each bounded by the minimal sphere of all the points below it. Writes the pointshell with its tree.",
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
    hp::TreeOptions opt;
    tool.cli.add_option("POINTSHELL", input, "pointshell from haptic-pointshell (.hps)")->required();
    tool.cli.add_option("-o,--output", output, "output tree file (.hps)")->required();
    tool.cli.add_option("--k", opt.k, "points per cluster (default 4)")->check(CLI::Range(2, 1024));
    tool.cli.add_option("--seed", opt.seed, "chooses the start point of each level (default 1)");
    tool.cli.add_option("--threshold", opt.threshold,
                        "tagging threshold in multiples of the level's median K-th-neighbour distance (default 2; 0 = off)")
        ->check(CLI::NonNegativeNumber);
    return tool.run(argc, argv, [&] {
        const auto t0 = std::chrono::steady_clock::now();
        hp::app::StageCall call(tool, "spheretree", "", output);
        call.input("pointshell", input).set("k", opt.k).set("seed", opt.seed).set("threshold", opt.threshold);
        nlohmann::json j = call.run();
        const double total_s = hp::seconds_since(t0);
        const std::size_t bytes = std::filesystem::file_size(output);
        j["output"] = output;
        j["seconds"]["total"] = total_s;
        j["file_bytes"] = bytes;
        j["peak_rss_bytes"] = hp::peak_rss_bytes();
        tool.print_json(j);
        if (tool.text_output()) {
            const auto& sec = j["seconds"];
            std::printf("points       %s, K = %d, seed %llu, threshold %g x K-th neighbour distance\n",
                        hp::with_commas(j["points"].get<std::size_t>()).c_str(), opt.k,
                        static_cast<unsigned long long>(opt.seed), opt.threshold);
            std::cout << hp::inspect::format_tree_levels(j["tree"]);
            std::printf("depth        %d levels, log_K(points) = %.2f\n", j["tree"]["levels"].get<int>(),
                        j["log_k_points"].get<double>());
            std::printf("time         read %.3f s, build %.3f s, write %.3f s, total %.3f s\n", sec["read"].get<double>(),
                        sec["build"].get<double>(), sec["write"].get<double>(), total_s);
            std::printf("wrote        %s (%s)\n", output.c_str(), hp::human_bytes(static_cast<double>(bytes)).c_str());
        }
        return 0;
    });
}
