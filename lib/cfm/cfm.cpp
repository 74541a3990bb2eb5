#include "cfm/cfm.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include <tbb/parallel_for.h>

#include "core/error.hpp"
#include "geometry/bvh.hpp"
#include "geometry/pseudo_normals.hpp"

namespace hp::cfm {

const std::vector<StoreName>& store_names() {
    static const std::vector<StoreName> all = {{"normal", Store::normal}, {"full", Store::full}};
    return all;
}

const char* store_name(Store s) {
    for (const StoreName& n : store_names())
        if (n.store == s) return n.name;
    return "?";
}

Store parse_store(const std::string& name) {
    for (const StoreName& n : store_names())
        if (name == n.name) return n.store;
    fail_usage("unknown store '" + name + "'");
}

const char* feature_name(FeatureType t) {
    switch (t) {
    case FeatureType::face: return "face";
    case FeatureType::edge: return "edge";
    case FeatureType::vertex: return "vertex";
    }
    return "?";
}

std::size_t ClosestFeatureMap::lookup(std::size_t s, const Vec3d& direction) const {
    const Sphere& sp = spheres[s];
    if (sp.single_feature) return sp.first;
    return sp.first + layout(sp.level).nearest(direction);
}

void make_layouts(ClosestFeatureMap& map) {
    map.layouts.clear();
    map.level_layout.clear();
    for (int level = 1; level <= map.levels; ++level) {
        // Stacks never grow with the level, so equal counts are neighbours.
        const int stacks = stacks_for_level(level, map.levels, map.root_stacks, map.min_stacks);
        if (map.layouts.empty() || map.layouts.back().stacks() != stacks) map.layouts.emplace_back(map.sampling, stacks);
        map.level_layout.push_back(static_cast<int>(map.layouts.size()) - 1);
    }
}

std::vector<LevelStats> level_stats(const ClosestFeatureMap& map) {
    std::vector<LevelStats> out(static_cast<std::size_t>(map.levels));
    for (int l = 1; l <= map.levels; ++l) {
        LevelStats& st = out[static_cast<std::size_t>(l - 1)];
        st.level = l;
        st.stacks = map.layout(l).stacks();
        st.samples_per_sphere = map.layout(l).size();
    }
    for (const Sphere& sp : map.spheres) {
        LevelStats& st = out[static_cast<std::size_t>(sp.level - 1)];
        ++st.spheres;
        st.single_feature += sp.single_feature ? 1 : 0;
        st.records += sp.count;
    }
    return out;
}

std::size_t unique_features(const ClosestFeatureMap& map) {
    std::vector<std::uint64_t> keys(map.features.size());
    for (std::size_t k = 0; k < keys.size(); ++k)
        keys[k] = (static_cast<std::uint64_t>(map.types[k]) << 32) | map.features[k];
    std::sort(keys.begin(), keys.end());
    return static_cast<std::size_t>(std::unique(keys.begin(), keys.end()) - keys.begin());
}

namespace {

std::uint64_t edge_key(std::uint32_t a, std::uint32_t b) {
    return (static_cast<std::uint64_t>(std::min(a, b)) << 32) | std::max(a, b);
}

// Global feature ids (see cfm.hpp): edges by the lowest-numbered triangle that has them.
class FeatureIds {
public:
    explicit FeatureIds(const TriMesh& mesh) : mesh_(mesh) {
        edges_.reserve(mesh.triangles.size() * 3);
        for (std::size_t t = 0; t < mesh.triangles.size(); ++t)
            for (std::uint32_t i = 0; i < 3; ++i)
                edges_.push_back({edge_key(mesh.triangles[t][i], mesh.triangles[t][(i + 1) % 3]),
                                  static_cast<std::uint32_t>(3 * t + i)});
        std::sort(edges_.begin(), edges_.end());  // by key, then lowest id first
        edges_.erase(std::unique(edges_.begin(), edges_.end(),
                                 [](const auto& a, const auto& b) { return a.first == b.first; }),
                     edges_.end());
    }
    std::uint32_t operator()(std::uint32_t t, const ClosestPoint& cp) const {
        const auto& tri = mesh_.triangles[t];
        const auto i = static_cast<std::size_t>(cp.index);
        switch (cp.type) {
        case FeatureType::face: return t;
        case FeatureType::vertex: return tri[i];
        case FeatureType::edge: {
            const std::uint64_t key = edge_key(tri[i], tri[(i + 1) % 3]);
            auto it = std::lower_bound(edges_.begin(), edges_.end(), std::pair<std::uint64_t, std::uint32_t>{key, 0});
            return it->second;  // every edge of every triangle is in the table
        }
        }
        return t;
    }

private:
    const TriMesh& mesh_;
    std::vector<std::pair<std::uint64_t, std::uint32_t>> edges_;
};

struct SphereResult {
    std::vector<std::array<float, 3>> normals;
    std::vector<FeatureType> types;
    std::vector<std::uint32_t> features;
    std::vector<Vec3d> points;
};

}  // namespace

ClosestFeatureMap build_cfm(const TriMesh& mesh, const PointSphereTree& tree, const Options& options,
                            const Progress& progress) {
    if (options.stacks < kMinStacks || options.stacks > kMaxStacks)
        fail_usage("the number of stacks (" + std::to_string(options.stacks) + ") is out of range (use " +
                   std::to_string(kMinStacks) + ".." + std::to_string(kMaxStacks) + ")");
    if (options.min_stacks < kMinStacks || options.min_stacks > options.stacks)
        fail_usage("the minimum number of stacks (" + std::to_string(options.min_stacks) + ") must be between " +
                   std::to_string(kMinStacks) + " and the number of stacks (" + std::to_string(options.stacks) + ")");
    if (mesh.triangles.empty()) fail_input("", "the mesh has no triangles (a closest feature map needs a surface)");
    if (tree.clusters.empty()) fail_input("", "the point-sphere tree has no spheres");
    for (std::size_t s = 0; s < tree.clusters.size(); ++s) {
        const TreeCluster& c = tree.clusters[s];
        if (!is_finite(c.sphere.center) || !std::isfinite(c.sphere.radius) || c.level < 1)
            fail_input("", "sphere " + std::to_string(s) + " of the point-sphere tree is not a finite sphere on a level >= 1");
    }

    ClosestFeatureMap map;
    map.sampling = options.sampling;
    map.store = options.store;
    map.root_stacks = options.stacks;
    map.min_stacks = options.min_stacks;
    map.levels = 0;
    for (const TreeCluster& c : tree.clusters) map.levels = std::max(map.levels, c.level);
    make_layouts(map);

    const TriangleBvh bvh(mesh);
    const PseudoNormals normals(mesh);
    const FeatureIds ids(mesh);
    const bool full = options.store == Store::full;
    const std::size_t n = tree.clusters.size();
    map.spheres.resize(n);
    std::vector<SphereResult> results(n);

    auto build_sphere = [&](std::size_t s) {
        const TreeCluster& c = tree.clusters[s];
        Sphere& sp = map.spheres[s];
        sp.cluster = static_cast<std::uint32_t>(s);
        sp.level = c.level;
        sp.center = c.sphere.center;
        sp.radius = std::max(0.0, c.sphere.radius);
        sp.stacks = stacks_for_level(c.level, map.levels, options.stacks, options.min_stacks);
        const SampleLayout& layout = map.layout(c.level);
        std::vector<FeatureType> types(layout.size());
        std::vector<std::uint32_t> features(layout.size());
        std::vector<Vec3d> points(layout.size());
        std::vector<std::array<float, 3>> norms(layout.size());
        bool single = true;
        for (std::size_t k = 0; k < layout.size(); ++k) {
            const Vec3d p = sp.center + layout.direction(k) * sp.radius;
            const MeshHit hit = bvh.closest(p);
            types[k] = hit.closest.type;
            features[k] = ids(hit.triangle, hit.closest);
            points[k] = hit.closest.point;
            const Vec3d nrm = normals.at(hit.triangle, hit.closest) * options.outward_sign;
            norms[k] = {static_cast<float>(nrm.x), static_cast<float>(nrm.y), static_cast<float>(nrm.z)};
            single = single && types[k] == types[0] && features[k] == features[0];
        }
        sp.single_feature = single;
        const std::size_t keep = single ? 1 : layout.size();
        SphereResult& r = results[s];
        r.normals.assign(norms.begin(), norms.begin() + static_cast<std::ptrdiff_t>(keep));
        if (full) {
            r.types.assign(types.begin(), types.begin() + static_cast<std::ptrdiff_t>(keep));
            r.features.assign(features.begin(), features.begin() + static_cast<std::ptrdiff_t>(keep));
            r.points.assign(points.begin(), points.begin() + static_cast<std::ptrdiff_t>(keep));
        }
    };

    // Blocks of spheres in parallel; progress is reported from this thread between blocks.
    const std::size_t block = 256;
    for (std::size_t b0 = 0; b0 < n; b0 += block) {
        const std::size_t b1 = std::min(n, b0 + block);
        tbb::parallel_for(b0, b1, [&](std::size_t s) { build_sphere(s); });
        progress.report("cfm", static_cast<double>(b1) / static_cast<double>(n));
    }

    std::size_t total = 0;
    for (const SphereResult& r : results) total += r.normals.size();
    map.normals.reserve(total);
    if (full) {
        map.types.reserve(total);
        map.features.reserve(total);
        map.points.reserve(total);
    }
    for (std::size_t s = 0; s < n; ++s) {
        SphereResult& r = results[s];
        map.spheres[s].first = static_cast<std::uint32_t>(map.normals.size());
        map.spheres[s].count = static_cast<std::uint32_t>(r.normals.size());
        map.normals.insert(map.normals.end(), r.normals.begin(), r.normals.end());
        if (full) {
            map.types.insert(map.types.end(), r.types.begin(), r.types.end());
            map.features.insert(map.features.end(), r.features.begin(), r.features.end());
            map.points.insert(map.points.end(), r.points.begin(), r.points.end());
        }
        r = SphereResult{};
    }
    return map;
}

}  // namespace hp::cfm
