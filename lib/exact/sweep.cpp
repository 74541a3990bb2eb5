// Continuous collision of a moving mesh against a static one (exact/exact.hpp): the first-contact
// fraction of a translation or a rotation (vertex-triangle and edge-edge roots over the swept
// boxes of the two trees), and move(), which splits a general step into such motions.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "exact/exact.hpp"
#include "exact/predicates.hpp"
#include "exact/tree_walk.hpp"
#include "geometry/closest_point.hpp"

namespace hp::exact {

using detail::overlap;
using detail::rotate_box;
using detail::triangle_box;
using detail::walk_node_pairs;

namespace {

// Plücker coordinates (direction, moment) of a directed line; the permuted inner product of two
// lines is zero when they are coplanar and its sign tells on which side one passes the other.
struct Line {
    Vec3d d, m;
};
Line line_through(const Vec3d& p, const Vec3d& q) { return {q - p, cross(p, q - p)}; }
Line line_along(const Vec3d& p, const Vec3d& dir) { return {dir, cross(p, dir)}; }
double side(const Line& a, const Line& b) { return dot(a.d, b.m) + dot(b.d, a.m); }

// A triangle in world coordinates with its unit normal and its edges as canonical lines (from
// the lower vertex index to the higher) with the sign of its own traversal, so that a trail
// through an edge shared by two triangles gets exactly opposite values in them.
struct WorldTriangle {
    Vec3d p[3];
    Vec3d n;
    Line edge[3];
    double sign[3];
};

bool trail_inside(const WorldTriangle& t, const Line& trail) {
    const double s0 = t.sign[0] * side(trail, t.edge[0]), s1 = t.sign[1] * side(trail, t.edge[1]),
                 s2 = t.sign[2] * side(trail, t.edge[2]);
    return (s0 >= 0 && s1 >= 0 && s2 >= 0) || (s0 <= 0 && s1 <= 0 && s2 <= 0);
}

WorldTriangle world_triangle(const TriMesh& m, std::uint32_t t, const Vec3d (&p)[3], const Vec3d& n) {
    WorldTriangle w;
    for (int k = 0; k < 3; ++k) w.p[k] = p[k];
    w.n = n;
    for (int k = 0; k < 3; ++k) {
        const int k1 = (k + 1) % 3;
        const bool forward = m.triangles[t][static_cast<std::size_t>(k)] < m.triangles[t][static_cast<std::size_t>(k1)];
        w.edge[k] = forward ? line_through(p[k], p[k1]) : line_through(p[k1], p[k]);
        w.sign[k] = forward ? 1.0 : -1.0;
    }
    return w;
}

// The motion of the moving mesh over the step (world frame).
struct Motion {
    bool rotation = false;
    Vec3d d;                 // translation
    Vec3d o, u;              // rotation: a point of the axis and its unit direction
    double angle = 0;        // rotation: > 0
    Motion inverse() const {
        Motion m = *this;
        m.d = -d;
        m.u = -u;
        return m;
    }
    Vec3d at(const Vec3d& p, double f) const { return rotation ? rotate_about(p, o, u, angle * f) : p + d * f; }
};

struct Hit {
    double touch = std::numeric_limits<double>::infinity();
    double safe = 1;
};

// Solutions of a + b cos x + c sin x = 0 for x in [0, max_angle], max_angle < pi, ascending, by
// r = tan(x / 2): (a - b) r^2 + 2 c r + (a + b) = 0.
int trig_roots(double a, double b, double c, double max_angle, double (&out)[2]) {
    const double qa = a - b, qb = 2 * c, qc = a + b;
    const double scale = std::fabs(a) + std::fabs(b) + std::fabs(c);
    if (scale == 0) return 0;
    double r[2];
    int nr = 0;
    if (std::fabs(qa) <= 1e-15 * scale) {
        if (qb != 0) r[nr++] = -qc / qb;
    } else {
        double disc = qb * qb - 4 * qa * qc;
        if (disc < 0) {
            if (disc < -1e-14 * qb * qb - 1e-300) return 0;
            disc = 0;
        }
        const double q = -0.5 * (qb + std::copysign(std::sqrt(disc), qb));
        r[nr++] = q / qa;
        if (q != 0) r[nr++] = qc / q;
    }
    const double rmax = std::tan(0.5 * max_angle);
    int n = 0;
    for (int i = 0; i < nr; ++i) {
        double v = r[i];
        if (!(v >= -1e-15 && v <= rmax * (1 + 1e-15))) continue;
        v = std::clamp(v, 0.0, rmax);
        out[n++] = std::min(max_angle, 2 * std::atan(v));
    }
    if (n == 2 && out[1] < out[0]) std::swap(out[0], out[1]);
    return n;
}

// A vertex moving with `m` against a fixed triangle t.
Hit vertex_triangle(const Vec3d& p, const Motion& m, const WorldTriangle& t, double eps) {
    Hit h;
    const Vec3d& n = t.n;
    const double dist = dot(n, p - t.p[0]);
    if (!m.rotation) {
        const double rate = dot(n, m.d);
        if (rate == 0) return h;
        const Line trail = line_along(p, m.d);
        const double f = -dist / rate;
        const bool in_step = f >= 0 && f <= 1;
        const bool approach = rate < 0 && dist >= -eps && (dist - eps) < -rate;
        if (!in_step && !approach) return h;
        if (!trail_inside(t, trail)) return h;
        if (in_step) h.touch = f;
        if (approach) h.safe = std::clamp((dist - eps) / -rate, 0.0, 1.0);
        return h;
    }
    const Vec3d v = p - m.o, par = m.u * dot(v, m.u), perp = v - par, w = cross(m.u, v);
    const double a0 = dot(n, m.o + par - t.p[0]), b0 = dot(n, perp), c0 = dot(n, w);
    auto point = [&](double x) { return m.o + par + perp * std::cos(x) + w * std::sin(x); };
    auto inside_at = [&](double x) {
        const Vec3d tangent = w * std::cos(x) - perp * std::sin(x);
        return trail_inside(t, line_along(point(x), tangent));
    };
    auto slope = [&](double x) { return -b0 * std::sin(x) + c0 * std::cos(x); };
    double roots[2];
    const int nr = trig_roots(a0, b0, c0, m.angle, roots);
    for (int i = 0; i < nr; ++i)
        if (inside_at(roots[i])) {
            h.touch = roots[i] / m.angle;
            break;
        }
    // Expel zone (paper 3.3): the plane expanded by eps.
    if (dist < -eps) return h;
    const int ne = trig_roots(a0 - eps, b0, c0, m.angle, roots);
    double enter = -1;
    for (int i = 0; i < ne; ++i)
        if (slope(roots[i]) < 0 && (dist >= eps || roots[i] > 0) && inside_at(roots[i])) {
            enter = roots[i];
            break;
        }
    if (dist < eps) {  // starts in the zone: only moving away is allowed
        if (!inside_at(0)) return h;
        if (c0 < 0) {
            h.safe = 0;
        } else if (enter >= 0) {
            h.safe = enter / m.angle;
        } else {
            const double top = std::atan2(c0, b0);  // where the distance is largest
            if (top > 0 && top < m.angle) h.safe = top / m.angle;
        }
    } else if (enter >= 0) {
        h.safe = enter / m.angle;
    }
    return h;
}

// Parameters of the closest points of lines (a, b) and (c, d): a + s (b - a), c + u (d - c).
bool segment_params(const Vec3d& a, const Vec3d& b, const Vec3d& c, const Vec3d& d, double& s, double& u) {
    const Vec3d e = b - a, f = d - c, g = a - c;
    const double ee = dot(e, e), ff = dot(f, f), ef = dot(e, f), eg = dot(e, g), fg = dot(f, g);
    const double den = ee * ff - ef * ef;
    if (!(den > 1e-24 * ee * ff)) return false;
    s = (ef * fg - ff * eg) / den;
    u = (ee * fg - ef * eg) / den;
    return true;
}

bool within(double s) { return s >= -1e-12 && s <= 1 + 1e-12; }

// Moving edge (a -> b) against fixed edge (c -> d).
Hit edge_edge(const Vec3d& a, const Vec3d& b, const Motion& m, const Vec3d& c, const Vec3d& d, double eps) {
    Hit h;
    const Vec3d dm = b - a, ds = d - c;
    const Vec3d n = cross(dm, ds);
    const double nl = length(n);
    if (!(nl > 1e-12 * length(dm) * length(ds))) return h;  // parallel: vertex-face cases find these
    const Line ls = line_through(c, d);
    if (!m.rotation) {
        const double sep = dot(n, a - c) / nl, rate = dot(n, m.d) / nl;
        if (rate == 0) return h;
        const double f = -sep / rate;
        const bool in_step = f >= 0 && f <= 1;
        const bool approach = sep * rate <= 0 && (std::fabs(sep) - eps) < std::fabs(rate);
        if (!in_step && !approach) return h;
        // Edge bounds (paper 2.3): the trails of a and b pass the fixed line on different sides,
        // and the trails of c and d (relative motion -d) pass the moving line on different sides.
        const double sa = side(line_along(a, m.d), ls), sb = side(line_along(b, m.d), ls);
        if (sa * sb > 0) return h;
        const Line lm = line_through(a, b);
        const double sc = side(line_along(c, -m.d), lm), sd = side(line_along(d, -m.d), lm);
        if (sc * sd > 0) return h;
        if (in_step) h.touch = f;
        if (approach) h.safe = std::clamp((std::fabs(sep) - eps) / std::fabs(rate), 0.0, 1.0);
        return h;
    }
    // Rotation: the permuted inner product of the rotating line with the fixed one is
    // R(dm) . K + R(q) . ds with K = ms + ds x o, q = (a - o) x dm: A + B cos x + C sin x.
    const Vec3d K = ls.m + cross(ds, m.o), q = cross(a - m.o, dm);
    auto coeffs = [&](const Vec3d& x, const Vec3d& y, double& A, double& B, double& C) {
        const double xu = dot(x, m.u);
        A += xu * dot(m.u, y);
        B += dot(x - m.u * xu, y);
        C += dot(cross(m.u, x), y);
    };
    double A = 0, B = 0, C = 0;
    coeffs(dm, K, A, B, C);
    coeffs(q, ds, A, B, C);
    auto bounded_at = [&](double x) {
        double s, u;
        if (!segment_params(rotate_about(a, m.o, m.u, x), rotate_about(b, m.o, m.u, x), c, d, s, u)) return false;
        return within(s) && within(u);
    };
    double roots[2];
    const int nr = trig_roots(A, B, C, m.angle, roots);
    for (int i = 0; i < nr; ++i)
        if (bounded_at(roots[i])) {
            h.touch = roots[i] / m.angle;
            break;
        }
    // Expel zone: the product over |n| at the start approximates the separation (docs/exact.md).
    const double h0 = A + B, sgn = h0 >= 0 ? 1.0 : -1.0;
    const double gap = std::fabs(h0) / nl;
    const double sA = sgn * A, sB = sgn * B, sC = sgn * C;
    const int ne = trig_roots(sA - eps * nl, sB, sC, m.angle, roots);
    double enter = -1;
    for (int i = 0; i < ne; ++i) {
        const double x = roots[i];
        if (-sB * std::sin(x) + sC * std::cos(x) < 0 && (gap >= eps || x > 0) && bounded_at(x)) {
            enter = x;
            break;
        }
    }
    if (gap < eps) {
        if (!bounded_at(0)) return h;
        if (sC < 0) {
            h.safe = 0;
        } else if (enter >= 0) {
            h.safe = enter / m.angle;
        } else {
            const double top = std::atan2(sC, sB);
            if (top > 0 && top < m.angle) h.safe = top / m.angle;
        }
    } else if (enter >= 0) {
        h.safe = enter / m.angle;
    }
    return h;
}

void keep(Contact& best, const Hit& h, Feature f, std::uint32_t mi, std::uint32_t si) {
    if (h.touch < best.fraction || (!best.hit && h.touch <= 1)) {
        best.hit = true;
        best.fraction = h.touch;
        best.feature = f;
        best.moving_index = mi;
        best.static_index = si;
    }
    best.safe_fraction = std::min(best.safe_fraction, h.safe);
}


// A box holding every point of `box` (world, at the start) over the motion, grown by `grow`.
Aabb swept_box(const Aabb& box, const Motion& m, double grow) {
    Aabb out = box;
    if (!m.rotation) {
        out.extend(Aabb{box.min + m.d, box.max + m.d});
    } else {
        // The centre moves on an arc of radius rho and angle theta; for theta <= pi the arc lies
        // in the ball of radius rho sin(theta / 2) around its chord's midpoint.
        const Vec3d c = box.center();
        const double r = 0.5 * box.diagonal();
        const Vec3d c1 = rotate_about(c, m.o, m.u, m.angle), mid = (c + c1) * 0.5;
        const Vec3d v = c - m.o, perp = v - m.u * dot(v, m.u);
        const double half_sin = std::sin(0.5 * std::min(m.angle, std::numbers::pi));
        const double reach = length(perp) * half_sin + r;
        // Also: no point of the box moves farther than 2 (rho + r) sin(theta / 2) (its centre's
        // chord plus the turn of its offset from the centre); both boxes hold the swept volume,
        // so their intersection does (the second is the tight one for small angles).
        const double g = 2 * (length(perp) + r) * half_sin;
        out.min = cwise_max(mid - Vec3d{reach, reach, reach}, box.min - Vec3d{g, g, g});
        out.max = cwise_min(mid + Vec3d{reach, reach, reach}, box.max + Vec3d{g, g, g});
        out.extend(box);
    }
    out.min -= Vec3d{grow, grow, grow};
    out.max += Vec3d{grow, grow, grow};
    return out;
}


Contact sweep(const ExactMesh& fixed, const ExactMesh& moving, const RigidPose& start, const Motion& m,
              const Options& opt) {
    Contact best;
    if (fixed.nodes().empty() || moving.nodes().empty()) return best;
    const TriMesh& fm = fixed.mesh();
    const TriMesh& mm = moving.mesh();
    const Motion inv = m.inverse();
    const double grow = opt.eps + 1e-12 * (fixed.nodes()[0].box.diagonal() + moving.nodes()[0].box.diagonal());
    auto swept = [&](const Aabb& box) { return swept_box(rotate_box(start, box), m, grow); };
    auto apart = [](const Aabb& fb, const Aabb& mb) { return !overlap(fb, mb); };
    walk_node_pairs(fixed, moving, swept, apart, [&](const ExactMesh::Node& fn, const ExactMesh::Node& mn) {
        for (std::uint32_t j = mn.first; j < mn.first + mn.count; ++j) {
            const std::uint32_t mt = moving.order()[j];
            const auto& mf = mm.triangles[mt];
            const Vec3d mp[3] = {start.apply(mm.vertices[mf[0]]), start.apply(mm.vertices[mf[1]]), start.apply(mm.vertices[mf[2]])};
            const Aabb mtb = swept_box(triangle_box(mp[0], mp[1], mp[2]), m, grow);
            const std::uint8_t mown = moving.owned(mt);
            bool mw_ready = false;
            WorldTriangle mw;
            for (std::uint32_t i = fn.first; i < fn.first + fn.count; ++i) {
                const std::uint32_t ft = fixed.order()[i];
                const auto& ff = fm.triangles[ft];
                const Vec3d fp[3] = {fm.vertices[ff[0]], fm.vertices[ff[1]], fm.vertices[ff[2]]};
                if (!overlap(triangle_box(fp[0], fp[1], fp[2]), mtb)) continue;
                ++best.pairs_tested;
                const WorldTriangle fw = world_triangle(fm, ft, fp, fixed.normal(ft));
                if (!mw_ready) {
                    mw = world_triangle(mm, mt, mp, start.rotate(moving.normal(mt)));
                    mw_ready = true;
                }
                const std::uint8_t fown = fixed.owned(ft);
                for (int k = 0; k < 3; ++k) {
                    const std::uint32_t v = mf[static_cast<std::size_t>(k)];
                    if ((mown & (1u << k)) && !(opt.skip_internal && moving.vertex_internal(v)))
                        keep(best, vertex_triangle(mp[k], m, fw, opt.eps), Feature::vertex_face, v, ft);
                    const std::uint32_t w = ff[static_cast<std::size_t>(k)];
                    if ((fown & (1u << k)) && !(opt.skip_internal && fixed.vertex_internal(w)))
                        keep(best, vertex_triangle(fp[k], inv, mw, opt.eps), Feature::face_vertex, mt, w);
                }
                for (int k = 0; k < 3; ++k) {
                    if (!(mown & (8u << k))) continue;
                    const std::uint32_t me = moving.triangle_edge(mt, k);
                    if (opt.skip_internal && moving.edges()[me].internal) continue;
                    const auto& med = moving.edges()[me];
                    const Vec3d a = start.apply(mm.vertices[med.v0]), b = start.apply(mm.vertices[med.v1]);
                    for (int l = 0; l < 3; ++l) {
                        if (!(fown & (8u << l))) continue;
                        const std::uint32_t fe = fixed.triangle_edge(ft, l);
                        if (opt.skip_internal && fixed.edges()[fe].internal) continue;
                        const auto& fed = fixed.edges()[fe];
                        keep(best, edge_edge(a, b, m, fm.vertices[fed.v0], fm.vertices[fed.v1], opt.eps), Feature::edge_edge,
                             me, fe);
                    }
                }
            }
        }
        return false;
    });
    if (!best.hit) best.fraction = 1;
    best.safe_fraction = std::min(best.safe_fraction, best.fraction);
    return best;
}

RigidPose moved(const RigidPose& p, const Motion& m) {
    RigidPose out = p;
    if (!m.rotation) {
        out.t = p.t + m.d;
        return out;
    }
    for (int c = 0; c < 3; ++c) {
        const Vec3d col{p.rows[0][c], p.rows[1][c], p.rows[2][c]};
        const Vec3d r = rotate_about(col, Vec3d{}, m.u, m.angle);
        out.rows[0][c] = r.x;
        out.rows[1][c] = r.y;
        out.rows[2][c] = r.z;
    }
    out.t = rotate_about(p.t, m.o, m.u, m.angle);
    return out;
}

}  // namespace

Contact translate(const ExactMesh& fixed, const ExactMesh& moving, const RigidPose& start, const Vec3d& d,
                  const Options& options) {
    Motion m;
    m.d = d;
    if (d == Vec3d{}) return Contact{};
    return sweep(fixed, moving, start, m, options);
}

Contact rotate(const ExactMesh& fixed, const ExactMesh& moving, const RigidPose& start, const Vec3d& origin,
               const Vec3d& axis, double angle, const Options& options) {
    if (angle == 0) return Contact{};
    Motion m;
    m.rotation = true;
    m.o = origin;
    m.u = normalized(angle > 0 ? axis : -axis);
    m.angle = std::fabs(angle);
    if (m.angle > 0.5 * std::numbers::pi) {
        // tan(x / 2) is used up to the step's angle: halves keep it well below pi.
        Motion half = m;
        half.angle = 0.5 * m.angle;
        Contact c = sweep(fixed, moving, start, half, options);
        if (c.hit) {
            c.fraction *= 0.5;
            c.safe_fraction *= 0.5;
            return c;
        }
        const double safe_first = c.safe_fraction;
        Contact c2 = sweep(fixed, moving, moved(start, half), half, options);
        c2.pairs_tested += c.pairs_tested;
        c2.fraction = 0.5 + 0.5 * c2.fraction;
        c2.safe_fraction = safe_first < 1 ? 0.5 * safe_first : 0.5 + 0.5 * c2.safe_fraction;
        return c2;
    }
    return sweep(fixed, moving, start, m, options);
}

namespace {
struct Split {
    Vec3d d;
    Vec3d origin, axis;
    double angle = 0;
};
Split split_step(const ExactMesh& moving, const RigidPose& from, const RigidPose& to) {
    Split s;
    const Vec3d c0 = from.apply(moving.center()), c1 = to.apply(moving.center());
    s.d = c1 - c0;
    s.origin = c1;
    // Relative rotation R1 R0^T as axis and angle.
    double r[3][3];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            double v = 0;
            for (int k = 0; k < 3; ++k) v += to.rows[static_cast<std::size_t>(i)][k] * from.rows[static_cast<std::size_t>(j)][k];
            r[i][j] = v;
        }
    const Vec3d w{r[2][1] - r[1][2], r[0][2] - r[2][0], r[1][0] - r[0][1]};
    const double sin2 = length(w), cos2 = r[0][0] + r[1][1] + r[2][2] - 1;
    s.angle = std::atan2(sin2, cos2);
    if (sin2 > 1e-300) {
        s.axis = w / sin2;
    } else if (cos2 < 0) {  // a half turn: the axis from the symmetric part
        int k = r[0][0] >= r[1][1] && r[0][0] >= r[2][2] ? 0 : (r[1][1] >= r[2][2] ? 1 : 2);
        Vec3d a;
        for (int i = 0; i < 3; ++i) a[i] = 0.5 * (r[i][k] + r[k][i]);
        s.axis = normalized(a);
    } else {
        s.angle = 0;
        s.axis = {0, 0, 1};
    }
    return s;
}
}  // namespace

