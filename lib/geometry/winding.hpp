#pragma once
// Generalized winding number (Jacobson et al. 2013): w(q) = sum over triangles of the signed solid
// angle they subtend at q, divided by 4 pi. 1 inside a closed outward-wound surface, 0 outside,
// -1 inside an inward-wound one; for open surfaces a smooth (harmonic) value in between, so
// |w| > 0.5 classifies "inside" where a person would. Undefined on the surface itself.
//
// winding_number(): exact, the signed solid angle of each triangle by Van Oosterom & Strackee
// (1983), tan(Omega/2) = a.(b x c) / (|a||b||c| + (a.b)|c| + (b.c)|a| + (c.a)|b|). O(triangles).
//
// FastWinding (Barill et al. 2018, "Fast winding numbers for soups and clouds"): over the
// clusters (nodes) of a TriangleBvh, a cluster far from q contributes its Taylor expansion about
// its area-weighted centroid p: with r = p - q, the dipole term  a.r / |r|^3  (a = sum of the
// triangles' area vectors) plus the first-order term  tr(M)/|r|^3 - 3 r.M r/|r|^5  (M = sum of
// area vector (x) (triangle centroid - p)); near clusters are summed exactly, triangle by triangle.
// Accuracy criterion: a cluster of radius R (max distance from p to its corners) is expanded
// when |q - p| >= beta R (Barill's beta; 2 by default). Its remainder is then bounded by
// 3 I / (4 pi (|q - p| - R)^4), I = integral of |x - p|^2 over the cluster (third derivatives of
// 1/|x| are at most 6/|x|^4 in any direction), so the error falls like (R/|q-p|)^2 relative to
// the cluster's own contribution and vanishes far from the mesh. Measured worst |fast - exact| at
// points within 1% of the bounding diagonal of the surface (tests/geometry/winding_test.cpp):
// <= 0.1 at beta 2, <= 0.04 at beta 3; <= 1e-3 a few mesh sizes away. That classifies every
// point whose exact w is outside [0.4, 0.6] (all points off the surface of a closed mesh, where w
// is 0 or 1); raise beta near holes of open meshes, where w crosses 0.5 smoothly.
// Cost: build O(n log n); a query visits O(log n) far clusters plus tens of triangles near it
// (bunny, 70k triangles: see bench_geometry). Thread-safe; the batch call runs over points with
// TBB and gives the same result for any number of threads (each point is summed alone, in the
// fixed order of a depth-first traversal).
#include <cstddef>
#include <span>
#include <vector>

#include "geometry/bvh.hpp"
#include "math/vec.hpp"
#include "mesh/mesh.hpp"

namespace hp {

// Exact, O(triangles) per point.
double winding_number(const TriMesh& mesh, const Vec3d& p);

// Signed solid angle of triangle (a, b, c) seen from p, in [-2 pi, 2 pi].
double solid_angle(const Vec3d& p, const Vec3d& a, const Vec3d& b, const Vec3d& c);

class FastWinding {
public:
    // `bvh` (and its mesh) must outlive this object. beta > 1.
    explicit FastWinding(const TriangleBvh& bvh, double beta = 2.0);

    double beta() const { return beta_; }
    double at(const Vec3d& q) const;
    // out[i] = at(points[i]), in parallel (TBB). Precondition: out.size() == points.size().
    void at(std::span<const Vec3d> points, std::span<double> out) const;

    struct Stats {
        std::size_t far_clusters = 0, exact_triangles = 0;
    };
    // As at(q), also counting the work done (for benchmarks).
    double at(const Vec3d& q, Stats& stats) const;

private:
    struct Cluster {
        Vec3d centre;      // area-weighted centroid p
        double accept2;    // squared expansion radius: |q - p|^2 >= accept2 -> use the expansion
        Vec3d dipole;      // a
        double trace;      // tr(M)
        double m[6];       // symmetric part of M: xx, yy, zz, xy, yz, zx
    };
    template <bool kCount>
    double evaluate(const Vec3d& q, Stats* stats) const;

    const TriangleBvh& bvh_;
    double beta_;
    std::vector<Cluster> clusters_;  // parallel to bvh_.nodes()
};

// The fast winding number of a mesh with its own BVH (for callers that have no BVH at hand):
// FastWinding at beta = 3 (measured error <= 0.04 near the surface, see above).
class WindingTree {
public:
    explicit WindingTree(const TriMesh& mesh, double beta = 3.0) : bvh_(mesh), fast_(bvh_, beta) {}
    double operator()(const Vec3d& p) const { return fast_.at(p); }
    const FastWinding& fast() const { return fast_; }

private:
    TriangleBvh bvh_;
    FastWinding fast_;
};

// Bound on |WindingTree - winding_number| used for exact re-evaluation near the 0.5 threshold
// (2.5 times the worst error measured at beta 3).
inline constexpr double kWindingTolerance = 0.1;

// |w| > 0.5 at p: the tree's value, or the exact sum when the tree's is within the tolerance.
bool inside_by_winding(const WindingTree& tree, const TriMesh& mesh, const Vec3d& p);

}  // namespace hp
