#include "pointshell/pointshell.hpp"

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <numeric>
#include <random>
#include <unordered_map>

#include <nanoflann.hpp>
#include <tbb/parallel_for.h>

#include "core/error.hpp"
#include "core/text.hpp"
#include "geometry/closest_point.hpp"
#include "geometry/pseudo_normals.hpp"
#include "field/field.hpp"

namespace hp {

const char* shell_normals_name(ShellNormals n) { return kShellNormalsNames[static_cast<std::size_t>(n)].data(); }

ShellNormals parse_shell_normals(const std::string& name) {
    for (std::size_t i = 0; i < kShellNormalsNames.size(); ++i)
        if (kShellNormalsNames[i] == name) return static_cast<ShellNormals>(i);
    fail_usage("unknown normals '" + name + "' (use " + or_list(kShellNormalsNames) + ")");
}

namespace {

constexpr double kRadToDeg = 57.295779513082320876798;

// Compressed rows: row r is items[offsets[r] .. offsets[r+1]).
struct Csr {
    std::vector<std::uint32_t> offsets, items;
    std::span<const std::uint32_t> row(std::size_t r) const {
        return {items.data() + offsets[r], items.data() + offsets[r + 1]};
    }
};

// Triangles around each vertex, in triangle order.
Csr vertex_triangles(const TriMesh& mesh) {
    Csr c;
    c.offsets.assign(mesh.vertices.size() + 1, 0);
    for (const auto& tri : mesh.triangles)
        for (std::uint32_t v : tri) ++c.offsets[v + 1];
    std::partial_sum(c.offsets.begin(), c.offsets.end(), c.offsets.begin());
    c.items.resize(c.offsets.back());
    std::vector<std::uint32_t> fill(c.offsets.begin(), c.offsets.end() - 1);
    for (std::uint32_t t = 0; t < mesh.triangles.size(); ++t)
        for (std::uint32_t v : mesh.triangles[t]) c.items[fill[v]++] = t;
    return c;
}

// The triangles sharing a vertex with each triangle (itself excluded), sorted.
Csr triangle_neighbours(const TriMesh& mesh, const Csr& around) {
    const std::size_t n = mesh.triangles.size();
    std::vector<std::vector<std::uint32_t>> rows(n);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 1024), [&](const tbb::blocked_range<std::size_t>& r) {
        for (std::size_t t = r.begin(); t < r.end(); ++t) {
            auto& row = rows[t];
            for (std::uint32_t v : mesh.triangles[t])
                for (std::uint32_t u : around.row(v))
                    if (u != t) row.push_back(u);
            std::sort(row.begin(), row.end());
            row.erase(std::unique(row.begin(), row.end()), row.end());
        }
    });
    Csr c;
    c.offsets.assign(n + 1, 0);
    for (std::size_t t = 0; t < n; ++t) c.offsets[t + 1] = c.offsets[t] + static_cast<std::uint32_t>(rows[t].size());
    c.items.reserve(c.offsets.back());
    for (auto& row : rows) c.items.insert(c.items.end(), row.begin(), row.end());
    return c;
}

// Greedy colouring in index order: each triangle takes the smallest colour none of its
// lower-index neighbours has. Neighbours never share a colour.
std::vector<std::uint32_t> colour_triangles(const Csr& nbr, std::size_t n, std::size_t& colours) {
    std::vector<std::uint32_t> colour(n, 0);
    std::vector<std::uint32_t> seen;  // seen[c] == t + 1 when colour c is taken around t
    colours = 0;
    for (std::uint32_t t = 0; t < n; ++t) {
        for (std::uint32_t u : nbr.row(t)) {
            if (u >= t) break;  // sorted
            if (colour[u] >= seen.size()) seen.resize(colour[u] + 1, 0);
            seen[colour[u]] = t + 1;
        }
        std::uint32_t c = 0;
        while (c < seen.size() && seen[c] == t + 1) ++c;
        colour[t] = c;
        colours = std::max<std::size_t>(colours, c + 1);
    }
    return colour;
}

