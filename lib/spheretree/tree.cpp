#include "spheretree/tree.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <string>

#include <nanoflann.hpp>
#include <tbb/parallel_for.h>

#include "core/error.hpp"

namespace hp {

namespace {

std::uint64_t splitmix64(std::uint64_t& state) {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

// nanoflann adaptor over a subset of the points (the points of one level).
struct LevelCloud {
    std::span<const Vec3d> all;
    const std::vector<std::uint32_t>* ids;  // global indices of this level's points

    std::size_t kdtree_get_point_count() const { return ids->size(); }
    double kdtree_get_pt(std::size_t i, std::size_t dim) const { return all[(*ids)[i]][static_cast<int>(dim)]; }
    template <class Box>
    bool kdtree_get_bbox(Box&) const { return false; }
};

using KdTree = nanoflann::KDTreeSingleIndexAdaptor<nanoflann::L2_Simple_Adaptor<double, LevelCloud>,
                                                    LevelCloud, 3, std::uint32_t>;

// k nearest neighbours that are not yet clustered: a k-NN result set that ignores taken points.
// Ties in distance are broken by the lower index, so results do not depend on tree layout.
class UnclusteredKnn {
public:
    UnclusteredKnn(std::size_t k, const std::vector<char>& taken) : k_(k), taken_(taken) {}

    void init() { hits_.clear(); }
    std::size_t size() const { return hits_.size(); }
    bool full() const { return hits_.size() == k_; }
    // nanoflann offers a point only when its distance is below this, so a full set answers just
    // above its worst distance: a point tied with the worst still comes in and the index decides.
    double worstDist() const {
        return full() ? std::nextafter(hits_.back().first, std::numeric_limits<double>::infinity())
                      : std::numeric_limits<double>::max();
    }
    bool addPoint(double dist, std::uint32_t index) {
        if (taken_[index]) return true;
        std::pair<double, std::uint32_t> hit{dist, index};
        if (full() && !(hit < hits_.back())) return true;
        auto at = std::upper_bound(hits_.begin(), hits_.end(), hit);
        hits_.insert(at, hit);
        if (hits_.size() > k_) hits_.pop_back();
        return true;
    }
    const std::vector<std::pair<double, std::uint32_t>>& hits() const { return hits_; }

private:
    std::size_t k_;
    const std::vector<char>& taken_;
    std::vector<std::pair<double, std::uint32_t>> hits_;
};

struct LevelCluster {
    std::vector<std::uint32_t> members;  // local indices, parent first
};

// Parent = member nearest the mean of `members` (ties: lower position). Returns its position.
std::size_t nearest_to_mean(const std::vector<std::uint32_t>& members, const LevelCloud& cloud) {
    Vec3d mean{};
    for (std::uint32_t m : members) mean += cloud.all[(*cloud.ids)[m]];
    mean = mean / static_cast<double>(members.size());
    std::size_t best = 0;
    double best_d = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < members.size(); ++i) {
        double d = length2(cloud.all[(*cloud.ids)[members[i]]] - mean);
        if (d < best_d) {
            best_d = d;
            best = i;
        }
    }
    return best;
}

// The level's typical cluster extent: the median distance from a point to its K-th nearest
// other point, over at most 4096 points taken evenly (the median is stable; big levels stay cheap).
double typical_extent(const KdTree& tree, const LevelCloud& cloud, int k) {
    const std::size_t n = cloud.ids->size();
    const std::size_t want = std::min<std::size_t>(static_cast<std::size_t>(k) + 1, n);  // + the point itself
    const std::size_t step = std::max<std::size_t>(1, n / 4096);
    std::vector<double> dists;
    std::vector<std::uint32_t> idx(want);
    std::vector<double> d2(want);
    for (std::size_t i = 0; i < n; i += step) {
        Vec3d p = cloud.all[(*cloud.ids)[i]];
        double q[3] = {p.x, p.y, p.z};
        std::size_t found = tree.knnSearch(q, want, idx.data(), d2.data());
        if (found > 1) dists.push_back(std::sqrt(d2[found - 1]));
    }
    if (dists.empty()) return 0;
    auto mid = dists.begin() + static_cast<std::ptrdiff_t>(dists.size() / 2);
    std::nth_element(dists.begin(), mid, dists.end());
    return *mid;
}

// Clusters the points `ids` of one level (steps 1-3 of the header). Returns clusters of global
// indices, parent first; `threshold_used` is the distance used for tagging (0: none).
std::vector<std::vector<std::uint32_t>> cluster_level(std::span<const Vec3d> points,
                                                      const std::vector<std::uint32_t>& ids, int k,
                                                      std::uint64_t seed, double threshold_factor,
                                                      double& threshold_used) {
    const std::size_t n = ids.size();
    LevelCloud cloud{points, &ids};
    KdTree tree(3, cloud, nanoflann::KDTreeSingleIndexAdaptorParams(16));
    tree.buildIndex();
    const double threshold = threshold_factor > 0 ? threshold_factor * typical_extent(tree, cloud, k) : 0;
    // A level must shrink at least halfway from n to n / K; otherwise the threshold is too tight
    // for it and the level is clustered again without tagging (this bounds the number of levels).
    const double max_clusters = static_cast<double>(n) * (1.0 + 1.0 / k) / 2.0;

    for (int attempt = 0; attempt < 2; ++attempt) {
        const bool use_threshold = attempt == 0 && threshold > 0;
        std::vector<char> taken(n, 0);
        std::vector<LevelCluster> clusters;
        std::vector<std::uint32_t> tagged;
        std::uint64_t state = seed;
        std::uint32_t start = static_cast<std::uint32_t>(splitmix64(state) % n);
        std::size_t cursor = 0, remaining = n;
        UnclusteredKnn knn(static_cast<std::size_t>(k), taken);
        while (remaining > 0) {
            if (taken[start]) {
                while (taken[cursor]) ++cursor;
                start = static_cast<std::uint32_t>(cursor);
            }
            // The start point and its K-1 nearest unclustered points; the K-th starts the next.
            LevelCluster c;
            c.members.push_back(start);
            taken[start] = 1;
            Vec3d p = points[ids[start]];
            double q[3] = {p.x, p.y, p.z};
            knn.init();
            tree.findNeighbors(knn, q, nanoflann::SearchParams());
            const auto& hits = knn.hits();
            const std::size_t take = std::min<std::size_t>(static_cast<std::size_t>(k) - 1, hits.size());
            for (std::size_t i = 0; i < take; ++i) {
                c.members.push_back(hits[i].second);
                taken[hits[i].second] = 1;
            }
            remaining -= take + 1;
            if (hits.size() > take) start = hits[take].second;

            // Parent point and threshold tagging (step 2).
            std::size_t parent = nearest_to_mean(c.members, cloud);
            while (use_threshold) {
                const Vec3d pp = points[ids[c.members[parent]]];
                std::vector<std::uint32_t> kept;
                for (std::size_t i = 0; i < c.members.size(); ++i) {
                    if (i != parent && length(points[ids[c.members[i]]] - pp) > threshold) tagged.push_back(c.members[i]);
                    else kept.push_back(c.members[i]);
                }
                if (kept.size() == c.members.size()) break;
                c.members = std::move(kept);
                parent = nearest_to_mean(c.members, cloud);
            }
            std::swap(c.members[0], c.members[parent]);
            clusters.push_back(std::move(c));
        }

        // Step 3: tagged points join the cluster of the nearest parent point within the threshold
        // (parents of the clusters formed above), or become a cluster of their own.
        if (!tagged.empty()) {
            std::sort(tagged.begin(), tagged.end());
            std::vector<std::uint32_t> parent_ids;
            for (const LevelCluster& c : clusters) parent_ids.push_back(ids[c.members[0]]);
            LevelCloud parent_cloud{points, &parent_ids};
            KdTree parent_tree(3, parent_cloud, nanoflann::KDTreeSingleIndexAdaptorParams(16));
            parent_tree.buildIndex();
            const std::vector<char> none(parent_ids.size(), 0);
            UnclusteredKnn nearest(1, none);  // ties: the lower cluster index
            for (std::uint32_t t : tagged) {
                Vec3d tp = points[ids[t]];
                double tq[3] = {tp.x, tp.y, tp.z};
                nearest.init();
                parent_tree.findNeighbors(nearest, tq, nanoflann::SearchParams());
                const auto& best = nearest.hits().front();
                if (std::sqrt(best.first) <= threshold) clusters[best.second].members.push_back(t);
                else clusters.push_back(LevelCluster{{t}});
            }
        }
        if (use_threshold && static_cast<double>(clusters.size()) > max_clusters) continue;
        threshold_used = use_threshold ? threshold : 0;
        std::vector<std::vector<std::uint32_t>> out;
        out.reserve(clusters.size());
        for (LevelCluster& c : clusters) {
            std::vector<std::uint32_t> global;
            global.reserve(c.members.size());
            for (std::uint32_t m : c.members) global.push_back(ids[m]);
            out.push_back(std::move(global));
        }
        return out;
    }
    return {};  // unreachable: the attempt without threshold always returns
}

}  // namespace

PointSphereTree build_point_sphere_tree(std::span<const Vec3d> points, const TreeOptions& options,
                                        const Progress& progress) {
    if (points.empty()) fail_input("", "the pointshell has no points (nothing to cluster)");
    if (options.k < 2) fail_usage("the branching factor K must be at least 2 (got " + std::to_string(options.k) + ")");
    if (!(options.threshold >= 0) || !std::isfinite(options.threshold))
        fail_usage("the tagging threshold must be a finite number >= 0 (0 = no tagging)");
    if (points.size() > std::numeric_limits<std::uint32_t>::max() / 2)
        fail_input("", "too many points for one tree (" + std::to_string(points.size()) + ")");

    // Bottom-up: levels[0] = leaves. Each level is a list of clusters (global point ids).
    std::vector<std::vector<std::vector<std::uint32_t>>> levels;
    std::vector<double> thresholds_bottom_up;
    std::vector<std::uint32_t> ids(points.size());
    for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::uint32_t>(i);
    std::uint64_t level_seed = options.seed;
    const double total = static_cast<double>(points.size());
    double done = 0;
    for (;;) {
        progress.report("clusters", std::min(1.0, done / total));
        double used = 0;
        if (ids.size() <= static_cast<std::size_t>(options.k)) {
            // The root: all remaining points, parent nearest their mean.
            LevelCloud cloud{points, &ids};
            std::vector<std::uint32_t> local(ids.size());
            for (std::size_t i = 0; i < local.size(); ++i) local[i] = static_cast<std::uint32_t>(i);
            std::size_t parent = nearest_to_mean(local, cloud);
            std::vector<std::uint32_t> root = ids;
            std::swap(root[0], root[parent]);
            levels.push_back({root});
            thresholds_bottom_up.push_back(0);
            break;
        }
        auto level = cluster_level(points, ids, options.k, level_seed, options.threshold, used);
        done += static_cast<double>(ids.size());
        ids.clear();
        for (const auto& c : level) ids.push_back(c[0]);
        levels.push_back(std::move(level));
        thresholds_bottom_up.push_back(used);
        splitmix64(level_seed);
    }

    // Breadth-first ids from the root. For each level keep, per parent point, its cluster index.
    PointSphereTree tree;
    tree.k = options.k;
    tree.levels = static_cast<int>(levels.size());
    tree.thresholds.assign(thresholds_bottom_up.rbegin(), thresholds_bottom_up.rend());
    std::vector<std::vector<std::int64_t>> cluster_of_parent(levels.size());
    for (std::size_t l = 0; l < levels.size(); ++l) {
        auto& map = cluster_of_parent[l];
        map.assign(points.size(), -1);
        for (std::size_t c = 0; c < levels[l].size(); ++c) map[levels[l][c][0]] = static_cast<std::int64_t>(c);
    }
    struct Pending {
        std::size_t level_index;  // into `levels` (bottom-up)
        std::size_t cluster;
        std::int32_t parent_id;
    };
    std::vector<Pending> queue{{levels.size() - 1, 0, -1}};
    for (std::size_t head = 0; head < queue.size(); ++head) {
        Pending p = queue[head];
        TreeCluster c;
        c.level = static_cast<int>(levels.size() - p.level_index);
        c.points = levels[p.level_index][p.cluster];
        c.parent = p.parent_id;
        const std::int32_t id = static_cast<std::int32_t>(head);
        if (p.parent_id >= 0) tree.clusters[static_cast<std::size_t>(p.parent_id)].children.push_back(static_cast<std::uint32_t>(id));
        if (p.level_index > 0) {
            for (std::uint32_t member : c.points) {
                std::int64_t child = cluster_of_parent[p.level_index - 1][member];
                assert(child >= 0);
                queue.push_back({p.level_index - 1, static_cast<std::size_t>(child), id});
            }
        }
        tree.clusters.push_back(std::move(c));
    }

    // Points below each cluster: leaves own theirs; parents gather their children's (deepest
    // level first, so children are complete). Then one minimal ball per cluster, in parallel.
    std::vector<std::vector<std::uint32_t>> below(tree.clusters.size());
    for (std::size_t i = tree.clusters.size(); i-- > 0;) {
        TreeCluster& c = tree.clusters[i];
        if (c.children.empty()) {
            below[i] = c.points;
        } else {
            for (std::uint32_t ch : c.children) below[i].insert(below[i].end(), below[ch].begin(), below[ch].end());
        }
    }
    progress.report("spheres", 0);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, tree.clusters.size()), [&](const auto& r) {
        std::vector<Vec3d> pts;
        for (std::size_t i = r.begin(); i != r.end(); ++i) {
            pts.clear();
            for (std::uint32_t p : below[i]) pts.push_back(points[p]);
            tree.clusters[i].sphere = minimal_enclosing_ball(pts);
        }
    });
    progress.report("spheres", 1);
    return tree;
}

std::vector<TreeLevelStats> level_statistics(const PointSphereTree& tree) {
    std::vector<TreeLevelStats> out(static_cast<std::size_t>(std::max(tree.levels, 0)));
    std::vector<std::vector<double>> radii(out.size());
    for (const TreeCluster& c : tree.clusters) {
        assert(c.level >= 1 && c.level <= tree.levels);
        const auto l = static_cast<std::size_t>(c.level - 1);
        ++out[l].clusters;
        out[l].leaves += c.children.empty() ? 1 : 0;
        out[l].points += c.points.size();
        radii[l].push_back(c.sphere.radius);
    }
    for (std::size_t l = 0; l < out.size(); ++l) {
        TreeLevelStats& s = out[l];
        s.level = static_cast<int>(l + 1);
        s.threshold = l < tree.thresholds.size() ? tree.thresholds[l] : 0;
        std::vector<double>& r = radii[l];
        if (r.empty()) continue;
        std::sort(r.begin(), r.end());
        s.radius_min = r.front();
        s.radius_max = r.back();
        s.radius_median = r[r.size() / 2];
        double sum = 0;
        for (double v : r) sum += v;
        s.radius_mean = sum / static_cast<double>(r.size());
    }
    return out;
}

}  // namespace hp
