// The memory estimate before any work: a gradient grid counts, dense and band, in the voxelize
// stage's choice (for its pipeline's distance stage) and in the distance stage's own check; the
// refusal names what would fit. Figures by hand from the documented bytes per voxel.
#include "pipeline/memory_model.hpp"

#include <cstdlib>
#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "../core/usage_error.hpp"

namespace hp::pipeline {
namespace {

using test::usage_error;

// The voxel size the message suggests ("... a voxel size of at least T").
double suggested_size(const std::string& message) {
    const std::string key = "voxel size of at least ";
    const std::size_t at = message.find(key);
    EXPECT_NE(at, std::string::npos) << message;
    return at == std::string::npos ? 0 : std::atof(message.c_str() + at + key.size());
}

// A unit cube's box at voxel size 0.01 without padding: 100^3 = 10^6 voxels; dense 40 bytes per
// voxel (40 MB), 56 with a gradient (56 MB). Memory 60 MB: 90 % is 54 MB.
const Aabb kBox{{0, 0, 0}, {1, 1, 1}};
constexpr double kMemory = 60e6;

TEST(MemoryModel, DenseGradientCounts) {
    EXPECT_DOUBLE_EQ(dense_bytes(dims_for(kBox, 0.01, 0), false), 40e6);
    EXPECT_DOUBLE_EQ(dense_bytes(dims_for(kBox, 0.01, 0), true), 56e6);
    EXPECT_DOUBLE_EQ(dense_bytes(dims_for(kBox, 0.01, 2), false), 104.0 * 104 * 104 * 40);
}

TEST(MemoryModel, BandGradientCounts) {
    // Area 0.5: 1.5 * 0.5 / 0.01^2 = 7500 surface voxels, 17 layers at band 8, bricks double it:
    // 255,000 voxels; 13^3 blocks, 100^2 rows.
    const double blocks = 13.0 * 13 * 13 * 16, rows = 100.0 * 100 * 12;
    EXPECT_NEAR(band_bytes(dims_for(kBox, 0.01, 0), 0.5, 0.01, 8, false), 255000.0 * 16 + blocks + rows, 1e-3);
    EXPECT_NEAR(band_bytes(dims_for(kBox, 0.01, 0), 0.5, 0.01, 8, true), 255000.0 * 20 + blocks + rows, 1e-3);
}

TEST(MemoryModel, VoxelizeRefusesADenseGridWhoseGradientWouldNotFit) {
    // Without a gradient 40 MB fits in 54 MB; with it 56 MB does not.
    EXPECT_EQ(choose_field_mode(kBox, 0.5, 0.01, 0, 0, false, kMemory).band, 0);
    const std::string e = usage_error([] { choose_field_mode(kBox, 0.5, 0.01, 0, 0, true, kMemory); });
    EXPECT_NE(e.find("with the gradient"), std::string::npos) << e;
    EXPECT_NE(e.find("--band 8"), std::string::npos) << e;  // 5.1 MB with the gradient: fits
    // 98^3 * 56 = 52.7 MB fits, 99^3 * 56 = 54.3 MB does not: at least 1/98, in 1 % steps from 0.01.
    const double t = suggested_size(e);
    EXPECT_GE(t, 1.0 / 98);
    EXPECT_LE(t, 1.01 / 98);
}

TEST(MemoryModel, AutomaticChoiceCountsTheGradient) {
    // Half of 100 MB: 40 MB dense fits, 56 MB with the gradient does not: band 8 instead.
    EXPECT_EQ(choose_field_mode(kBox, 0.5, 0.01, 0, std::nullopt, false, 100e6).band, 0);
    const FieldMode m = choose_field_mode(kBox, 0.5, 0.01, 0, std::nullopt, true, 100e6);
    EXPECT_EQ(m.band, kAutoBand);
    EXPECT_NE(m.reason.find("with the gradient"), std::string::npos) << m.reason;
}

TEST(MemoryModel, DistanceStageRefusesItsGradientBeforeAnyWork) {
    // Dense: fits without the gradient, refused with it; the hints name a band and no gradient.
    EXPECT_NO_THROW(check_distance_fits(kBox, 0.5, 0.01, 0, 0, false, kMemory, "--band", "--gradient"));
    const std::string e = usage_error([] { check_distance_fits(kBox, 0.5, 0.01, 0, 0, true, kMemory, "--band", "--gradient"); });
    EXPECT_NE(e.find("--band 8"), std::string::npos) << e;
    EXPECT_NE(e.find("no --gradient"), std::string::npos) << e;
    EXPECT_GE(suggested_size(e), 1.0 / 98);
    // Band 8 over area 6: 1.5 * 6 / 0.01^2 * 17 * 2 = 3,060,000 voxels: 49.0 MB without the
    // gradient (fits in 54), 61.2 MB with it (refused).
    EXPECT_NO_THROW(check_distance_fits(kBox, 6, 0.01, 0, 8, false, kMemory, "band", "gradient"));
    const std::string b = usage_error([] { check_distance_fits(kBox, 6, 0.01, 0, 8, true, kMemory, "band", "gradient"); });
    EXPECT_NE(b.find("band-8 distance field"), std::string::npos) << b;
    EXPECT_NE(b.find("no gradient"), std::string::npos) << b;
    // Narrower bands with the gradient (layers 2B + 1, brick factor 1 + 8 / B, 20 bytes): band 7
    // 57.9 MB, band 6 54.6 MB, band 5 51.5 MB (+ 0.2 MB of blocks and rows): band 5 is the widest.
    EXPECT_NE(b.find("band 5 or"), std::string::npos) << b;
}

}  // namespace
}  // namespace hp::pipeline