// Connected components by shared vertices; ids in order of first appearance in triangle order.
std::vector<std::uint32_t> triangle_components(const TriMesh& mesh, std::size_t& count) {
    std::vector<std::uint32_t> parent(mesh.vertices.size());
    std::iota(parent.begin(), parent.end(), 0u);
    auto find = [&](std::uint32_t v) {
        while (parent[v] != v) v = parent[v] = parent[parent[v]];
        return v;
    };
    for (const auto& tri : mesh.triangles)
        for (int i = 1; i < 3; ++i) {
            std::uint32_t a = find(tri[0]), b = find(tri[static_cast<std::size_t>(i)]);
            if (a != b) parent[std::max(a, b)] = std::min(a, b);
        }
    std::vector<std::uint32_t> id(mesh.vertices.size(), UINT32_MAX), comp(mesh.triangles.size());
    count = 0;
    for (std::size_t t = 0; t < mesh.triangles.size(); ++t) {
        std::uint32_t root = find(mesh.triangles[t][0]);
        if (id[root] == UINT32_MAX) id[root] = static_cast<std::uint32_t>(count++);
        comp[t] = id[root];
    }
    return comp;
}

// Central-difference gradient of the trilinear sampler with step h.
Vec3d field_gradient(const DistanceSampler& f, const Vec3d& p, double h) {
    Vec3d g;
    for (int a = 0; a < 3; ++a) {
        Vec3d d;
        d[a] = h;
        g[a] = (f.value(p + d) - f.value(p - d)) / (2 * h);
    }
    return g;
}

struct Candidate {
    double distance2;
    std::size_t voxel;
    ClosestPoint cp;
};

double percentile(std::vector<double> v, double q) {
    if (v.empty()) return 0;
    const std::size_t k = std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5));
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
    return v[k];
}

struct Cloud {
    std::span<const Vec3d> pts;
    std::size_t kdtree_get_point_count() const { return pts.size(); }
    double kdtree_get_pt(std::size_t i, std::size_t dim) const { return pts[i][static_cast<int>(dim)]; }
    template <class Box>
    bool kdtree_get_bbox(Box&) const { return false; }
};
using KdTree = nanoflann::KDTreeSingleIndexAdaptor<nanoflann::L2_Simple_Adaptor<double, Cloud>, Cloud, 3, std::uint32_t>;

// The kept points in cubic cells of side at least alpha*s over the grid's box (points outside it
// go to the nearest boundary cell: clamping never moves two cells further apart), so every kept
// point closer than alpha*s to p lies in p's cell or one of the 26 around it. Up to 2^24 cells
// (64 MB of heads) are an array; more are hashed, so that only cells holding a point cost memory.
class SpacingHash {
public:
    SpacingHash(const GridSpec& g, double radius) : r2_(radius * radius), origin_(g.origin) {
        double extent = 0;
        for (int a = 0; a < 3; ++a) extent = std::max(extent, g.dims[a] * g.voxel_size);
        side_ = std::max(radius, extent / 1048576.0);  // at most 2^20 cells per axis: keys fit 64 bits
        for (int a = 0; a < 3; ++a)
            cells_[a] = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(g.dims[a] * g.voxel_size / side_)));
        const double total = static_cast<double>(cells_[0]) * static_cast<double>(cells_[1]) * static_cast<double>(cells_[2]);
        if (total <= double(1 << 24)) dense_.assign(static_cast<std::size_t>(total), kNone);
    }
    // True when no kept point is closer than alpha*s to p.
    bool clear_of(const Vec3d& p) const {
        const auto c = cell(p);
        for (std::int64_t k = std::max<std::int64_t>(c[2] - 1, 0); k <= std::min(c[2] + 1, cells_[2] - 1); ++k)
            for (std::int64_t j = std::max<std::int64_t>(c[1] - 1, 0); j <= std::min(c[1] + 1, cells_[1] - 1); ++j)
                for (std::int64_t i = std::max<std::int64_t>(c[0] - 1, 0); i <= std::min(c[0] + 1, cells_[0] - 1); ++i)
                    for (std::uint32_t q = head(key(i, j, k)); q != kNone; q = next_[q])
                        if (length2(p - points_[q]) < r2_) return false;
        return true;
    }
    void add(const Vec3d& p) {
        const auto c = cell(p);
        std::uint32_t& first = dense_.empty() ? head_.try_emplace(key(c[0], c[1], c[2]), kNone).first->second
                                              : dense_[key(c[0], c[1], c[2])];
        next_.push_back(first);
        first = static_cast<std::uint32_t>(points_.size());
        points_.push_back(p);
    }

