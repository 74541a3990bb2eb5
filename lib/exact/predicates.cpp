#include "exact/predicates.hpp"

#include <cmath>
#include <vector>

namespace hp::exact {

namespace {

// Expansion arithmetic (Shewchuk 1997): a value is a sum of doubles, non-overlapping and of
// increasing magnitude apart from zeros. two_sum and two_product are exact error-free transforms.
void two_sum(double a, double b, double& x, double& y) {
    x = a + b;
    const double bv = x - a, av = x - bv;
    y = (a - av) + (b - bv);
}

void two_product(double a, double b, double& x, double& y) {
    x = a * b;
    y = std::fma(a, b, -x);
}

using Expansion = std::vector<double>;

// e + b (Shewchuk's GROW-EXPANSION).
void grow(Expansion& e, double b) {
    double q = b;
    for (double& c : e) {
        double h;
        two_sum(q, c, q, h);
        c = h;
    }
    e.push_back(q);
}

Expansion diff(double a, double b) {
    double x, y;
    two_sum(a, -b, x, y);
    return {y, x};
}

Expansion product(const Expansion& e, const Expansion& f) {
    Expansion out;
    out.reserve(2 * e.size() * f.size() + 1);
    for (double a : e)
        for (double b : f) {
            double x, y;
            two_product(a, b, x, y);
            grow(out, y);
            grow(out, x);
        }
    return out;
}

void add(Expansion& e, const Expansion& f, double sign) {
    for (double c : f) grow(e, sign * c);
}

int sign_of(const Expansion& e) {
    for (auto it = e.rbegin(); it != e.rend(); ++it)
        if (*it != 0) return *it > 0 ? 1 : -1;
    return 0;
}

int exact_orient3d(const Vec3d& a, const Vec3d& b, const Vec3d& c, const Vec3d& d) {
    Expansion u[3], v[3], w[3];
    for (int i = 0; i < 3; ++i) {
        u[i] = diff(b[i], a[i]);
        v[i] = diff(c[i], a[i]);
        w[i] = diff(d[i], a[i]);
    }
    // cross(u, v) . w
    Expansion total;
    for (int i = 0; i < 3; ++i) {
        const int j = (i + 1) % 3, k = (i + 2) % 3;
        Expansion cr = product(u[j], v[k]);
        add(cr, product(u[k], v[j]), -1.0);
        add(total, product(cr, w[i]), 1.0);
    }
    return sign_of(total);
}

}  // namespace

int orient3d(const Vec3d& a, const Vec3d& b, const Vec3d& c, const Vec3d& d) {
    const Vec3d u = b - a, v = c - a, w = d - a;
    const double c0 = u.y * v.z - u.z * v.y, c1 = u.z * v.x - u.x * v.z, c2 = u.x * v.y - u.y * v.x;
    const double det = c0 * w.x + c1 * w.y + c2 * w.z;
    const double perm = (std::fabs(u.y * v.z) + std::fabs(u.z * v.y)) * std::fabs(w.x) +
                        (std::fabs(u.z * v.x) + std::fabs(u.x * v.z)) * std::fabs(w.y) +
                        (std::fabs(u.x * v.y) + std::fabs(u.y * v.x)) * std::fabs(w.z);
    // Shewchuk's bound for this evaluation order is 7.8e-16 * perm (differences rounded too);
    // 2e-15 leaves room. Beyond it the rounded sign is the true one.
    const double bound = 2e-15 * perm;
    if (det > bound) return 1;
    if (det < -bound) return -1;
    return exact_orient3d(a, b, c, d);
}

int orient2d(double ax, double ay, double bx, double by, double cx, double cy) {
    const double l = (bx - ax) * (cy - ay), r = (by - ay) * (cx - ax);
    const double det = l - r, bound = 1e-15 * (std::fabs(l) + std::fabs(r));
    if (det > bound) return 1;
    if (det < -bound) return -1;
    Expansion e = product(diff(bx, ax), diff(cy, ay));
    add(e, product(diff(by, ay), diff(cx, ax)), -1.0);
    return sign_of(e);
}

namespace {

struct P2 {
    double x, y;
};

int o2(P2 a, P2 b, P2 c) { return orient2d(a.x, a.y, b.x, b.y, c.x, c.y); }

bool on_segment(P2 a, P2 b, P2 p) {  // p collinear with a, b: within their box
    return std::min(a.x, b.x) <= p.x && p.x <= std::max(a.x, b.x) && std::min(a.y, b.y) <= p.y &&
           p.y <= std::max(a.y, b.y);
}

bool segments_intersect_2d(P2 a, P2 b, P2 c, P2 d) {
    const int d1 = o2(c, d, a), d2 = o2(c, d, b), d3 = o2(a, b, c), d4 = o2(a, b, d);
    if (d1 * d2 < 0 && d3 * d4 < 0) return true;
    if (d1 == 0 && on_segment(c, d, a)) return true;
    if (d2 == 0 && on_segment(c, d, b)) return true;
    if (d3 == 0 && on_segment(a, b, c)) return true;
    if (d4 == 0 && on_segment(a, b, d)) return true;
    return false;
}

bool point_in_triangle_2d(P2 p, const P2 (&t)[3]) {
    const int s0 = o2(t[0], t[1], p), s1 = o2(t[1], t[2], p), s2 = o2(t[2], t[0], p);
    return (s0 >= 0 && s1 >= 0 && s2 >= 0) || (s0 <= 0 && s1 <= 0 && s2 <= 0);
}

// The axis to drop when projecting onto a coordinate plane: the largest component of the normal.
int drop_axis(const Triangle& t) {
    const Vec3d n = cross(t[1] - t[0], t[2] - t[0]);
    const double ax = std::fabs(n.x), ay = std::fabs(n.y), az = std::fabs(n.z);
    return ax >= ay && ax >= az ? 0 : (ay >= az ? 1 : 2);
}

P2 project(const Vec3d& p, int drop) {
    return drop == 0 ? P2{p.y, p.z} : (drop == 1 ? P2{p.z, p.x} : P2{p.x, p.y});
}

// Coplanar points: segment (a, b) against triangle t, in the plane that drops `drop`.
bool segment_triangle_2d(const Vec3d& a, const Vec3d& b, const Triangle& t, int drop) {
    const P2 pa = project(a, drop), pb = project(b, drop);
    const P2 pt[3] = {project(t[0], drop), project(t[1], drop), project(t[2], drop)};
    if (point_in_triangle_2d(pa, pt) || point_in_triangle_2d(pb, pt)) return true;
    for (int i = 0; i < 3; ++i)
        if (segments_intersect_2d(pa, pb, pt[i], pt[(i + 1) % 3])) return true;
    return false;
}

// Segment (a, b) against the closed triangle t.
bool segment_triangle(const Vec3d& a, const Vec3d& b, const Triangle& t) {
    const int oa = orient3d(t[0], t[1], t[2], a), ob = orient3d(t[0], t[1], t[2], b);
    if (oa == 0 && ob == 0) return segment_triangle_2d(a, b, t, drop_axis(t));
    if (oa * ob > 0) return false;
    // The line (a, b) crosses the plane; it meets the triangle when it passes no edge on the
    // wrong side (equal signs of the three orientations, zeros allowed).
    const int s0 = orient3d(a, b, t[0], t[1]), s1 = orient3d(a, b, t[1], t[2]), s2 = orient3d(a, b, t[2], t[0]);
    return (s0 >= 0 && s1 >= 0 && s2 >= 0) || (s0 <= 0 && s1 <= 0 && s2 <= 0);
}

}  // namespace

bool triangles_intersect(const Triangle& p, const Triangle& q) {
    int sq[3], sp[3];
    for (int i = 0; i < 3; ++i) sq[i] = orient3d(p[0], p[1], p[2], q[i]);
    if ((sq[0] > 0 && sq[1] > 0 && sq[2] > 0) || (sq[0] < 0 && sq[1] < 0 && sq[2] < 0)) return false;
    for (int i = 0; i < 3; ++i) sp[i] = orient3d(q[0], q[1], q[2], p[i]);
    if ((sp[0] > 0 && sp[1] > 0 && sp[2] > 0) || (sp[0] < 0 && sp[1] < 0 && sp[2] < 0)) return false;
    // Non-empty intersections of two triangles contain a point of an edge of one of them (the
    // intersection is convex; its extreme points lie on edges). Coplanar pairs go through the
    // same edge tests, which then decide in the plane.
    for (int i = 0; i < 3; ++i)
        if (segment_triangle(p[i], p[(i + 1) % 3], q)) return true;
    for (int i = 0; i < 3; ++i)
        if (segment_triangle(q[i], q[(i + 1) % 3], p)) return true;
    return false;
}

}  // namespace hp::exact
