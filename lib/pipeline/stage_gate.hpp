#pragma once
// lib/pipeline/stage_gate — lets a stage that times itself run alone in a batch.
//
// With -j N, N meshes run their stages at the same time. A stage whose output is a measurement of
// its own latency (the query stage's 1 kHz check) would then time the contention of its own batch
// on the cores: on a two-core machine with -j 2 (and some other work), about one query in fifty
// waited a scheduler tick (4 ms) and most meshes failed a 1 ms budget. Such a stage enters the
// gate alone: it waits until the stages running now have finished, and no stage starts while it
// runs. Waiting solo stages go first (a steady stream of other stages cannot starve them).
#include <condition_variable>
#include <mutex>

namespace hp::pipeline {

class StageGate {
public:
    // Held for the duration of one stage; `alone` for a stage that times itself.
    class Pass {
    public:
        Pass(StageGate& gate, bool alone) : gate_(gate), alone_(alone) { gate_.enter(alone_); }
        ~Pass() { gate_.leave(alone_); }
        Pass(const Pass&) = delete;
        Pass& operator=(const Pass&) = delete;

    private:
        StageGate& gate_;
        bool alone_;
    };

private:
    void enter(bool alone) {
        std::unique_lock lock(mutex_);
        if (alone) {
            ++alone_waiting_;
            changed_.wait(lock, [&] { return shared_ == 0 && !alone_running_; });
            --alone_waiting_;
            alone_running_ = true;
        } else {
            changed_.wait(lock, [&] { return !alone_running_ && alone_waiting_ == 0; });
            ++shared_;
        }
    }
    void leave(bool alone) {
        {
            std::lock_guard lock(mutex_);
            if (alone)
                alone_running_ = false;
            else
                --shared_;
        }
        changed_.notify_all();
    }

    std::mutex mutex_;
    std::condition_variable changed_;
    int shared_ = 0;         // ordinary stages running
    int alone_waiting_ = 0;  // solo stages waiting for the others to finish
    bool alone_running_ = false;
};

}  // namespace hp::pipeline
