#include "core/atomic_file.hpp"

#include <filesystem>
#include <stdexcept>

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace fs = std::filesystem;

namespace {
fs::path fresh_dir(const std::string& name) {
    fs::path dir = fs::temp_directory_path() / ("hp_atomic_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}
}  // namespace

TEST(AtomicFile, WritesAndReadsBack) {
    fs::path dir = fresh_dir("rw");
    hp::write_file_atomically(dir / "out.bin", std::string("abc\0def", 7));
    EXPECT_EQ(hp::read_file(dir / "out.bin"), std::string("abc\0def", 7));
    EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
    fs::remove_all(dir);
}

TEST(AtomicFile, FailureLeavesNoFileAndKeepsOldOne) {
    fs::path dir = fresh_dir("fail");
    hp::write_file_atomically(dir / "out.bin", "old");
    EXPECT_THROW(hp::write_atomically(dir / "out.bin",
                                      [](const fs::path& tmp) {
                                          hp::write_file_atomically(tmp, "half");
                                          throw std::runtime_error("interrupted");
                                      }),
                 std::runtime_error);
    EXPECT_EQ(hp::read_file(dir / "out.bin"), "old");
    EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
    fs::remove_all(dir);
}

TEST(AtomicFile, MissingFolderIsCannotWrite) {
    try {
        hp::write_file_atomically("/nonexistent-folder-hp/x.bin", "x");
        FAIL() << "expected an error";
    } catch (const hp::Error& e) {
        EXPECT_EQ(e.code(), hp::ExitCode::cannot_write);
        EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos);
    }
}

TEST(AtomicFile, MissingInputIsBadInput) {
    try {
        (void)hp::read_file("/nonexistent-folder-hp/in.stl");
        FAIL() << "expected an error";
    } catch (const hp::Error& e) {
        EXPECT_EQ(e.code(), hp::ExitCode::bad_input);
    }
}
