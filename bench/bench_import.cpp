// Times mesh import (read, weld, clean, diagnose): median of N runs in this process, and the
// process's peak RSS. Prints one JSON line for bench/run.sh.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <vector>

#include "common/tool.hpp"

int main(int argc, char** argv) {
    hp::app::Tool tool("bench_import", "Time mesh import.", "Example:\n  bench_import bunny.obj --runs 5\n");
    std::string file;
    int runs = 5;
    hp::MeshLoadOptions options;
    tool.cli.add_option("MESH", file)->required();
    tool.cli.add_option("--runs", runs)->check(CLI::Range(1, 100));
    tool.add_mesh_options(options);
    return tool.run(argc, argv, [&] {
        std::vector<double> seconds;
        hp::LoadedMesh m;
        for (int r = 0; r < runs; ++r) {
            auto t0 = std::chrono::steady_clock::now();
            m = hp::load_mesh(file, options);
            seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        }
        std::sort(seconds.begin(), seconds.end());
        nlohmann::json j{{"stage", "import"}, {"mesh", m.source_name}, {"runs", runs},
                         {"seconds", seconds[seconds.size() / 2]}, {"peak_rss", hp::peak_rss_bytes()},
                         {"notes", std::to_string(m.diagnostics.triangles) + " triangles"}};
        std::cout << j.dump() << std::endl;
        return 0;
    });
}
