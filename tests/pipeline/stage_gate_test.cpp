// StageGate: a solo stage never overlaps another stage, ordinary stages overlap each other, and
// a waiting solo stage goes before ordinary stages that arrive after it.
#include "pipeline/stage_gate.hpp"

#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

using hp::pipeline::StageGate;

TEST(StageGate, SoloStagesRunAloneOrdinaryStagesTogether) {
    StageGate gate;
    std::atomic<int> inside{0}, solo_inside{0}, violations{0}, max_together{0}, solos{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 6; ++t)
        threads.emplace_back([&, t] {
            std::mt19937 rng(static_cast<unsigned>(t));
            for (int i = 0; i < 300; ++i) {
                const bool alone = rng() % 5 == 0;
                StageGate::Pass pass(gate, alone);
                const int now = ++inside;
                if (alone) {
                    ++solo_inside;
                    ++solos;
                    if (now != 1) ++violations;
                } else if (solo_inside.load() != 0) {
                    ++violations;
                }
                int seen = max_together.load();
                while (now > seen && !max_together.compare_exchange_weak(seen, now)) {}
                std::this_thread::sleep_for(std::chrono::microseconds(rng() % 50));
                if (alone) --solo_inside;
                --inside;
            }
        });
    for (auto& th : threads) th.join();
    EXPECT_EQ(violations.load(), 0);
    EXPECT_GT(solos.load(), 100);
    EXPECT_GT(max_together.load(), 1);  // ordinary stages did overlap
}

TEST(StageGate, AWaitingSoloStageGoesFirst) {
    StageGate gate;
    std::mutex m;
    std::vector<std::string> order;
    auto log = [&](const std::string& what) {
        std::lock_guard lock(m);
        order.push_back(what);
    };
    std::optional<StageGate::Pass> first(std::in_place, gate, false);  // an ordinary stage is running
    std::thread solo([&] {
        StageGate::Pass pass(gate, true);
        log("solo");
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the solo stage is waiting now
    std::thread late([&] {
        StageGate::Pass pass(gate, false);
        log("late");
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    {
        std::lock_guard lock(m);
        EXPECT_TRUE(order.empty());  // neither ran while the first stage held its pass
    }
    first.reset();
    solo.join();
    late.join();
    ASSERT_EQ(order.size(), 2u);
    EXPECT_EQ(order[0], "solo");
    EXPECT_EQ(order[1], "late");
}
