#pragma once
// lib/cfm/sampling — directions on a sphere for closest feature maps (paper 003, sections 4 and 5).
//
// A direction is the unit vector (sin phi cos theta, sin phi sin theta, cos phi) (paper eqs. 1-3):
// phi in [0, pi] measured from +z, theta in [0, 2 pi) from +x towards +y.
//
// N stacks put rings at phi_i = i pi / N, i = 0..N; ring i holds n_i samples at
// theta_j = 2 pi j / n_i, j = 0..n_i-1 (no offset between rings).
//  - adaptive (paper Fig. 3b): n_i = floor((N + 1) sin phi_i). The pole "rings" get floor(0) = 0
//    samples, so there are no pole samples; the directions around a pole are served by ring 1.
//    This is the rule that reproduces the paper: it gives all four counts of Table 1 (root 65 at
//    N = 10 and 167 at N = 16; leaf 3 at N = 2 and 11 at N = 4) and the adaptive column of
//    Table 2 at 10 and 20 stacks to six digits (bench_cfm). No rule of the form "about N sin phi
//    per ring plus two pole samples" gives 65 and 167: for even N the rings pair up around the
//    equator, so an odd total needs an odd equator count, i.e. N + 1 rather than N
//    (scripts/cfm_sampling_rules.py tries the rounding/base/pole candidates).
//  - polar (paper Fig. 3a, "full polar"): N samples on each ring i = 1..N-1 and one sample at
//    each pole, N(N - 1) + 2 in all (242 at N = 16). The paper's own full polar sampling puts
//    N + 1 on every ring i = 0..N, the pole "rings" included, i.e. N + 1 coincident samples at
//    each pole: bench_cfm reproduces its Table 2 column with that layout; a pole is one
//    direction, so we keep it once.
// Sample order: ring by ring from the north pole (phi = 0) southwards, theta ascending in a ring.
//
// Lookup (paper section 5): the nearest sample to a direction from its (phi, theta) in constant
// time: the ring index from phi (eq. 4), the index in a ring from theta (eq. 5, rounded to the
// nearest sample), over the two rings that bracket phi and then outward only while a ring can
// still hold a nearer sample (its phi distance is below the best angle found); with the counts
// above that is at most a few rings whatever N is. "Nearest" is by angle, i.e. the largest dot
// product with the sample directions, exactly as a brute-force search over all samples.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "math/vec.hpp"

namespace hp::cfm {

enum class Sampling : std::uint8_t { adaptive = 0, polar = 1 };

const char* sampling_name(Sampling s);  // "adaptive", "polar"

inline constexpr int kMinStacks = 2;    // fewer stacks have no ring
inline constexpr int kMaxStacks = 256;  // at most (N+1)^2 samples per sphere

// Samples on ring i (0..N) of N stacks. Precondition: kMinStacks <= stacks <= kMaxStacks.
int ring_size(Sampling s, int stacks, int ring);
// Samples of one sphere with N stacks (adaptive: sum of ring sizes; polar: N^2 + 1).
std::size_t sample_count(Sampling s, int stacks);

// Progressive refinement over the tree levels: level 1 (the root) gets `root_stacks`, the
// deepest level `min_stacks`, the levels between a linear interpolation rounded to the nearest
// integer (halves up): N(l) = S - round((S - M)(l - 1) / (L - 1)). A one-level tree uses S.
// Precondition: 1 <= level <= levels, min_stacks <= root_stacks.
int stacks_for_level(int level, int levels, int root_stacks, int min_stacks);

// The directions of one sphere and their constant-time lookup. Immutable, thread-safe.
class SampleLayout {
public:
    SampleLayout(Sampling s, int stacks);

    Sampling sampling() const { return sampling_; }
    int stacks() const { return stacks_; }
    std::size_t size() const { return dirs_.size(); }
    const Vec3d& direction(std::size_t k) const { return dirs_[k]; }
    const std::vector<Vec3d>& directions() const { return dirs_; }
    int ring_size(int ring) const { return count_[static_cast<std::size_t>(ring)]; }
    std::size_t ring_first(int ring) const { return first_[static_cast<std::size_t>(ring)]; }

    // Index of the sample nearest to the direction (phi, theta); phi is clamped to [0, pi],
    // theta taken modulo 2 pi. O(1).
    std::size_t nearest(double phi, double theta) const;
    // The same for a direction vector (any length > 0; the zero vector, or one that is not
    // finite, gives the sample nearest to +z).
    std::size_t nearest(const Vec3d& direction) const;

private:
    std::size_t nearest_unit(const Vec3d& unit, double phi, double theta) const;

    Sampling sampling_;
    int stacks_;
    std::vector<int> count_;            // per ring 0..N
    std::vector<std::size_t> first_;    // per ring: index of its first sample
    std::vector<Vec3d> dirs_;
};

// phi in [0, pi] and theta in [0, 2 pi) of a direction (any length > 0).
void direction_angles(const Vec3d& d, double& phi, double& theta);

}  // namespace hp::cfm