private:
    static constexpr std::uint32_t kNone = UINT32_MAX;
    std::array<std::int64_t, 3> cell(const Vec3d& p) const {
        std::array<std::int64_t, 3> c;
        for (int a = 0; a < 3; ++a)  // clamped in doubles: a far point must not overflow the conversion
            c[static_cast<std::size_t>(a)] = static_cast<std::int64_t>(
                std::clamp(std::floor((p[a] - origin_[a]) / side_), 0.0, static_cast<double>(cells_[static_cast<std::size_t>(a)] - 1)));
        return c;
    }
    std::uint64_t key(std::int64_t i, std::int64_t j, std::int64_t k) const {
        return static_cast<std::uint64_t>((k * cells_[1] + j) * cells_[0] + i);
    }
    std::uint32_t head(std::uint64_t key) const {
        if (!dense_.empty()) return dense_[key];
        const auto it = head_.find(key);
        return it == head_.end() ? kNone : it->second;
    }
    double r2_, side_ = 0;
    Vec3d origin_;
    std::array<std::int64_t, 3> cells_{};
    std::vector<std::uint32_t> dense_;  // the heads of all cells, when they are few enough
    std::unordered_map<std::uint64_t, std::uint32_t> head_;
    std::vector<std::uint32_t> next_;
    std::vector<Vec3d> points_;
};

// The field the gradients and the orientation vote read: the distances, or the layers scaled to
// length; `h` is the step of its central differences.
struct VoteField {
    DistanceSampler sampler;
    double h;
    bool have_distance;
};

VoteField vote_field(ShellField& field) {
    const GridSpec& g = field.grid;
    const double s = g.voxel_size;
    const bool have_distance = !field.distance.empty();
    std::vector<double> values;
    if (have_distance) {
        values = std::move(field.distance);
    } else {
        values.resize(field.layers.size());
        for (std::size_t i = 0; i < values.size(); ++i) values[i] = field.layers[i] * s;
    }
    return {DistanceSampler(g, std::move(values)), have_distance ? s : 1.5 * s, have_distance};
}

// Which way each triangle's winding normal points: per component, inward when the field's gradient
// agrees with the winding by a clear majority (10% of the total weight, area-weighted: |cross| =
// 2 area), else the winding convention.
class Orientation {
public:
    Orientation(const TriMesh& mesh, const VoteField& f, std::vector<std::uint32_t> comp, std::size_t components)
        : comp_(std::move(comp)), inward_winding_(components, 0) {
        const std::size_t nt = mesh.triangles.size();
        std::vector<double> vote_t(nt), weight_t(nt);
        tbb::parallel_for(tbb::blocked_range<std::size_t>(0, nt, 1024), [&](const tbb::blocked_range<std::size_t>& r) {
            for (std::size_t t = r.begin(); t < r.end(); ++t) {
                const auto& tri = mesh.triangles[t];
                const Vec3d &a = mesh.vertices[tri[0]], &b = mesh.vertices[tri[1]], &c = mesh.vertices[tri[2]];
                const Vec3d n = cross(b - a, c - a);
                const Vec3d grad = field_gradient(f.sampler, (a + b + c) / 3.0, f.h);
                vote_t[t] = dot(n, grad);
                weight_t[t] = length(n) * length(grad);
            }
        });
        std::vector<double> vote(components, 0), weight(components, 0);
        for (std::size_t t = 0; t < nt; ++t) vote[comp_[t]] += vote_t[t], weight[comp_[t]] += weight_t[t];
        for (std::size_t c = 0; c < components; ++c) {
            inward_winding_[c] = vote[c] > 0.1 * weight[c] && vote[c] > 0;
            inverted_ += inward_winding_[c] ? 1 : 0;
        }
    }
    // Triangle t's winding normal turned inward.
    Vec3d inward(std::size_t t, const Vec3d& winding_normal) const {
        return inward_winding_[comp_[t]] ? winding_normal : -winding_normal;
    }
    std::size_t inverted() const { return inverted_; }

private:
    std::vector<std::uint32_t> comp_;
    std::vector<char> inward_winding_;
    std::size_t inverted_ = 0;
};

