#include "inspect/export_ply.hpp"

#include <cstring>
#include <filesystem>
#include <sstream>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>

#include "core/atomic_file.hpp"

namespace {
std::filesystem::path temp_path(const char* name) {
    return std::filesystem::temp_directory_path() / (std::string("hp_ply_") + std::to_string(::getpid()) + "_" + name);
}
}  // namespace

TEST(ExportPly, BinaryLayoutIsTheHeaderThen24BytesPerPoint) {
    const std::vector<hp::Vec3d> pts = {{1, 2, 3}, {-0.5, 0.25, 1e-3}};
    const std::vector<hp::Vec3d> nrm = {{0, 0, 1}, {1, 0, 0}};
    const auto path = temp_path("b.ply");
    hp::inspect::write_ply(path, pts, nrm, false, "test");
    const std::string bytes = hp::read_file(path);
    const std::string header =
        "ply\nformat binary_little_endian 1.0\ncomment test\nelement vertex 2\nproperty float x\nproperty float y\n"
        "property float z\nproperty float nx\nproperty float ny\nproperty float nz\nend_header\n";
    ASSERT_EQ(bytes.size(), header.size() + 2 * 24);
    EXPECT_EQ(bytes.substr(0, header.size()), header);
    float v[12];
    std::memcpy(v, bytes.data() + header.size(), sizeof v);
    const float want[12] = {1, 2, 3, 0, 0, 1, -0.5f, 0.25f, 1e-3f, 1, 0, 0};
    for (int i = 0; i < 12; ++i) EXPECT_EQ(v[i], want[i]) << i;
    std::filesystem::remove(path);
}

TEST(ExportPly, AsciiReadsBackToTheSameFloats) {
    const std::vector<hp::Vec3d> pts = {{0.1, 0.2, 0.3}, {123.456789, -1e-7, 7}};
    const std::vector<hp::Vec3d> nrm = {{0.6, 0.8, 0}, {0, -1, 0}};
    const auto path = temp_path("a.ply");
    hp::inspect::write_ply(path, pts, nrm, true);
    std::istringstream in(hp::read_file(path));
    std::string line;
    std::getline(in, line);
    EXPECT_EQ(line, "ply");
    std::getline(in, line);
    EXPECT_EQ(line, "format ascii 1.0");
    while (std::getline(in, line) && line != "end_header") {
    }
    for (std::size_t i = 0; i < pts.size(); ++i) {
        double v[6];
        for (double& x : v) in >> x;
        const double want[6] = {pts[i].x, pts[i].y, pts[i].z, nrm[i].x, nrm[i].y, nrm[i].z};
        for (int k = 0; k < 6; ++k) EXPECT_EQ(static_cast<float>(v[k]), static_cast<float>(want[k])) << i << "," << k;
    }
    std::filesystem::remove(path);
    EXPECT_THROW(hp::inspect::write_ply(path, pts, std::vector<hp::Vec3d>{}), std::invalid_argument);
}
