#pragma once
// A raster pass over the slices of a grid, pipelined across threads (a wavefront).
//
// Row jj of slice kk (both in the pass's order) reads rows up to jj + 1 of slice kk - 1 and the
// rows before it in its own slice, all final in this pass. `pipeline_slices` runs slice kk on lane
// kk % lanes, and row jj of it once slice kk - 1 has finished rows up to jj + 1: every row sees
// exactly what a sequential pass would give it, so the result does not depend on the lanes.
// Lane 0 is the calling thread, the others threads of their own (a lane may wait for another, so
// they must all run at once, which a task pool does not promise). An exception in a lane stops
// the others at their next wait and is rethrown on the calling thread once all have stopped.
#include <algorithm>
#include <atomic>
#include <climits>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace hp {

// Grids of fewer cells than this run their passes on one lane: a lane's thread costs tens of
// microseconds to start (milliseconds on a loaded machine), more than a pass over such a grid
// (about a nanosecond per cell). Tests lower it to pipeline small grids.
inline std::atomic<std::size_t>& pipeline_min_cells() {
    static std::atomic<std::size_t> cells{std::size_t{1} << 17};
    return cells;
}

// Sets pipeline_min_cells() while it lives (tests that pipeline small grids).
class ScopedPipelineMinCells {
public:
    explicit ScopedPipelineMinCells(std::size_t cells) : before_(pipeline_min_cells().exchange(cells)) {}
    ~ScopedPipelineMinCells() { pipeline_min_cells().store(before_); }
    ScopedPipelineMinCells(const ScopedPipelineMinCells&) = delete;
    ScopedPipelineMinCells& operator=(const ScopedPipelineMinCells&) = delete;

private:
    std::size_t before_;
};

// The lanes a pass over `slices` slices of `cells` cells in all runs on, given `threads`.
inline int pipeline_lanes(int threads, int slices, std::size_t cells) {
    if (cells < pipeline_min_cells().load(std::memory_order_relaxed)) return 1;
    return std::clamp(threads, 1, std::max(slices, 1));
}

class SlicePipeline {
public:
    SlicePipeline(int slices, int rows) : rows_(rows), done_(static_cast<std::size_t>(std::max(slices, 0))) {
        for (auto& d : done_) d.store(0, std::memory_order_relaxed);
    }

    // What a slice's work sees of the pass: waits on the slice before, and publishes its rows.
    class Gate {
    public:
        // Before row jj: waits until the slice before has finished rows up to jj + 1 (if it has
        // not, until it has finished a whole group of rows beyond them, so that a lane that caught
        // up with the one before does not wait again at the next row).
        void before_row(int jj) const {
            if (kk_ > 0) p_->wait(kk_ - 1, std::min(jj + 2, p_->rows_));
        }
        // After row jj: the slice after may go on to row jj - 1.
        void after_row(int jj) const { p_->publish(kk_, jj + 1); }
        // Waits until the slice before is complete (for a decision that needs all of it).
        void wait_previous() const {
            if (kk_ > 0) p_->wait(kk_ - 1, p_->rows_);
        }

    private:
        friend class SlicePipeline;
        Gate(SlicePipeline* p, int kk) : p_(p), kk_(kk) {}
        SlicePipeline* p_;
        int kk_;
    };

    // Runs slice(kk, lane, gate) for every slice kk in pass order on `lanes` lanes; a slice is
    // complete for the next when its call returns (whether or not it called after_row).
    template <class Slice>
    void run(int lanes, Slice&& slice) {
        const int slices = static_cast<int>(done_.size());
        lanes = std::clamp(lanes, 1, std::max(slices, 1));
        auto lane = [&](int t) {
            try {
                for (int kk = t; kk < slices; kk += lanes) {
                    slice(kk, t, Gate(this, kk));
                    publish(kk, rows_);
                }
            } catch (...) {
                abort(std::current_exception());
            }
        };
        std::vector<std::thread> pool;
        for (int t = 1; t < lanes; ++t) pool.emplace_back(lane, t);
        lane(0);
        for (auto& th : pool) th.join();
        if (error_) std::rethrow_exception(error_);
    }

private:
    struct Aborted {};

    // Rows are published one by one but waiters are woken once per group of kGroup rows (and at
    // a slice's end): a wake-up costs a system call, a row of a sweep about a microsecond.
    static constexpr int kGroup = 8;

    void wait(int kk, int need) {
        auto& d = done_[static_cast<std::size_t>(kk)];
        int seen = d.load(std::memory_order_acquire);
        if (seen >= need) return;
        const int target = std::min((need + kGroup - 1) / kGroup * kGroup, rows_);
        for (; seen < target; seen = d.load(std::memory_order_acquire)) d.wait(seen, std::memory_order_acquire);
        if (aborted_.load(std::memory_order_acquire)) throw Aborted{};
    }
    void publish(int kk, int rows) {
        auto& d = done_[static_cast<std::size_t>(kk)];
        d.store(rows, std::memory_order_release);
        if (rows % kGroup == 0 || rows >= rows_) d.notify_all();
    }
    void abort(std::exception_ptr e) {
        {
            std::lock_guard<std::mutex> lock(error_mutex_);
            if (!error_ && e) {
                try {
                    std::rethrow_exception(e);
                } catch (const Aborted&) {
                    // Another lane's failure stopped this one: that lane keeps its own error.
                } catch (...) {
                    error_ = e;
                }
            }
        }
        aborted_.store(true, std::memory_order_release);
        for (auto& d : done_) {
            d.store(INT_MAX, std::memory_order_release);
            d.notify_all();
        }
    }

    const int rows_;
    std::vector<std::atomic<int>> done_;
    std::atomic<bool> aborted_{false};
    std::mutex error_mutex_;
    std::exception_ptr error_;
};

}  // namespace hp