// Triangle t's candidates, nearest first: the closest points on it of the centres of the surface
// voxels (layer 0) its box meets. Depends on the mesh and the field only (run in parallel).
void candidates_of(const TriMesh& mesh, const ShellField& field, std::uint32_t t, std::vector<Candidate>& cands) {
    const GridSpec& g = field.grid;
    const double s = g.voxel_size;
    const auto& tri = mesh.triangles[t];
    const Vec3d &a = mesh.vertices[tri[0]], &b = mesh.vertices[tri[1]], &c = mesh.vertices[tri[2]];
    Aabb box;
    box.extend(a), box.extend(b), box.extend(c);
    int lo[3], hi[3];
    for (int ax = 0; ax < 3; ++ax) {
        // Voxel i's closed cube [o + i s, o + (i + 1) s] meets [min, max].
        const double u0 = (box.min[ax] - g.origin[ax]) / s, u1 = (box.max[ax] - g.origin[ax]) / s;
        // Clamped in doubles first: a triangle far outside the grid (a forced mismatch) must
        // not overflow the int conversion; it just gets an empty range.
        lo[ax] = static_cast<int>(std::clamp(std::ceil(u0) - 1, 0.0, static_cast<double>(g.dims[ax])));
        hi[ax] = static_cast<int>(std::clamp(std::floor(u1), -1.0, static_cast<double>(g.dims[ax] - 1)));
    }
    cands.clear();
    for (int k = lo[2]; k <= hi[2]; ++k)
        for (int j = lo[1]; j <= hi[1]; ++j)
            for (int i = lo[0]; i <= hi[0]; ++i) {
                const std::size_t v = g.index(i, j, k);
                if (field.layers[v] != 0) continue;
                const ClosestPoint cp = closest_point_on_triangle(g.center(i, j, k), a, b, c);
                cands.push_back({cp.distance2, v, cp});
            }
    std::sort(cands.begin(), cands.end(), [](const Candidate& x, const Candidate& y) {
        return x.distance2 != y.distance2 ? x.distance2 < y.distance2 : x.voxel < y.voxel;
    });
}

// The greedy rule, one candidate after the other in a fixed order: a candidate is kept when no
// point kept before it, on any triangle, is closer than alpha*s (and it has a normal). Keeps the
// points and normals per triangle, with their counts.
class GreedyShell {
public:
    GreedyShell(const GridSpec& g, const PointshellOptions& options, const VoteField& f, const PseudoNormals& pseudo,
                const Orientation& orientation, std::size_t nt)
        : points(nt), normals(nt), candidates(nt, 0), fallbacks(nt, 0), dropped(nt, 0), f_(f), pseudo_(pseudo),
          orientation_(orientation), spacing_(g, options.alpha * g.voxel_size),
          r2_(options.alpha * g.voxel_size * options.alpha * g.voxel_size), surface_mode_(options.normals == ShellNormals::surface) {}

    void keep_from(std::uint32_t t, const std::vector<Candidate>& cands) {
        candidates[t] = static_cast<std::uint32_t>(cands.size());
        auto& mine = points[t];
        auto& mine_n = normals[t];
        for (const Candidate& cd : cands) {
            const Vec3d& p = cd.cp.point;
            bool rejected = false;
            for (auto q = mine.rbegin(); q != mine.rend(); ++q)  // t's own points first: most rejections
                if (length2(p - *q) < r2_) {
                    rejected = true;
                    break;
                }
            if (rejected || !spacing_.clear_of(p)) continue;
            // Inward surface normal at the feature the point lies on (face normal as a fallback
            // when the pseudo-normal cancels, e.g. on an edge between two opposite faces).
            Vec3d n_in = pseudo_.at(t, cd.cp);
            if (length2(n_in) == 0) n_in = pseudo_.face(t);
            n_in = orientation_.inward(t, n_in);
            Vec3d n = n_in;
            if (!surface_mode_) {
                const Vec3d grad = field_gradient(f_.sampler, p, f_.h);
                const double len = length(grad);
                if (len >= 0.25 && (length2(n_in) == 0 || dot(grad, n_in) > 0)) {
                    n = grad / len;
                } else {
                    ++fallbacks[t];
                }
            }
            if (length2(n) == 0 || !is_finite(n)) {
                ++dropped[t];
                continue;
            }
            mine.push_back(p);
            mine_n.push_back(normalized(n));
            spacing_.add(p);
        }
    }

    std::vector<std::vector<Vec3d>> points, normals;
    std::vector<std::uint32_t> candidates, fallbacks, dropped;

private:
    const VoteField& f_;
    const PseudoNormals& pseudo_;
    const Orientation& orientation_;
    SpacingHash spacing_;
    double r2_;
    bool surface_mode_;
};

