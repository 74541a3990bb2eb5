// The VPS collision shape: loading an object's haptic data, its mass properties and frame.
#include <algorithm>
#include <cmath>
#include <utility>

#include <btBulletCollisionCommon.h>

#include "bullet/data.hpp"
#include "bullet/vps.hpp"
#include "core/error.hpp"
#include "mesh/mesh.hpp"
#include "query/timing.hpp"

namespace hp::bullet {

namespace {

using Matrix = std::array<Vec3d, 3>;  // rows

Matrix outer(Vec3d a, Vec3d b) { return {a * b.x, a * b.y, a * b.z}; }  // columns are a * b_j: symmetric use only
void add(Matrix& m, const Matrix& n, double s) {
    for (int i = 0; i < 3; ++i) m[i] += n[i] * s;
}

// Mass properties from the volume V, first moment (V c) and second moment S = integral of x x^T
// about the mesh origin.
MassProperties finish(double volume, Vec3d first, Matrix second, const char* source) {
    MassProperties m;
    m.source = source;
    m.volume = volume;
    if (!(volume > 0)) return m;
    m.center_of_mass = first / volume;
    // Second moment about the centre of mass, then I = trace(C) Id - C.
    add(second, outer(m.center_of_mass, m.center_of_mass), -volume);
    const double trace = second[0].x + second[1].y + second[2].z;
    for (int i = 0; i < 3; ++i) {
        m.inertia[i] = -second[i];
        m.inertia[i][i] += trace;
    }
    // Cyclic Jacobi rotations: inertia = A^T diag(moments) A, rows of A the principal axes.
    Matrix a = m.inertia;
    Matrix v{Vec3d{1, 0, 0}, Vec3d{0, 1, 0}, Vec3d{0, 0, 1}};  // columns: eigenvectors
    for (int sweep = 0; sweep < 50; ++sweep) {
        const double off = a[0][1] * a[0][1] + a[0][2] * a[0][2] + a[1][2] * a[1][2];
        const double scale = a[0][0] * a[0][0] + a[1][1] * a[1][1] + a[2][2] * a[2][2];
        if (off <= 1e-30 * scale) break;
        for (int p = 0; p < 2; ++p)
            for (int q = p + 1; q < 3; ++q) {
                if (a[p][q] == 0) continue;
                const double theta = (a[q][q] - a[p][p]) / (2 * a[p][q]);
                const double t = (theta >= 0 ? 1 : -1) / (std::abs(theta) + std::sqrt(theta * theta + 1));
                const double c = 1 / std::sqrt(t * t + 1), s = t * c;
                for (int k = 0; k < 3; ++k) {  // A <- A J
                    const double akp = a[k][p], akq = a[k][q];
                    a[k][p] = c * akp - s * akq;
                    a[k][q] = s * akp + c * akq;
                }
                for (int k = 0; k < 3; ++k) {  // A <- J^T A
                    const double apk = a[p][k], aqk = a[q][k];
                    a[p][k] = c * apk - s * aqk;
                    a[q][k] = s * apk + c * aqk;
                }
                for (int k = 0; k < 3; ++k) {
                    const double vkp = v[k][p], vkq = v[k][q];
                    v[k][p] = c * vkp - s * vkq;
                    v[k][q] = s * vkp + c * vkq;
                }
            }
    }
    for (int i = 0; i < 3; ++i) {
        m.principal_axes[i] = {v[0][i], v[1][i], v[2][i]};
        m.principal_moments[i] = a[i][i];
    }
    if (dot(cross(m.principal_axes[0], m.principal_axes[1]), m.principal_axes[2]) < 0)
        m.principal_axes[2] = -m.principal_axes[2];
    return m;
}

// From the distance field's voxels: each voxel of occupancy clamp(1/2 + V/s, 0, 1).
MassProperties mass_properties_of_field(const DistanceSampler& field) {
    const GridSpec& g = field.grid();
    const double s = g.voxel_size, cell = s * s * s;
    double volume = 0;
    Vec3d first;
    Matrix second{};
    for (int k = 0; k < g.dims[2]; ++k)
        for (int j = 0; j < g.dims[1]; ++j)
            for (int i = 0; i < g.dims[0]; ++i) {
                const double f = std::clamp(0.5 + field.sample(i, j, k) / s, 0.0, 1.0);
                if (f == 0) continue;
                const Vec3d c = g.center(i, j, k);
                volume += f * cell;
                first += c * (f * cell);
                add(second, outer(c, c), f * cell);
                for (int a = 0; a < 3; ++a) second[a][a] += f * cell * s * s / 12;  // the voxel's own spread
            }
    return finish(volume, first, second, "voxels");
}

// The shape. Its local frame is the principal frame of VpsData.
class VpsShape final : public btConcaveShape {
public:
    explicit VpsShape(std::shared_ptr<const VpsData> data) : data_(std::move(data)) {
        m_shapeType = CUSTOM_CONCAVE_SHAPE_TYPE;
        setMargin(0);
    }
    const VpsData& data() const { return *data_; }

