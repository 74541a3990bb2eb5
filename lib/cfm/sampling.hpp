#pragma once
// lib/cfm/sampling — directions on a sphere for closest feature maps (Giang & O'Sullivan 2006,
// sections 4 and 5).
//
// Direction (sin phi cos theta, sin phi sin theta, cos phi), phi in [0, pi] from +z, theta from +x
// towards +y. N stacks: rings at phi_i = i pi / N (i = 0..N), n_i samples at theta_j = 2 pi j / n_i.
//  adaptive  n_i = floor((N + 1) sin phi_i), no pole samples (reproduces the paper's Tables 1, 2)
//  polar     N on rings 1..N-1 plus one at each pole: N(N - 1) + 2
// Order: ring by ring from the north pole, theta ascending. Lookup: the nearest sample by angle in
// constant time (the same answer as a brute-force search). Why these rules: docs/cfm.md.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "math/vec.hpp"

namespace hp::cfm {

enum class Sampling : std::uint8_t { adaptive = 0, polar = 1 };

// The samplings with their names, the one list of the names (--sampling takes its choices from it).
struct SamplingName {
    const char* name;
    Sampling sampling;
};
const std::vector<SamplingName>& sampling_names();
const char* sampling_name(Sampling s);
// The sampling named `name`; hp::Error(usage) for a name not in sampling_names().
Sampling parse_sampling(const std::string& name);

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
