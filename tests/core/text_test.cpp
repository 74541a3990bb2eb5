#include "core/text.hpp"

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

// The prose lists, written out by hand for zero to four names.
TEST(OrList, CommasThenOrBeforeTheLast) {
    EXPECT_EQ(hp::or_list(std::vector<std::string>{}), "");
    EXPECT_EQ(hp::or_list(std::vector<std::string>{"full"}), "full");
    EXPECT_EQ(hp::or_list(std::array<std::string_view, 2>{"gradient", "surface"}), "gradient or surface");
    EXPECT_EQ(hp::or_list(std::vector<const char*>{"a", "b", "c"}), "a, b or c");
    EXPECT_EQ(hp::or_list(std::array<std::string_view, 4>{"contact", "approach", "random", "trajectory"}),
              "contact, approach, random or trajectory");
}

TEST(WithCommas, GroupsOfThreeDigits) {
    EXPECT_EQ(hp::with_commas(0), "0");
    EXPECT_EQ(hp::with_commas(999), "999");
    EXPECT_EQ(hp::with_commas(1000), "1,000");
    EXPECT_EQ(hp::with_commas(1234567), "1,234,567");
}