// The shell in triangle order, its counts, and the deviation of its normals from the inward plane
// normal of their source triangles.
void gather_shell(const GreedyShell& kept, const PseudoNormals& pseudo, const Orientation& orientation, PointshellResult& res) {
    std::vector<double> deviation;
    for (std::uint32_t t = 0; t < kept.points.size(); ++t) {
        res.candidates += kept.candidates[t];
        res.surface_fallbacks += kept.fallbacks[t];
        res.dropped_no_normal += kept.dropped[t];
        const Vec3d face_in = orientation.inward(t, pseudo.face(t));
        for (std::size_t i = 0; i < kept.points[t].size(); ++i) {
            res.shell.points.push_back(kept.points[t][i]);
            res.shell.normals.push_back(kept.normals[t][i]);
            res.shell.triangles.push_back(t);
            if (length2(face_in) > 0)
                deviation.push_back(std::acos(std::clamp(dot(face_in, kept.normals[t][i]), -1.0, 1.0)) * kRadToDeg);
        }
    }
    res.deviation_median_deg = percentile(deviation, 0.5);
    res.deviation_p95_deg = percentile(deviation, 0.95);
    res.deviation_max_deg = deviation.empty() ? 0 : *std::max_element(deviation.begin(), deviation.end());
}

}  // namespace

PointshellResult sample_pointshell(const TriMesh& mesh, ShellField field, const PointshellOptions& options,
                                   const Progress& progress) {
    if (!(options.alpha > 0) || !std::isfinite(options.alpha)) fail_usage("the point spacing alpha must be a positive number (in voxel sizes)");
    const GridSpec g = field.grid;
    if (field.layers.size() != g.count() || g.count() == 0) fail_input("", "the voxelmap's layers do not match its grid");
    if (!field.distance.empty() && field.distance.size() != g.count())
        fail_input("", "the distance field does not match its grid");
    if (std::find(field.layers.begin(), field.layers.end(), 0) == field.layers.end())
        fail_input("", "the voxelmap has no surface voxels (layer 0), so there is nothing to sample");

    PointshellResult res;
    const std::size_t nt = mesh.triangles.size();
    const VoteField f = vote_field(field);
    progress.report("neighbours", 0);

    const Csr around = vertex_triangles(mesh);
    const Csr nbr = triangle_neighbours(mesh, around);
    const std::vector<std::uint32_t> colour = colour_triangles(nbr, nt, res.colours);
    std::vector<std::uint32_t> comp = triangle_components(mesh, res.components);
    const PseudoNormals pseudo(mesh);
    const Orientation orientation(mesh, f, std::move(comp), res.components);
    res.inverted_components = orientation.inverted();

    // Triangles by colour.
    std::vector<std::vector<std::uint32_t>> by_colour(res.colours);
    for (std::uint32_t t = 0; t < nt; ++t) by_colour[colour[t]].push_back(t);

    // Order: colour by colour, triangles by index within a colour. Candidates are made in parallel
    // a block of triangles at a time (bounded memory), then kept or rejected in that order on one
    // thread: the output is the same for every thread count.
    GreedyShell kept(g, options, f, pseudo, orientation, nt);
    constexpr std::size_t kBlock = 4096;
    std::vector<std::vector<Candidate>> block_cands(std::min<std::size_t>(kBlock, nt));
    std::size_t done = 0;
    for (std::size_t col = 0; col < by_colour.size(); ++col) {
        const auto& list = by_colour[col];
        for (std::size_t first = 0; first < list.size(); first += kBlock) {
            const std::size_t last = std::min(list.size(), first + kBlock);
            tbb::parallel_for(tbb::blocked_range<std::size_t>(first, last, 64), [&](const tbb::blocked_range<std::size_t>& r) {
                for (std::size_t i = r.begin(); i < r.end(); ++i) candidates_of(mesh, field, list[i], block_cands[i - first]);
            });
            for (std::size_t i = first; i < last; ++i) kept.keep_from(list[i], block_cands[i - first]);
            done += last - first;
            progress.report("sample", static_cast<double>(done) / static_cast<double>(nt));
        }
    }

    gather_shell(kept, pseudo, orientation, res);
    const bool surface_mode = options.normals == ShellNormals::surface;
    res.normal_source = surface_mode ? "surface" : (f.have_distance ? "distance gradient" : "layer gradient");
    return res;
}

