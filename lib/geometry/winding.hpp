#pragma once
// Generalized winding number (Jacobson et al. 2013): w(q) = sum over triangles of the signed solid
// angle they subtend at q, divided by 4 pi. 1 inside a closed outward-wound surface, 0 outside,
// -1 inside an inward-wound one; for open surfaces a smooth value in between, so |w| > 0.5
// classifies "inside" where a person would. Undefined on the surface itself.
// winding_number(): exact (Van Oosterom & Strackee 1983 solid angles), O(triangles) per point.
// FastWinding (Barill et al. 2018): far BVH clusters by their dipole + first-order expansion when
// |q - p| >= beta R, near ones exactly. Measured worst error near the surface <= 0.1 at beta 2,
// <= 0.04 at beta 3; inside_by_winding re-evaluates exactly within kWindingTolerance of 0.5.
// Cost: build O(n log n); a query O(log n) far clusters plus tens of triangles. Thread-safe; the
// batch call (TBB) gives the same result for any thread count.
// The expansion and its error bound: docs/geometry.md.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "geometry/bvh.hpp"
#include "math/vec.hpp"
#include "mesh/mesh.hpp"

namespace hp {

// Exact, O(triangles) per point.
double winding_number(const TriMesh& mesh, const Vec3d& p);


class FastWinding {
public:
    // `bvh` (and its mesh) must outlive this object. beta > 1.
    explicit FastWinding(const TriangleBvh& bvh, double beta = 2.0);

    double beta() const { return beta_; }
    double at(const Vec3d& q) const;
    // out[i] = at(points[i]), in parallel (TBB). Precondition: out.size() == points.size().
    void at(std::span<const Vec3d> points, std::span<double> out) const;

    // The same values bit for bit as at(), for at most kPacket points walked through the tree
    // together (one visit of a node for all points that need it, in at()'s order for each point):
    // cheaper than one walk per point when the points are close together.
    static constexpr std::size_t kPacket = 64;
    void at_packet(std::span<const Vec3d> points, std::span<double> out) const;

    struct Stats {
        std::size_t far_clusters = 0, exact_triangles = 0;
    };
    // As at(q), also counting the work done (for benchmarks).
    double at(const Vec3d& q, Stats& stats) const;

private:
    friend struct FastWindingPackets;  // winding.cpp: at_packet's walks
    struct Cluster {
        Vec3d centre;      // area-weighted centroid p
        double accept2;    // squared expansion radius: |q - p|^2 >= accept2 -> use the expansion
        Vec3d dipole;      // a
        double trace;      // tr(M)
        double m[6];       // symmetric part of M: xx, yy, zz, xy, yz, zx
    };
    template <bool kCount>
    double evaluate(const Vec3d& q, Stats* stats) const;
    // The far cluster's expansion at q (unnormalized); c.centre - q = r, |r|^2 = rho2.
    static double far_term(const Cluster& c, const Vec3d& r, double rho2);

    const TriangleBvh& bvh_;
    double beta_;
    std::vector<Cluster> clusters_;  // parallel to bvh_.nodes()
};

// The fast winding number of a mesh with its own BVH (for callers that have no BVH at hand):
// FastWinding at beta = 3 (measured error <= 0.04 near the surface, docs/geometry.md).
class WindingTree {
public:
    explicit WindingTree(const TriMesh& mesh, double beta = 3.0) : bvh_(mesh), fast_(bvh_, beta) {}
    double operator()(const Vec3d& p) const { return fast_.at(p); }
    const FastWinding& fast() const { return fast_; }

private:
    TriangleBvh bvh_;
    FastWinding fast_;
};

// The exact winding number, hierarchically (Jacobson et al. 2013): a BVH node whose box does not
// hold the point contributes what the cone from its box centre over its boundary edges
// contributes, negated (the patch and that cap form a closed surface inside the box, whose
// winding number is 0 outside it); so far nodes cost their boundary edges, not their triangles.
// value(): winding_number() up to rounding. inside(): |w| > 0.5, the plain sum deciding within
// kRoundingGuard of 1/2, so that the bit is always winding_number()'s.
// Cost: build O(n log n) (a BVH and every inner node's net boundary); a query O(log n) nodes plus
// their boundary edges. Thread-safe; the mesh must outlive this object.
class BoundaryWinding {
public:
    explicit BoundaryWinding(const TriMesh& mesh);
    double value(const Vec3d& p) const;
    bool inside(const Vec3d& p) const;

private:
    static constexpr double kRoundingGuard = 1e-6;
    const TriMesh& mesh_;
    TriangleBvh bvh_;
    std::vector<std::uint32_t> first_;                 // node n's boundary: edges_[first_[n], first_[n + 1])
    std::vector<std::array<std::uint32_t, 2>> edges_;  // directed vertex pairs
    std::vector<char> capped_;                         // inner node with a (cheaper) boundary
};

// Bound on |WindingTree - winding_number| used for exact re-evaluation near the 0.5 threshold
// (2.5 times the worst error measured at beta 3).
inline constexpr double kWindingTolerance = 0.1;

// |w| > 0.5 at p: the tree's value, or the exact sum when the tree's is within the tolerance.
bool inside_by_winding(const WindingTree& tree, const TriMesh& mesh, const Vec3d& p);
// The same bit, the exact case from the hierarchical sum.
bool inside_by_winding(const WindingTree& tree, const BoundaryWinding& exact, const Vec3d& p);

}  // namespace hp
