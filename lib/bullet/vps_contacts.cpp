// The VPS algorithms' contacts without Bullet's types (vps_contacts.hpp): the rotation's
// quaternion and the choice of a manifold's four contacts.
#include "bullet/vps_contacts.hpp"

#include <algorithm>
#include <cmath>

namespace hp::bullet::detail {

// The unit quaternion (w, x, y, z) of a rotation matrix (Shepperd's method).
std::array<double, 4> quaternion_of(const std::array<Vec3d, 3>& m) {
    const double tr = m[0].x + m[1].y + m[2].z;
    std::array<double, 4> q;
    if (tr > 0) {
        const double s = 2 * std::sqrt(tr + 1);
        q = {s / 4, (m[2].y - m[1].z) / s, (m[0].z - m[2].x) / s, (m[1].x - m[0].y) / s};
    } else if (m[0].x > m[1].y && m[0].x > m[2].z) {
        const double s = 2 * std::sqrt(1 + m[0].x - m[1].y - m[2].z);
        q = {(m[2].y - m[1].z) / s, s / 4, (m[0].y + m[1].x) / s, (m[0].z + m[2].x) / s};
    } else if (m[1].y > m[2].z) {
        const double s = 2 * std::sqrt(1 + m[1].y - m[0].x - m[2].z);
        q = {(m[0].z - m[2].x) / s, (m[0].y + m[1].x) / s, s / 4, (m[1].z + m[2].y) / s};
    } else {
        const double s = 2 * std::sqrt(1 + m[2].z - m[0].x - m[1].y);
        q = {(m[1].x - m[0].y) / s, (m[0].z + m[2].x) / s, (m[1].z + m[2].y) / s, s / 4};
    }
    return q;
}

namespace {
double area2(Vec3d a, Vec3d b, Vec3d c) { return length(cross(b - a, c - a)); }  // twice the area
}  // namespace

Chosen select_manifold(const std::vector<WorldContact>& c) {
    Chosen out;
    if (c.empty()) return out;
    auto best = [&](auto score) {
        std::size_t arg = 0;
        double top = -1;
        for (std::size_t i = 0; i < c.size(); ++i) {
            if (std::find(out.begin(), out.end(), i) != out.end()) continue;
            const double s = score(c[i]);
            if (s > top) top = s, arg = i;
        }
        return std::pair{arg, top};
    };
    out.push_back(best([](const WorldContact& w) { return w.depth; }).first);
    const Vec3d p0 = c[out[0]].point;
    auto [i1, d1] = best([&](const WorldContact& w) { return length(w.point - p0); });
    if (c.size() < 2 || d1 <= 0) return out;
    out.push_back(i1);
    const Vec3d p1 = c[i1].point;
    auto [i2, a2] = best([&](const WorldContact& w) { return area2(p0, p1, w.point); });
    if (c.size() < 3 || a2 <= 0) return out;
    out.push_back(i2);
    const Vec3d p2 = c[i2].point;
    const double base = area2(p0, p1, p2);
    auto [i3, a3] = best([&](const WorldContact& w) {
        return area2(p0, p1, w.point) + area2(p1, p2, w.point) + area2(p2, p0, w.point) - base;
    });
    if (c.size() < 4 || a3 <= 1e-12 * base) return out;
    out.push_back(i3);
    return out;
}

}  // namespace hp::bullet::detail