SpacingStats nearest_neighbour_spacing(std::span<const Vec3d> points) {
    SpacingStats st;
    if (points.size() < 2) return st;
    Cloud cloud{points};
    KdTree tree(3, cloud, nanoflann::KDTreeSingleIndexAdaptorParams(16));
    tree.buildIndex();
    std::vector<double> nn(points.size());
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, points.size(), 1024), [&](const tbb::blocked_range<std::size_t>& r) {
        for (std::size_t i = r.begin(); i < r.end(); ++i) {
            std::uint32_t idx[2];
            double d2[2];
            nanoflann::KNNResultSet<double, std::uint32_t> rs(2);
            rs.init(idx, d2);
            const double q[3] = {points[i].x, points[i].y, points[i].z};
            tree.findNeighbors(rs, q, nanoflann::SearchParams());
            nn[i] = std::sqrt(d2[1]);  // d2[0] is the point itself (or an equal duplicate)
        }
    });
    st.min = *std::min_element(nn.begin(), nn.end());
    st.max = *std::max_element(nn.begin(), nn.end());
    st.median = percentile(std::move(nn), 0.5);
    return st;
}

CoverageStats sampled_coverage(const TriMesh& mesh, std::span<const Vec3d> points, std::size_t samples,
                               std::uint64_t seed) {
    CoverageStats st;
    if (points.empty() || mesh.triangles.empty() || samples == 0) return st;
    std::vector<double> cumulative(mesh.triangles.size());
    double total = 0;
    for (std::size_t t = 0; t < mesh.triangles.size(); ++t) {
        const auto& tri = mesh.triangles[t];
        total += 0.5 * length(cross(mesh.vertices[tri[1]] - mesh.vertices[tri[0]], mesh.vertices[tri[2]] - mesh.vertices[tri[0]]));
        cumulative[t] = total;
    }
    if (!(total > 0)) return st;
    // Samples drawn sequentially (fixed seed, fixed order), queried in parallel.
    std::mt19937_64 rng(seed);
    auto unit = [&] { return static_cast<double>(rng() >> 11) * 0x1.0p-53; };
    std::vector<Vec3d> q(samples);
    for (Vec3d& p : q) {
        const double u = unit() * total;
        const std::size_t t = std::min<std::size_t>(
            static_cast<std::size_t>(std::upper_bound(cumulative.begin(), cumulative.end(), u) - cumulative.begin()),
            cumulative.size() - 1);
        const auto& tri = mesh.triangles[t];
        double r1 = std::sqrt(unit()), r2 = unit();
        p = mesh.vertices[tri[0]] * (1 - r1) + mesh.vertices[tri[1]] * (r1 * (1 - r2)) + mesh.vertices[tri[2]] * (r1 * r2);
    }
    Cloud cloud{points};
    KdTree tree(3, cloud, nanoflann::KDTreeSingleIndexAdaptorParams(16));
    tree.buildIndex();
    std::vector<double> d(samples);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, samples, 1024), [&](const tbb::blocked_range<std::size_t>& r) {
        for (std::size_t i = r.begin(); i < r.end(); ++i) {
            std::uint32_t idx;
            double d2;
            nanoflann::KNNResultSet<double, std::uint32_t> rs(1);
            rs.init(&idx, &d2);
            const double pq[3] = {q[i].x, q[i].y, q[i].z};
            tree.findNeighbors(rs, pq, nanoflann::SearchParams());
            d[i] = std::sqrt(d2);
        }
    });
    st.samples = samples;
    st.max = *std::max_element(d.begin(), d.end());
    st.p99 = percentile(std::move(d), 0.99);
    return st;
}

nlohmann::json shell_statistics_json(const PointshellResult& r, const SpacingStats& spacing,
                                     const CoverageStats& coverage, double alpha_s) {
    return {{"points", r.shell.points.size()},
            {"spacing", {{"min", spacing.min}, {"median", spacing.median}, {"max", spacing.max}, {"alpha_s", alpha_s}}},
            {"coverage", {{"samples", coverage.samples}, {"max", coverage.max}, {"p99", coverage.p99},
                          {"gap", coverage.max > 1.5 * alpha_s}}},
            {"normal_deviation_deg", {{"median", r.deviation_median_deg}, {"p95", r.deviation_p95_deg},
                                      {"max", r.deviation_max_deg}}}};
}

}  // namespace hp
