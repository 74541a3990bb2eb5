#include "core/atomic_file.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

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

// Special output paths: a symbolic link is followed (its target replaced, the link kept); a FIFO
// or a device node is written as a stream and stays what it was.
TEST(AtomicFile, SymlinkKeepsTheLinkAndReplacesItsTarget) {
    fs::path dir = fresh_dir("link");
    fs::create_directories(dir / "real");
    hp::write_file_atomically(dir / "real" / "target.bin", "old");
    fs::create_symlink(fs::path("real") / "target.bin", dir / "link.bin");  // relative target
    hp::write_file_atomically(dir / "link.bin", "new");
    EXPECT_TRUE(fs::is_symlink(dir / "link.bin"));
    EXPECT_EQ(hp::read_file(dir / "real" / "target.bin"), "new");
    EXPECT_EQ(std::distance(fs::directory_iterator(dir / "real"), fs::directory_iterator()), 1);

    fs::create_symlink(dir / "real" / "made.bin", dir / "dangling.bin");  // absolute, dangling
    hp::write_file_atomically(dir / "dangling.bin", "made");
    EXPECT_TRUE(fs::is_symlink(dir / "dangling.bin"));
    EXPECT_EQ(hp::read_file(dir / "real" / "made.bin"), "made");

    fs::create_symlink("loop-b", dir / "loop-a");
    fs::create_symlink("loop-a", dir / "loop-b");
    try {
        hp::write_file_atomically(dir / "loop-a", "x");
        FAIL() << "expected an error";
    } catch (const hp::Error& e) {
        EXPECT_EQ(e.code(), hp::ExitCode::cannot_write);
        EXPECT_NE(std::string(e.what()).find("symbolic links"), std::string::npos) << e.what();
    }
    fs::remove_all(dir);
}

TEST(AtomicFile, FifoIsWrittenAsAStream) {
    fs::path dir = fresh_dir("fifo");
    const fs::path fifo = dir / "pipe";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
    std::string payload(3 << 20, '\0');  // larger than a pipe's buffer and than one copy block
    for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<char>(i * 7 + i / 4096);
    // The reader is a child process that gives up after 10 s, so that a writer which replaces the
    // FIFO instead of opening it fails the test instead of hanging it.
    const fs::path got = dir / "received";
    const pid_t child = ::fork();
    ASSERT_GE(child, 0) << std::strerror(errno);
    if (child == 0) {
        ::alarm(10);
        std::ifstream in(fifo, std::ios::binary);
        std::ofstream out(got, std::ios::binary);
        out << in.rdbuf();
        out.close();  // _exit runs no destructors
        ::_exit(out ? 0 : 1);
    }
    hp::write_file_atomically(fifo, payload);
    int status = 0;
    ::waitpid(child, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the reader did not get the file";
    const std::string received = fs::exists(got) ? hp::read_file(got) : std::string();
    EXPECT_EQ(received.size(), payload.size());
    EXPECT_TRUE(received == payload);
    EXPECT_EQ(fs::status(fifo).type(), fs::file_type::fifo);
    EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 2);  // pipe, received
    fs::remove_all(dir);
}

// Device nodes of the test's own: "full" (1, 7) fails every write with ENOSPC, "null" (1, 3)
// takes everything. Creating them needs root (CAP_MKNOD) and a folder not mounted nodev.
TEST(AtomicFile, DeviceNodeIsWrittenAsAStreamAndAFullDeviceFails) {
    fs::path dir = fresh_dir("dev");
    const fs::path full = dir / "full", null = dir / "null";
    if (::mknod(full.c_str(), S_IFCHR | 0600, makedev(1, 7)) != 0 ||
        ::mknod(null.c_str(), S_IFCHR | 0600, makedev(1, 3)) != 0) {
        const std::string why = std::strerror(errno);
        fs::remove_all(dir);
        GTEST_SKIP() << "cannot create device nodes here (" << why << "); needs root";
    }
    if (int fd = ::open(null.c_str(), O_WRONLY); fd < 0) {
        const std::string why = std::strerror(errno);
        fs::remove_all(dir);
        GTEST_SKIP() << "device nodes cannot be opened in " << dir << " (" << why << "; mounted nodev?)";
    } else {
        ::close(fd);
    }
    hp::write_file_atomically(null, std::string(100000, 'x'));
    EXPECT_EQ(fs::status(null).type(), fs::file_type::character);
    try {
        hp::write_file_atomically(full, std::string(100000, 'x'));
        FAIL() << "expected an error";
    } catch (const hp::Error& e) {
        EXPECT_EQ(e.code(), hp::ExitCode::cannot_write);
        EXPECT_NE(std::string(e.what()).find("No space left"), std::string::npos) << e.what();
    }
    EXPECT_EQ(fs::status(full).type(), fs::file_type::character);
    EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 2);
    fs::remove_all(dir);
}
