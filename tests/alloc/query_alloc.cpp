// No allocation per query once warm: the promise of VpsQuery and QuerySession to a 1 kHz loop.
//
// This binary replaces the global operator new/delete (every form) with counting versions that
// forward to malloc/free, so it is kept apart from hp_unit_tests. A test warms a query up on a set
// of poses (the buffers grow to what those poses need), then runs the same poses again and
// requires that no operator new ran in between.
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <new>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <unistd.h>

#include "../query/ball_fixture.hpp"
#include "contact/query.hpp"
#include "query/session.hpp"

#include "counting_new.hpp"

namespace {

namespace fs = std::filesystem;
using Fixture = hp_test::BallScene;

// Allocations made by `f`.
template <class F>
long allocations_in(F&& f) {
    const long before = g_allocations.load();
    f();
    return g_allocations.load() - before;
}

}  // namespace

TEST(NoAllocation, CounterSeesAllocations) {
    // The replacement is in effect: a vector's storage and a string's heap buffer count.
    EXPECT_GE(allocations_in([] {
                  std::vector<int> v(1000, 1);
                  std::string s(100, 'x');
                  ASSERT_EQ(v.size() + s.size(), 1100u);
              }),
              2);
}

TEST(NoAllocation, VpsQueryAfterWarmUp) {
    const Fixture fx;
    const hp::MovingObject moving = fx.view();
    const std::vector<hp::QueryOptions> all{{.mode = hp::QueryMode::full},
                                            {.mode = hp::QueryMode::brute},
                                            {.mode = hp::QueryMode::segmented, .level = 2},
                                            {.mode = hp::QueryMode::time_critical, .budget_us = 1e9}};
    for (const hp::QueryOptions& options : all) {
        SCOPED_TRACE(static_cast<int>(options.mode));
        hp::VpsQuery query(fx.field, moving, options);
        std::size_t touching = 0, largest = 0, smallest = moving.points.size();
        for (const hp::Pose& pose : fx.poses) {  // warm-up: the buffers grow here
            const std::size_t n = query(pose).contacts.size();
            touching += n > 0;
            largest = std::max(largest, n);
            smallest = std::min(smallest, n);
        }
        // The poses exercise the buffers: contact counts vary, some poses touch nothing.
        EXPECT_GT(touching, fx.poses.size() / 4);
        EXPECT_LT(touching, fx.poses.size());
        EXPECT_GT(largest, 1u);
        EXPECT_EQ(smallest, 0u);
        std::size_t contacts = 0;
        const long n = allocations_in([&] {
            for (int round = 0; round < 3; ++round)
                for (const hp::Pose& pose : fx.poses) contacts += query(pose).contacts.size();
        });
        EXPECT_EQ(n, 0) << "allocations in " << 3 * fx.poses.size() << " queries after warm-up";
        EXPECT_GT(contacts, 0u);
    }
}

TEST(NoAllocation, QuerySessionAfterWarmUp) {
    const Fixture fx;
    const fs::path dir = fs::temp_directory_path() / ("hp_alloc_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    fx.write_field(dir / "ball.dist.vdb");
    fx.write_moving(dir / "sphere.hps", &fx.tree);

    hp::QuerySession session(dir / "ball.dist.vdb", dir / "sphere.hps", {.mode = hp::QueryMode::full});
    std::size_t warm = 0;
    for (const hp::Pose& pose : fx.poses) warm += session.query(pose).contacts.size();
    std::size_t contacts = 0;
    const long n = allocations_in([&] {
        for (const hp::Pose& pose : fx.poses) contacts += session.query(pose).contacts.size();
    });
    EXPECT_EQ(n, 0) << "allocations in " << fx.poses.size() << " session queries after warm-up";
    EXPECT_EQ(contacts, warm);
    EXPECT_GT(contacts, 0u);
    fs::remove_all(dir);
}
