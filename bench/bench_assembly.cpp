// What preparing an assembly adds to preparing its geometries alone (docs/scene.md): reading the
// file as parts, taking each geometry from it, and writing scene.json, against importing the same
// geometries from files of their own. One JSON line per row for bench/run.sh; medians of --runs.
//   bench_assembly ASSEMBLY.gltf ALONE_DIR [--runs 5]
// ALONE_DIR holds g<i>.gltf, geometry i alone (bench/make_bench_assembly.py --alone).
#include <chrono>
#include <filesystem>
#include <iostream>
#include <vector>

#include "bench_common.hpp"
#include "common/tool.hpp"
#include "core/memory.hpp"
#include "mesh/assembly.hpp"
#include "scene/scene_file.hpp"

namespace fs = std::filesystem;
using hp::bench::median;
using hp::bench::seconds_since;

int main(int argc, char** argv) {
    hp::app::Tool tool("bench_assembly", "Time what an assembly adds to preparing its geometries.",
                       "Example:\n  bench_assembly asm1000.gltf alone/ --runs 5\n");
    std::string file, alone;
    int runs = 5;
    tool.cli.add_option("ASSEMBLY", file)->required();
    tool.cli.add_option("ALONE_DIR", alone)->required();
    tool.cli.add_option("--runs", runs)->check(CLI::Range(1, 100));
    return tool.run(argc, argv, [&] {
        std::vector<double> read_s, parts_s, alone_s, scene_s;
        std::size_t parts = 0, geometries = 0, triangles = 0;
        const fs::path scene_path = fs::temp_directory_path() / "bench_assembly_scene.json";
        for (int r = 0; r < runs; ++r) {
            auto t0 = std::chrono::steady_clock::now();
            const hp::Assembly a = hp::read_assembly(file);
            read_s.push_back(seconds_since(t0));
            parts = a.parts.size();
            geometries = a.geometries.size();
            // Each geometry as the pipeline's stages take it (three stages read the mesh).
            t0 = std::chrono::steady_clock::now();
            triangles = 0;
            std::vector<hp::Aabb> bounds;
            for (std::size_t g = 0; g < geometries; ++g) {
                const hp::LoadedMesh m = hp::prepare_geometry(a, g, {}, file);
                triangles += m.diagnostics.triangles;
                bounds.push_back(m.diagnostics.bbox);
            }
            parts_s.push_back(3 * seconds_since(t0));
            // The same geometries imported from their own files, as a batch of single meshes reads them.
            t0 = std::chrono::steady_clock::now();
            for (std::size_t g = 0; g < geometries; ++g) hp::load_mesh(fs::path(alone) / ("g" + std::to_string(g) + ".gltf"));
            alone_s.push_back(3 * seconds_since(t0));
            // scene.json for the whole assembly.
            t0 = std::chrono::steady_clock::now();
            hp::scene::Scene s;
            s.source_file = file;
            s.units = "file units";
            for (std::size_t g = 0; g < geometries; ++g) {
                hp::scene::SceneGeometry sg;
                sg.id = a.geometries[g].id;
                sg.local_bounds = bounds[g];
                s.geometries.push_back(sg);
            }
            for (const auto& p : a.parts) s.parts.push_back(hp::scene::make_scene_part(p, bounds[p.geometry]));
            hp::scene::write_scene(scene_path, s);
            scene_s.push_back(seconds_since(t0));
        }
        fs::remove(scene_path);
        const double added = median(read_s) + median(parts_s) + median(scene_s) - median(alone_s);
        nlohmann::json j{{"stage", "assembly"},
                         {"mesh", fs::path(file).filename().string()},
                         {"runs", runs},
                         {"seconds", added},
                         {"peak_rss", hp::peak_rss_bytes()},
                         {"notes", std::to_string(parts) + " parts of " + std::to_string(geometries) + " geometries (" +
                                       std::to_string(triangles) + " triangles): what the assembly adds to preparing " +
                                       "them alone; read as parts " + std::to_string(median(read_s)) +
                                       " s, geometries taken x3 stages " + std::to_string(median(parts_s)) +
                                       " s, scene.json " + std::to_string(median(scene_s)) + " s, against importing " +
                                       "them alone x3 " + std::to_string(median(alone_s)) + " s (target <= 1 s)"}};
        std::cout << j.dump() << std::endl;
        return 0;
    });
}
