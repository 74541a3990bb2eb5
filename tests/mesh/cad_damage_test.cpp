// Damaged copies of every STEP and IGES file the CAD tests write (cad_test_files.hpp): cut short
// at several points (refused by the reader's check of the file's end), cut with the end put back
// (so that OpenCASCADE's parsers meet entities that are missing or cut in half), and with one bit
// flipped at several offsets. Every copy is read or refused with hp::Error naming the file, with
// the exit code of bad input (3); haptic-dump and haptic-voxelize, on a share of the copies, exit
// 0 or 3: never 2, a signal or a timeout.
//
// HP_CAD_SEEDS=DIR also copies the intact files into DIR: they are the seeds of the STEP and IGES
// fuzz targets (tests/fuzz/corpus/step, tests/fuzz/corpus/iges; docs/fuzzing.md).
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "cad_test_files.hpp"
#include "core/error.hpp"
#include "mesh/mesh.hpp"

using namespace cad_test;

namespace {

bool is_step(const fs::path& p) { return p.extension() == ".step"; }

// The end of a file that `cut` removed, put back: STEP's closing lines, or an IGES Terminate record.
std::string end_of(const fs::path& file) {
    if (is_step(file)) return "\nENDSEC;\nEND-ISO-10303-21;\n";
    return "\n" + std::string("S0000001G0000004D0000020P0000030") + std::string(40, ' ') + "T0000001\n";
}

struct Copy {
    std::string name;
    std::string bytes;
    bool reaches_parser;  // past the check of the file's start and end
};

std::vector<Copy> damaged_copies(const fs::path& file) {
    const std::string bytes = slurp(file), stem = file.filename().string();
    std::vector<Copy> out;
    for (std::size_t k = 1; k < 8; ++k) {
        const std::size_t at = bytes.size() * k / 8;
        out.push_back({"cut" + std::to_string(k) + "-" + stem, bytes.substr(0, at), false});
        // IGES records are lines: cut at a line's start, so that the Terminate record is one.
        const std::size_t line = is_step(file) ? at : bytes.rfind('\n', at) + 1;
        out.push_back({"cutend" + std::to_string(k) + "-" + stem, bytes.substr(0, line) + end_of(file), true});
    }
    for (std::size_t k = 1; k < 9; ++k) {
        std::string flipped = bytes;
        flipped[bytes.size() * k / 9] ^= static_cast<char>(1u << (k - 1));
        out.push_back({"flip" + std::to_string(k) + "-" + stem, flipped, true});
    }
    return out;
}

}  // namespace

TEST(CadDamage, EveryCopyIsReadOrRefusedAsBadInput) {
    const std::vector<fs::path> files = all_test_files();
    if (const char* seeds = std::getenv("HP_CAD_SEEDS"))
        for (const fs::path& f : files) fs::copy_file(f, fs::path(seeds) / f.filename(), fs::copy_options::overwrite_existing);
    const fs::path dir = temp_dir() / "damaged";
    fs::create_directories(dir);
    std::size_t read = 0, refused = 0;
    for (const fs::path& file : files) {
        for (const Copy& copy : damaged_copies(file)) {
            const fs::path path = dir / copy.name;
            spill(path, copy.bytes);
            try {
                const hp::LoadedMesh m = hp::load_mesh(path);
                EXPECT_TRUE(copy.reaches_parser) << path << " was read, cut short";
                EXPECT_GT(m.diagnostics.triangles, 0u) << path;
                ++read;
            } catch (const hp::Error& e) {
                EXPECT_EQ(e.code(), hp::ExitCode::bad_input) << path << ": " << e.what();
                const std::string what = e.what();
                EXPECT_NE(what.find(path.string()), std::string::npos) << what;
                EXPECT_EQ(what.find('\n'), std::string::npos) << what;
                ++refused;
            }
        }
    }
    // The copies are damaged, not destroyed: some are still read (a flipped digit of a
    // coordinate), the cut ones never.
    EXPECT_GT(read, 0u);
    EXPECT_GT(refused, files.size() * 7);
    // The process reads on after the copies that crashed OpenCASCADE's translators: the intact
    // files, a face that does not mesh among them, as a process that read none of the copies.
    spill(dir / "degenerate-face.step",
          [&] {
              std::string bytes = slurp(files[0]);  // the box: its first face's plane, a cylinder of radius 0
              const std::string plane = "#32 = PLANE('',#33);";
              EXPECT_NE(bytes.find(plane), std::string::npos);
              return bytes.replace(bytes.find(plane), plane.size(), "#32 = CYLINDRICAL_SURFACE('',#33,0.);");
          }());
    EXPECT_EQ(hp::load_mesh(dir / "degenerate-face.step").notes.size(), 1u);
    for (const fs::path& file : files) {
        if (file.filename() == "edge.step") continue;  // curves only: refused
        EXPECT_GT(hp::load_mesh(file).diagnostics.triangles, 0u) << file;
    }
}

TEST(CadDamage, ToolsExitZeroOrThree) {
    const fs::path dir = temp_dir() / "damaged-tools";
    fs::create_directories(dir);
    // Per file, one copy through one of the two tools, in turn: a cut with its end put back, a flip.
    std::size_t turn = 0;
    for (const fs::path& file : all_test_files()) {
        const std::vector<Copy> copies = damaged_copies(file);
        const Copy& copy = copies[turn % 2 == 0 ? 5 : copies.size() - 3];
        const fs::path path = dir / copy.name;
        spill(path, copy.bytes);
        const std::string tool = turn++ % 2 == 0 ? "haptic-dump --parts --json " + path.string()
                                                 : "haptic-voxelize " + path.string() + " --resolution 16 --quiet -o " +
                                                       (dir / "out.vdb").string();
        const int code = run(tool);
        EXPECT_TRUE(code == 0 || code == 3) << tool << ": exit " << code;
    }
}
