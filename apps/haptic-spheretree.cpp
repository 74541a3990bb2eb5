// haptic-spheretree: pointshell (.hps) -> the same pointshell with its point-sphere tree (.hps).
// See lib/spheretree/tree.hpp for the clustering and the threshold.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "common/tool.hpp"
#include "core/text.hpp"
#include "core/version.hpp"
#include "formats/shell.hpp"
#include "inspect/tree.hpp"
#include "spheretree/tree.hpp"

namespace {
double since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}
}  // namespace

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
        const hp::ShellFile in = hp::read_shell_file(input);
        const double read_s = since(t0);
        const auto t1 = std::chrono::steady_clock::now();
        const hp::PointSphereTree tree = hp::build_point_sphere_tree(in.shell.points, opt, tool.progress());
        const double build_s = since(t1);
        const std::vector<hp::TreeLevelStats> levels = hp::level_statistics(tree);
        const nlohmann::json summary = hp::inspect::tree_levels_json(tree, levels);

        // The pointshell's provenance (source mesh and hash, grid, its parameters) stays; the tree's is added.
        nlohmann::json meta = in.metadata.is_object() ? in.metadata : nlohmann::json::object();
        meta["kind"] = "tree";
        meta["tool"] = "haptic-spheretree";
        meta["tool_version"] = hp::kVersion;
        meta["pointshell"] = std::filesystem::path(input).filename().string();
        meta["tree_parameters"] = {{"k", opt.k}, {"seed", opt.seed}, {"threshold", opt.threshold},
                                   {"threshold_rule", "T x median distance to the K-th nearest neighbour, per level"}};
        meta["tree_statistics"] = {{"levels", tree.levels}, {"clusters", tree.clusters.size()}, {"leaves", summary["leaves"]}};
        const auto t2 = std::chrono::steady_clock::now();
        hp::write_shell_file(output, meta, in.shell, &tree);
        const double write_s = since(t2), total_s = since(t0);

        const double log_k = std::log(static_cast<double>(in.shell.points.size())) / std::log(static_cast<double>(opt.k));
        nlohmann::json j{{"output", output}, {"points", in.shell.points.size()}, {"k", opt.k}, {"seed", opt.seed},
                         {"threshold", opt.threshold}, {"log_k_points", log_k}, {"tree", summary},
                         {"seconds", {{"read", read_s}, {"build", build_s}, {"write", write_s}, {"total", total_s}}},
                         {"file_bytes", std::filesystem::file_size(output)}, {"peak_rss_bytes", hp::app::peak_rss_bytes()}};
        tool.print_json(j);
        if (tool.text_output()) {
            std::printf("points       %s, K = %d, seed %llu, threshold %g x K-th neighbour distance\n",
                        hp::with_commas(in.shell.points.size()).c_str(), opt.k,
                        static_cast<unsigned long long>(opt.seed), opt.threshold);
            std::cout << hp::inspect::format_tree_levels(tree, levels);
            std::printf("depth        %d levels, log_K(points) = %.2f\n", tree.levels, log_k);
            std::printf("time         read %.3f s, build %.3f s, write %.3f s, total %.3f s\n", read_s, build_s, write_s,
                        total_s);
            std::printf("wrote        %s (%s)\n", output.c_str(),
                        hp::human_bytes(static_cast<double>(std::filesystem::file_size(output))).c_str());
        }
        return 0;
    });
}
