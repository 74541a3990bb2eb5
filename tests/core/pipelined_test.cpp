// SlicePipeline: a raster pass pipelined across lanes gives the sequential pass's result, every
// row starts only after the rows it reads are final, and a lane's exception reaches the caller.
#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "core/cpu.hpp"
#include "core/pipelined.hpp"

#include <tbb/global_control.h>

namespace {

// A raster recurrence over slices x rows x columns: each value mixes the value before it in its
// row, the row before in its slice and rows jj - 1 to jj + 1 of the slice before (the reads of a
// chamfer sweep). Any read of a value not yet final changes the result.
std::uint64_t mix(std::uint64_t h, std::uint64_t v) { return (h ^ v) * 0x100000001b3ull + 0x9e3779b97f4a7c15ull; }

struct Grid {
    int nz, ny, nx;
    std::vector<std::uint64_t> v;
    Grid(int z, int y, int x) : nz(z), ny(y), nx(x), v(static_cast<std::size_t>(z * y * x)) {
        for (std::size_t i = 0; i < v.size(); ++i) v[i] = i * 7919u;
    }
    std::uint64_t& at(int k, int j, int i) { return v[static_cast<std::size_t>((k * ny + j) * nx + i)]; }
    void row(int k, int j) {
        for (int i = 0; i < nx; ++i) {
            std::uint64_t h = at(k, j, i);
            if (i > 0) h = mix(h, at(k, j, i - 1));
            if (j > 0) h = mix(h, at(k, j - 1, i));
            if (k > 0)
                for (int jj = std::max(j - 1, 0); jj <= std::min(j + 1, ny - 1); ++jj) h = mix(h, at(k - 1, jj, i));
            at(k, j, i) = h;
        }
    }
};

}  // namespace

TEST(SlicePipeline, GivesTheSequentialResultForAnyLanesAndStartsRowsOnlyWhenTheirInputsAreFinal) {
    for (int ny : {1, 3, 8, 9, 23}) {
        Grid seq(37, ny, 5);
        for (int k = 0; k < seq.nz; ++k)
            for (int j = 0; j < seq.ny; ++j) seq.row(k, j);
        for (int lanes : {1, 2, 3, 4, 8, 64}) {
            Grid par(37, ny, 5);
            std::vector<std::atomic<int>> finished(static_cast<std::size_t>(par.nz * ny));
            std::atomic<int> early{0};
            hp::SlicePipeline pipeline(par.nz, ny);
            pipeline.run(lanes, [&](int kk, int, const hp::SlicePipeline::Gate& gate) {
                for (int jj = 0; jj < ny; ++jj) {
                    gate.before_row(jj);
                    if (kk > 0)
                        for (int r = std::max(jj - 1, 0); r <= std::min(jj + 1, ny - 1); ++r)
                            if (!finished[static_cast<std::size_t>((kk - 1) * ny + r)].load()) ++early;
                    par.row(kk, jj);
                    finished[static_cast<std::size_t>(kk * ny + jj)].store(1);
                    gate.after_row(jj);
                }
            });
            EXPECT_EQ(early.load(), 0) << ny << " rows, " << lanes << " lanes";
            EXPECT_EQ(par.v, seq.v) << ny << " rows, " << lanes << " lanes";
        }
    }
}

// A slice that skips its rows (returns early) is complete for the next; one that decides from the
// whole slice before waits for all of it.
TEST(SlicePipeline, SkippedSlicesAndWholeSliceWaits) {
    const int nz = 40, ny = 17;
    std::vector<std::atomic<int>> rows(nz);
    std::atomic<int> incomplete{0};
    hp::SlicePipeline pipeline(nz, ny);
    pipeline.run(3, [&](int kk, int, const hp::SlicePipeline::Gate& gate) {
        if (kk % 5 == 4) return;  // skipped
        if (kk % 5 == 2) {
            gate.wait_previous();
            if (rows[static_cast<std::size_t>(kk - 1)].load() != ny) ++incomplete;
        }
        for (int jj = 0; jj < ny; ++jj) {
            gate.before_row(jj);
            if (kk > 0 && kk % 5 != 0 && rows[static_cast<std::size_t>(kk - 1)].load() < std::min(jj + 2, ny)) ++incomplete;
            rows[static_cast<std::size_t>(kk)].store(jj + 1);
            gate.after_row(jj);
        }
    });
    EXPECT_EQ(incomplete.load(), 0);
}

TEST(SlicePipeline, AnExceptionInAnyLaneReachesTheCallerAndStopsTheOthers) {
    for (int thrower : {0, 1, 2}) {
        hp::SlicePipeline pipeline(60, 20);
        std::atomic<int> slices{0};
        EXPECT_THROW(pipeline.run(3,
                                  [&](int kk, int lane, const hp::SlicePipeline::Gate& gate) {
                                      for (int jj = 0; jj < 20; ++jj) {
                                          gate.before_row(jj);
                                          if (lane == thrower && kk >= 9 && jj == 5) throw std::runtime_error("row failed");
                                          gate.after_row(jj);
                                      }
                                      ++slices;
                                  }),
                     std::runtime_error)
            << "lane " << thrower;
        EXPECT_LT(slices.load(), 60) << "the other lanes stop at their next wait";
    }
}

// The tools' --threads is TBB's max_allowed_parallelism: the pipelined passes take their lanes from it.
TEST(SlicePipeline, WorkerThreadsFollowTheToolsThreadLimit) {
    const int all = hp::worker_threads();
    EXPECT_GE(all, 1);
    {
        tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
        EXPECT_EQ(hp::worker_threads(), 1);
    }
    EXPECT_EQ(hp::worker_threads(), all);
}

// Small grids run on one lane (no thread to start), others on as many lanes as threads, at most
// one per slice; the threshold can be lowered.
TEST(SlicePipeline, SmallGridsRunOnOneLane) {
    const std::size_t min_cells = hp::pipeline_min_cells().load();
    EXPECT_EQ(hp::pipeline_lanes(8, 20, 20 * 20 * 20), 1);  // a 12-triangle cube at 16 voxels
    EXPECT_EQ(hp::pipeline_lanes(8, 300, min_cells - 1), 1);
    EXPECT_EQ(hp::pipeline_lanes(2, 300, min_cells), 2);
    EXPECT_EQ(hp::pipeline_lanes(8, 3, min_cells), 3);
    EXPECT_EQ(hp::pipeline_lanes(0, 300, min_cells), 1);
    {
        const hp::ScopedPipelineMinCells all(0);
        EXPECT_EQ(hp::pipeline_lanes(8, 20, 8000), 8);
    }
    EXPECT_EQ(hp::pipeline_min_cells().load(), min_cells);
}
