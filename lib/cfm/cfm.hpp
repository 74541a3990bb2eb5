#pragma once
// lib/cfm — closest feature maps on point-sphere trees (Giang & O'Sullivan 2006).
//
// In: a mesh (world units, triangles counter-clockwise from outside) and a point-sphere tree built
// on a pointshell of it. Out: for every sphere (cluster-id order) and every sample direction d of
// its level's layout (sampling.hpp), at centre + radius * d: the closest feature (face, edge or
// vertex; exact, BVH), the closest point, and the feature's outward normal (face normal or
// angle-weighted pseudo-normal, times `outward_sign`). A sphere whose samples all see one feature
// keeps one record (`single_feature`). Store normal keeps the normals only, full all four.
// Feature indices: face t; edge 3 t + i (edge (v_i, v_i+1 mod 3) of the lowest-numbered triangle t
// that has it); vertex v.
// Cost: one BVH query per sample. Threads: TBB over spheres, merged in cluster order: the same
// output for every thread count. Details: docs/cfm.md.
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "cfm/sampling.hpp"
#include "core/progress.hpp"
#include "geometry/closest_point.hpp"
#include "mesh/mesh.hpp"
#include "spheretree/tree.hpp"

namespace hp::cfm {

enum class Store : std::uint8_t { normal = 0, full = 1 };
// What a map stores with its name, the one list of the names (--store takes its choices from it).
struct StoreName {
    const char* name;
    Store store;
};
const std::vector<StoreName>& store_names();
const char* store_name(Store s);
// The store named `name`; hp::Error(usage) for a name not in store_names().
Store parse_store(const std::string& name);
const char* feature_name(FeatureType t);   // "face", "edge", "vertex"

struct Options {
    int stacks = 16;      // at the root
    int min_stacks = 4;   // at the deepest level
    Sampling sampling = Sampling::adaptive;
    Store store = Store::normal;
    double outward_sign = 1;  // -1 for meshes wound inward (normals are flipped)
};

struct Sphere {
    std::uint32_t cluster = 0;  // tree cluster id (= index in ClosestFeatureMap::spheres)
    int level = 0;              // 1 = root
    Vec3d center;
    double radius = 0;
    int stacks = 0;
    bool single_feature = false;
    std::uint32_t first = 0;  // first record
    std::uint32_t count = 0;  // records: 1 when single_feature, else the layout's sample count
};

struct ClosestFeatureMap {
    Sampling sampling = Sampling::adaptive;
    Store store = Store::normal;
    int root_stacks = 0, min_stacks = 0, levels = 0;
    std::vector<Sphere> spheres;
    // One entry per record (store full: all four arrays; store normal: `normals` only).
    std::vector<std::array<float, 3>> normals;  // unit, outward
    std::vector<FeatureType> types;
    std::vector<std::uint32_t> features;        // index as documented above
    std::vector<Vec3d> points;                  // closest points on the mesh

    std::size_t records() const { return normals.size(); }
    // The record answering a contact direction (from the sphere's centre) on sphere `s`:
    // the nearest sample's record, or the single record of a single_feature sphere. O(1).
    std::size_t lookup(std::size_t s, const Vec3d& direction) const;
    // The sample layout of the spheres of tree level `level` (1 = root).
    const SampleLayout& layout(int level) const {
        return layouts[static_cast<std::size_t>(level_layout[static_cast<std::size_t>(level - 1)])];
    }

    // Filled by make_layouts: one layout per distinct stack count, and per level (index
    // level - 1) the index of its layout.
    std::vector<SampleLayout> layouts;
    std::vector<int> level_layout;
};

// Builds the map. Throws hp::Error(usage) for stacks outside [kMinStacks, kMaxStacks] or
// min_stacks > stacks, hp::Error(bad_input) for a mesh without triangles, an empty tree or a
// sphere that is not finite.
ClosestFeatureMap build_cfm(const TriMesh& mesh, const PointSphereTree& tree, const Options& options,
                            const Progress& progress = {});

// Per tree level: stacks, spheres, samples per sphere, single-feature spheres, stored records.
struct LevelStats {
    int level = 0, stacks = 0;
    std::size_t spheres = 0, samples_per_sphere = 0, single_feature = 0, records = 0;
};
std::vector<LevelStats> level_stats(const ClosestFeatureMap& map);
// Distinct (type, index) features among the records; 0 with store normal (no features kept).
std::size_t unique_features(const ClosestFeatureMap& map);

// Fills `layouts` from sampling, root_stacks, min_stacks and levels (e.g. after reading a file).
void make_layouts(ClosestFeatureMap& map);

}  // namespace hp::cfm