RigidPose split_path_pose(const ExactMesh& moving, const RigidPose& from, const RigidPose& to, double s) {
    const Split sp = split_step(moving, from, to);
    const bool has_t = !(sp.d == Vec3d{}), has_r = sp.angle != 0;
    const double tpart = has_t && has_r ? 0.5 : (has_t ? 1.0 : 0.0);
    Motion m;
    m.d = sp.d * (tpart > 0 ? std::min(1.0, s / tpart) : 1.0);
    RigidPose p = moved(from, m);
    if (has_r && s > tpart) {
        Motion r;
        r.rotation = true;
        r.o = sp.origin;
        r.u = sp.axis;
        r.angle = sp.angle * (s - tpart) / (1 - tpart);
        p = moved(p, r);
    }
    return p;
}

StepContact move(const ExactMesh& fixed, const ExactMesh& moving, const RigidPose& from, const RigidPose& to,
                 const Options& options) {
    const Split sp = split_step(moving, from, to);
    const bool has_t = !(sp.d == Vec3d{}), has_r = sp.angle != 0;
    const double tpart = has_t && has_r ? 0.5 : (has_t ? 1.0 : 0.0);
    StepContact out;
    double safe_t = 1;
    std::size_t tested = 0;
    if (has_t) {
        const Contact c = translate(fixed, moving, from, sp.d, options);
        if (c.hit) {
            static_cast<Contact&>(out) = c;
            out.fraction = c.fraction * tpart;
            out.safe_fraction = c.safe_fraction * tpart;
            return out;
        }
        safe_t = c.safe_fraction;
        tested = c.pairs_tested;
    }
    if (has_r) {
        RigidPose mid = from;
        mid.t = from.t + sp.d;
        const Contact c = rotate(fixed, moving, mid, sp.origin, sp.axis, sp.angle, options);
        static_cast<Contact&>(out) = c;
        out.in_rotation = c.hit;
        out.fraction = c.hit ? tpart + (1 - tpart) * c.fraction : 1;
        out.safe_fraction = tpart + (1 - tpart) * c.safe_fraction;
    }
    out.pairs_tested += tested;
    if (safe_t < 1) out.safe_fraction = tpart * safe_t;
    out.safe_fraction = std::min(out.safe_fraction, out.fraction);
    return out;
}

}  // namespace hp::exact
