// hp_fuzz_replay [--must-read] TARGET PATH... — runs every file of the given folders (and given
// files) through the entry function of TARGET, as the fuzzer does, with the normal compiler:
// `make test` keeps the corpus and the regression inputs (tests/fuzz/corpus/TARGET,
// tests/fuzz/regressions/TARGET) passing. A finding aborts (the entry prints what broke) after the
// name of the input is printed. --must-read: every input must also read without a refusal (the
// seeds of tests/fuzz/seeds/TARGET, from which the fuzzer reaches the parsers behind the gate).
// Exit 0: every input was read or cleanly refused; 1: --must-read and an input was refused;
// 2: usage, or no input found.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

#include "fuzz_targets.hpp"

namespace hp::fuzz {

const std::vector<Target>& all_targets() {
    static const std::vector<Target> targets = {
        {"hps", hps},
        {"hcfm", hcfm},
        {"hoct", hoct},
        {"hsmp", hsmp},
        {"vdb_field", vdb_field},
        {"vdb_shell_field", vdb_shell_field},
        {"vdb_gradient", vdb_gradient},
        {"pipeline", pipeline},
        {"manifest", manifest},
        {"poses", poses},
        {"scene", scene},
        {"mesh_obj", mesh_obj},
        {"mesh_stl", mesh_stl},
        {"mesh_ply", mesh_ply},
        {"mesh_off", mesh_off},
        {"mesh_gltf", mesh_gltf},
        {"mesh_glb", mesh_glb},
        {"mesh_dae", mesh_dae},
        {"mesh_3mf", mesh_3mf},
        {"step", step},
        {"iges", iges},
#ifdef HP_FUZZ_HAVE_BULLET
        {"bullet_scene", bullet_scene},
        {"hacd_cache", hacd_cache},
#endif
    };
    return targets;
}

}  // namespace hp::fuzz

int main(int argc, char** argv) {
    namespace fs = std::filesystem;
    using hp::fuzz::all_targets;
    const bool must_read = argc > 1 && std::strcmp(argv[1], "--must-read") == 0;
    if (must_read) {
        --argc;
        ++argv;
    }
    if (argc < 3) {
        std::fprintf(stderr, "usage: hp_fuzz_replay [--must-read] TARGET PATH...\ntargets:");
        for (const auto& t : all_targets()) std::fprintf(stderr, " %s", t.name);
        std::fprintf(stderr, "\n");
        return 2;
    }
    const auto it = std::find_if(all_targets().begin(), all_targets().end(),
                                 [&](const hp::fuzz::Target& t) { return std::strcmp(t.name, argv[1]) == 0; });
    if (it == all_targets().end()) {
        std::fprintf(stderr, "hp_fuzz_replay: unknown target '%s'\n", argv[1]);
        return 2;
    }
    std::vector<fs::path> inputs;
    for (int a = 2; a < argc; ++a) {
        const fs::path p = argv[a];
        if (fs::is_directory(p)) {
            for (const auto& e : fs::directory_iterator(p))
                if (e.is_regular_file()) inputs.push_back(e.path());
        } else if (fs::is_regular_file(p)) {
            inputs.push_back(p);
        }
    }
    std::sort(inputs.begin(), inputs.end());
    if (inputs.empty()) {
        std::fprintf(stderr, "hp_fuzz_replay: no input for target %s\n", it->name);
        return 2;
    }
    double slowest = 0;
    fs::path slowest_input;
    const auto start = std::chrono::steady_clock::now();
    for (const fs::path& p : inputs) {
        std::ifstream in(p, std::ios::binary);
        const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        std::fprintf(stderr, "%s\n", p.c_str());  // names the input a finding aborts on
        const auto t0 = std::chrono::steady_clock::now();
        const std::size_t refused_before = hp::fuzz::refusals();
        it->entry(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
        if (must_read && hp::fuzz::refusals() != refused_before) {
            std::fprintf(stderr, "hp_fuzz_replay: %s: refused, but it must read (a seed of %s)\n", p.c_str(), it->name);
            return 1;
        }
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (s > slowest) {
            slowest = s;
            slowest_input = p;
        }
    }
    const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("%s: %zu inputs replayed in %.2f s (slowest %.3f s: %s)\n", it->name, inputs.size(), total, slowest,
                slowest_input.filename().c_str());
    return 0;
}