    void getAabb(const btTransform& t, btVector3& aabb_min, btVector3& aabb_max) const override {
        const Aabb& b = data_->local_bounds;
        btTransformAabb(btVector3(btScalar(b.min.x), btScalar(b.min.y), btScalar(b.min.z)),
                        btVector3(btScalar(b.max.x), btScalar(b.max.y), btScalar(b.max.z)), getMargin(), t,
                        aabb_min, aabb_max);
    }
    void calculateLocalInertia(btScalar mass, btVector3& inertia) const override {
        const MassProperties& m = data_->mass;
        const double density = m.volume > 0 ? mass / m.volume : 0;
        inertia.setValue(btScalar(m.principal_moments.x * density), btScalar(m.principal_moments.y * density),
                         btScalar(m.principal_moments.z * density));
    }
    // The haptic data hold no triangles: Bullet's triangle-based algorithms (the pairs VPS has no
    // algorithm for) see none and report no contact. docs/bullet.md lists the pairs.
    void processAllTriangles(btTriangleCallback*, const btVector3&, const btVector3&) const override {}
    // Scaling would invalidate the distance field's units: the shape keeps scale 1.
    void setLocalScaling(const btVector3&) override {}
    const btVector3& getLocalScaling() const override { return scaling_; }
    const char* getName() const override { return "VPS"; }

private:
    std::shared_ptr<const VpsData> data_;
    btVector3 scaling_{1, 1, 1};
};

}  // namespace

MassProperties mass_properties_of_mesh(std::span<const Vec3d> vertices,
                                       std::span<const std::array<std::uint32_t, 3>> triangles) {
    // Each triangle (a, b, c) with the origin spans a tetrahedron of signed volume
    // a . (b x c) / 6, centroid (a + b + c) / 4 and second moment V/20 (a a^T + b b^T + c c^T + s s^T),
    // s = a + b + c; summed over a closed surface they give the solid's integrals.
    double volume = 0;
    Vec3d first;
    Matrix second{};
    for (const auto& t : triangles) {
        const Vec3d a = vertices[t[0]], b = vertices[t[1]], c = vertices[t[2]];
        const double v = dot(a, cross(b, c)) / 6;
        const Vec3d s = a + b + c;
        volume += v;
        first += s * (v / 4);
        Matrix m = outer(a, a);
        add(m, outer(b, b), 1);
        add(m, outer(c, c), 1);
        add(m, outer(s, s), 1);
        add(second, m, v / 20);
    }
    if (volume < 0) {  // wound inward: every integral has the opposite sign
        volume = -volume;
        first = -first;
        for (Vec3d& row : second) row = -row;
    }
    return finish(volume, first, second, "mesh");
}

namespace {

// Per cluster, the disc bound of all points below it (ClusterDisc, data.hpp); clusters in reverse
// breadth-first order, so a cluster's children are done before it.
std::vector<ClusterDisc> cluster_discs(const MovingObjectData& m) {
    const auto& clusters = m.tree.clusters;
    std::vector<ClusterDisc> discs(clusters.size());
    std::vector<std::vector<std::uint32_t>> below(clusters.size());
    for (std::size_t id = clusters.size(); id-- > 0;) {
        const TreeCluster& c = clusters[id];
        std::vector<std::uint32_t>& pts = below[id];
        if (c.children.empty()) {
            pts = c.points;
        } else {
            for (std::uint32_t child : c.children) {
                pts.insert(pts.end(), below[child].begin(), below[child].end());
                std::vector<std::uint32_t>().swap(below[child]);
            }
        }
        ClusterDisc& d = discs[id];
        Vec3d sum;
        for (std::uint32_t i : pts) sum += m.normals[i];
        if (length(sum) > 1e-9 * static_cast<double>(pts.size())) d.axis = sum / length(sum);
        d.lo = INFINITY, d.hi = -INFINITY;
        for (std::uint32_t i : pts) {
            const Vec3d v = m.points[i] - c.sphere.center;
            const double a = dot(v, d.axis);
            d.lo = std::min(d.lo, a), d.hi = std::max(d.hi, a);
            d.radial = std::max(d.radial, length(v - d.axis * a));
        }
        if (pts.empty()) d.lo = d.hi = 0;
    }
    return discs;
}

// The box of the cells with a sample above 0 at a corner (VpsData::inside_box): where the
// trilinear V can be positive (elsewhere it interpolates samples <= 0). Sets `bounded` false when
// such a cell lies on the grid's border (or an axis has one voxel).
Aabb inside_box_of_field(const DistanceSampler& field, bool& bounded) {
    const GridSpec& g = field.grid();
    std::array<int, 3> lo{g.dims[0], g.dims[1], g.dims[2]}, hi{-1, -1, -1};
    for (int k = 0; k < g.dims[2]; ++k)
        for (int j = 0; j < g.dims[1]; ++j)
            for (int i = 0; i < g.dims[0]; ++i)
                if (field.sample(i, j, k) > 0) {
                    const int at[3] = {i, j, k};
                    for (int a = 0; a < 3; ++a) lo[a] = std::min(lo[a], at[a]), hi[a] = std::max(hi[a], at[a]);
                }
    bounded = true;
    if (hi[0] < 0) return {};  // no sample above 0: empty
    // A sample above 0 at voxel i makes cells i - 1 and i (between centres i - 1..i and i..i + 1)
    // positive; on the border the field's extension beyond the grid reads those cells.
    for (int a = 0; a < 3; ++a)
        if (g.dims[a] < 3 || lo[a] < 2 || hi[a] > g.dims[a] - 3) bounded = false;
    return {g.center(lo[0] - 1, lo[1] - 1, lo[2] - 1), g.center(hi[0] + 1, hi[1] + 1, hi[2] + 1)};
}

}  // namespace

std::shared_ptr<const VpsData> load_vps_data(const VpsFiles& files) {
    auto data = std::make_shared<VpsData>();
    data->field = load_static_field(files.field);
    data->moving = load_moving_object(files.tree);
    if (!tree_covers_points(data->moving.tree, data->moving.points))
        fail_input(files.tree.string(), "the tree's spheres do not hold all its points; rebuild it with haptic-spheretree");

    if (!files.mesh.empty()) {
        // The mesh in the tree's units (as haptic-cfm reads it), and only the mesh the tree was made from.
        nlohmann::json params = data->moving.metadata.value("parameters", nlohmann::json::object());
        if (params.is_string()) params = nlohmann::json::parse(params.get<std::string>(), nullptr, false);
        MeshLoadOptions options;
        if (params.is_object() && params.contains("units") && params["units"].is_string())
            options.units = params["units"].get<std::string>();
        if (params.is_object() && params.contains("scale") && params["scale"].is_number())
            options.scale = params["scale"].get<double>();
        // A part of an assembly file: the geometry the tree was made from, in its own frame.
        if (params.is_object() && params.contains("part") && params["part"].is_string())
            options.part = params["part"].get<std::string>();
        const LoadedMesh mesh = load_mesh(files.mesh, options);
        check_source_hash(files.mesh.string(), mesh.source_hash, files.tree.string(), "tree",
                          data->moving.metadata.value("source_hash", ""), false, "another mesh");
        if (mesh.diagnostics.watertight) data->mass = mass_properties_of_mesh(mesh.mesh.vertices, mesh.mesh.triangles);
    }
    if (data->mass.source.empty() || !(data->mass.volume > 0)) data->mass = mass_properties_of_field(data->field.field);
    if (!(data->mass.volume > 0))
        fail_input(files.field.string(), "the distance field holds no inside (no V > 0): not a solid for Bullet");

    Rigid& frame = data->local_from_mesh;
    frame.r = data->mass.principal_axes;
    frame.t = -frame.rotate(data->mass.center_of_mass);
    Aabb box;
    for (const Vec3d& p : data->moving.points) box.extend(frame(p));
    const double s = data->field.field.grid().voxel_size;
    box.min -= Vec3d{s, s, s};
    box.max += Vec3d{s, s, s};
    data->local_bounds = box;
    for (const Vec3d& p : data->moving.points) data->point_box.extend(p);
    data->inside_box = inside_box_of_field(data->field.field, data->inside_bounded);
    data->discs = cluster_discs(data->moving);
    const auto& clusters = data->moving.tree.clusters;
    data->visit_rank.assign(clusters.size(), 0);
    if (!clusters.empty()) {
        std::vector<std::uint32_t> order(1, 0);
        for (std::size_t head = 0; head < order.size(); ++head) {
            data->visit_rank[order[head]] = static_cast<std::uint32_t>(head);
            const auto& children = clusters[order[head]].children;
            order.insert(order.end(), children.begin(), children.end());
        }
    }
    if (!clusters.empty())
        data->full_query = std::make_shared<const VpsQuery>(data->field.field, data->moving.view(), QueryOptions{.mode = QueryMode::full});
    return data;
}

const MassProperties& mass_properties(const VpsData& data) { return data.mass; }
std::size_t point_count(const VpsData& data) { return data.moving.points.size(); }
double voxel_size(const VpsData& data) { return data.field.field.grid().voxel_size; }

std::unique_ptr<btCollisionShape> make_vps_shape(std::shared_ptr<const VpsData> data) {
    if (!data) fail_usage("make_vps_shape: no VPS data (load them with load_vps_data)");
    return std::make_unique<VpsShape>(std::move(data));
}

const VpsData* vps_data(const btCollisionShape& shape) {
    const auto* vps = dynamic_cast<const VpsShape*>(&shape);
    return vps ? &vps->data() : nullptr;
}

btTransform local_from_mesh(const VpsData& data) {
    const Rigid& f = data.local_from_mesh;
    btMatrix3x3 basis(btScalar(f.r[0].x), btScalar(f.r[0].y), btScalar(f.r[0].z), btScalar(f.r[1].x),
                      btScalar(f.r[1].y), btScalar(f.r[1].z), btScalar(f.r[2].x), btScalar(f.r[2].y),
                      btScalar(f.r[2].z));
    return btTransform(basis, btVector3(btScalar(f.t.x), btScalar(f.t.y), btScalar(f.t.z)));
}

}  // namespace hp::bullet
