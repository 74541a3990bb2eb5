#pragma once
// Plain geometry structs: Vec3d, Aabb. Free functions, no hidden state; doubles throughout.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace hp {

struct Vec3d {
    double x = 0, y = 0, z = 0;

    constexpr double operator[](int i) const { return i == 0 ? x : (i == 1 ? y : z); }
    constexpr double& operator[](int i) { return i == 0 ? x : (i == 1 ? y : z); }
    friend constexpr Vec3d operator+(Vec3d a, Vec3d b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
    friend constexpr Vec3d operator-(Vec3d a, Vec3d b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
    friend constexpr Vec3d operator-(Vec3d a) { return {-a.x, -a.y, -a.z}; }
    friend constexpr Vec3d operator*(Vec3d a, double s) { return {a.x * s, a.y * s, a.z * s}; }
    friend constexpr Vec3d operator*(double s, Vec3d a) { return a * s; }
    friend constexpr Vec3d operator/(Vec3d a, double s) { return {a.x / s, a.y / s, a.z / s}; }
    constexpr Vec3d& operator+=(Vec3d b) { x += b.x; y += b.y; z += b.z; return *this; }
    constexpr Vec3d& operator-=(Vec3d b) { x -= b.x; y -= b.y; z -= b.z; return *this; }
    constexpr Vec3d& operator*=(double s) { x *= s; y *= s; z *= s; return *this; }
    friend constexpr bool operator==(Vec3d a, Vec3d b) { return a.x == b.x && a.y == b.y && a.z == b.z; }
};

constexpr double dot(Vec3d a, Vec3d b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
constexpr Vec3d cross(Vec3d a, Vec3d b) {
    return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
constexpr double length2(Vec3d a) { return dot(a, a); }
inline double length(Vec3d a) { return std::sqrt(dot(a, a)); }
inline Vec3d normalized(Vec3d a) {
    double l = length(a);
    return l > 0 ? a / l : Vec3d{};
}
constexpr Vec3d cwise_min(Vec3d a, Vec3d b) {
    return {std::min(a.x, b.x), std::min(a.y, b.y), std::min(a.z, b.z)};
}
constexpr Vec3d cwise_max(Vec3d a, Vec3d b) {
    return {std::max(a.x, b.x), std::max(a.y, b.y), std::max(a.z, b.z)};
}
inline bool is_finite(Vec3d a) { return std::isfinite(a.x) && std::isfinite(a.y) && std::isfinite(a.z); }

// Axis-aligned box; empty when min > max (the default).
struct Aabb {
    Vec3d min{std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity(),
              std::numeric_limits<double>::infinity()};
    Vec3d max{-std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
              -std::numeric_limits<double>::infinity()};

    bool empty() const { return min.x > max.x || min.y > max.y || min.z > max.z; }
    void extend(Vec3d p) { min = cwise_min(min, p); max = cwise_max(max, p); }
    void extend(const Aabb& b) { min = cwise_min(min, b.min); max = cwise_max(max, b.max); }
    Vec3d size() const { return empty() ? Vec3d{} : max - min; }
    Vec3d center() const { return (min + max) * 0.5; }
    double diagonal() const { return length(size()); }
};

}  // namespace hp
