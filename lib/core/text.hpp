#pragma once
// Small text helpers shared by the summaries of every tool.
#include <cstdio>
#include <iterator>
#include <string>

namespace hp {

// "12.3 MB" style, powers of 1024.
inline std::string human_bytes(double bytes) {
    const char* units[] = {"B", "KB", "MB", "GB", "TB"};
    int u = 0;
    while (bytes >= 1024 && u < 4) {
        bytes /= 1024;
        ++u;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
    return buf;
}

// 1234567 -> "1,234,567".
inline std::string with_commas(unsigned long long n) {
    std::string s = std::to_string(n);
    for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<std::size_t>(i), ",");
    return s;
}

// {"a", "b", "c"} -> "a, b or c": choices as the help and the messages list them.
template <class Names>
std::string or_list(const Names& names) {
    const std::size_t n = std::size(names);
    std::string out;
    std::size_t i = 0;
    for (const auto& name : names) {
        out += (i == 0 ? "" : i + 1 == n ? " or " : ", ") + std::string(name);
        ++i;
    }
    return out;
}

}  // namespace hp
