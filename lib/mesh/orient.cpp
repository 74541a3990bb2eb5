#include "mesh/orient.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <vector>

#include "math/solid_angle.hpp"

namespace hp {
namespace {

struct HalfEdge {
    std::uint32_t lo, hi;  // the undirected edge
    std::uint32_t tri;
    bool forward;  // the triangle traverses lo -> hi
};

bool inside(const Aabb& b, const Vec3d& p) {
    return p.x >= b.min.x && p.y >= b.min.y && p.z >= b.min.z && p.x <= b.max.x && p.y <= b.max.y && p.z <= b.max.z;
}

}  // namespace

OrientationRepair orient_consistently(TriMesh& mesh) {
    OrientationRepair r;
    const std::size_t nt = mesh.triangles.size();
    std::vector<HalfEdge> half;
    half.reserve(nt * 3);
    for (std::uint32_t t = 0; t < nt; ++t)
        for (int c = 0; c < 3; ++c) {
            const std::uint32_t a = mesh.triangles[t][static_cast<std::size_t>(c)];
            const std::uint32_t b = mesh.triangles[t][static_cast<std::size_t>((c + 1) % 3)];
            half.push_back({std::min(a, b), std::max(a, b), t, a < b});
        }
    std::sort(half.begin(), half.end(), [](const HalfEdge& x, const HalfEdge& y) {
        return x.lo != y.lo ? x.lo < y.lo : (x.hi != y.hi ? x.hi < y.hi : x.tri < y.tri);
    });

    // Neighbours across manifold edges (same: both traverse the edge the same way, so one of the
    // two must be flipped); per triangle, whether it touches a boundary or non-manifold edge.
    struct Link {
        std::uint32_t other;
        bool same;
    };
    std::vector<std::vector<Link>> links(nt);
    std::vector<char> open(nt, 0), nonmanifold(nt, 0);
    for (std::size_t i = 0; i < half.size();) {
        std::size_t j = i;
        while (j < half.size() && half[j].lo == half[i].lo && half[j].hi == half[i].hi) ++j;
        if (j - i == 1) open[half[i].tri] = 1;
        else if (j - i > 2) for (std::size_t k = i; k < j; ++k) nonmanifold[half[k].tri] = 1;
        else {
            const bool same = half[i].forward == half[i + 1].forward;
            links[half[i].tri].push_back({half[i + 1].tri, same});
            links[half[i + 1].tri].push_back({half[i].tri, same});
        }
        i = j;
    }

    // Parts through manifold edges, each given a flip per triangle relative to its first one.
    std::vector<std::uint32_t> part(nt, UINT32_MAX);
    std::vector<char> flip(nt, 0);
    struct Part {
        std::vector<std::uint32_t> tris;
        bool orientable = true, closed = true, manifold = true;
    };
    std::vector<Part> parts;
    std::vector<std::uint32_t> queue;
    for (std::uint32_t seed = 0; seed < nt; ++seed) {
        if (part[seed] != UINT32_MAX) continue;
        const auto id = static_cast<std::uint32_t>(parts.size());
        Part p;
        part[seed] = id;
        queue.assign(1, seed);
        for (std::size_t q = 0; q < queue.size(); ++q) {
            const std::uint32_t t = queue[q];
            p.tris.push_back(t);
            if (open[t]) p.closed = false;
            if (nonmanifold[t]) p.manifold = false, p.closed = false;
            for (const Link& l : links[t]) {
                const char want = static_cast<char>(flip[t] ^ static_cast<char>(l.same));
                if (part[l.other] == UINT32_MAX) {
                    part[l.other] = id;
                    flip[l.other] = want;
                    queue.push_back(l.other);
                } else if (flip[l.other] != want) {
                    p.orientable = false;
                }
            }
        }
        parts.push_back(std::move(p));
    }
    r.parts = parts.size();

    // Signed volume of a part with its flips applied, about a centre near it.
    auto volume = [&](const Part& p, const Vec3d& c) {
        double v = 0;
        for (std::uint32_t t : p.tris) {
            const auto& tri = mesh.triangles[t];
            const double s = dot(mesh.vertices[tri[0]] - c, cross(mesh.vertices[tri[1]] - c, mesh.vertices[tri[2]] - c));
            v += flip[t] ? -s : s;
        }
        return v;
    };
    auto box_of = [&](const Part& p) {
        Aabb b;
        for (std::uint32_t t : p.tris)
            for (std::uint32_t v : mesh.triangles[t]) b.extend(mesh.vertices[v]);
        return b;
    };
    std::vector<std::uint32_t> closed;
    std::vector<Aabb> boxes(parts.size());
    for (std::uint32_t i = 0; i < parts.size(); ++i) {
        Part& p = parts[i];
        if (!p.orientable || !p.manifold) {
            r.non_orientable_parts += !p.orientable;
            r.non_manifold_parts += p.orientable && !p.manifold;
            for (std::uint32_t t : p.tris) flip[t] = 0;  // kept as they were
            continue;
        }
        boxes[i] = box_of(p);
        if (p.closed) closed.push_back(i);
        else {
            // Open: the orientation most of its faces had.
            std::size_t flipped = 0;
            for (std::uint32_t t : p.tris) flipped += static_cast<std::size_t>(flip[t]);
            if (2 * flipped > p.tris.size())
                for (std::uint32_t t : p.tris) flip[t] ^= 1;
        }
    }
    // Closed: outward unless inside an odd number of other closed parts. A part's test point is
    // the centroid of its largest triangle; containment is |winding number| > 1/2 of the other part.
    for (std::uint32_t i : closed) {
        const Part& p = parts[i];
        std::uint32_t big = p.tris.front();
        double big_area = -1;
        for (std::uint32_t t : p.tris) {
            const auto& tri = mesh.triangles[t];
            const double a = length2(cross(mesh.vertices[tri[1]] - mesh.vertices[tri[0]], mesh.vertices[tri[2]] - mesh.vertices[tri[0]]));
            if (a > big_area) big_area = a, big = t;
        }
        const auto& bt = mesh.triangles[big];
        const Vec3d point = (mesh.vertices[bt[0]] + mesh.vertices[bt[1]] + mesh.vertices[bt[2]]) / 3.0;
        int depth = 0;
        for (std::uint32_t k : closed) {
            if (k == i || !inside(boxes[k], point)) continue;
            double w = 0;
            for (std::uint32_t t : parts[k].tris) {
                const auto& tri = mesh.triangles[t];
                w += solid_angle(point, mesh.vertices[tri[0]], mesh.vertices[tri[1]], mesh.vertices[tri[2]]);
            }
            if (std::abs(w) > 2 * std::numbers::pi) ++depth;  // |winding number| > 1/2
        }
        const double v = volume(p, boxes[i].center());
        const bool want_positive = depth % 2 == 0;
        if ((v > 0) != want_positive && v != 0)
            for (std::uint32_t t : p.tris) flip[t] ^= 1;
    }
    for (std::uint32_t t = 0; t < nt; ++t)
        if (flip[t]) {
            std::swap(mesh.triangles[t][1], mesh.triangles[t][2]);
            ++r.flipped_faces;
        }
    return r;
}

}  // namespace hp
