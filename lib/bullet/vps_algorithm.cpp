// The VPS collision algorithms (VPS-VPS, VPS-plane, VPS-box) and their registration.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include <btBulletCollisionCommon.h>

#include "bullet/data.hpp"
#include "bullet/vps.hpp"
#include "bullet/vps_contacts.hpp"
#include "bullet/vps_front.hpp"
#include "contact/query.hpp"
#include "core/error.hpp"

namespace hp::bullet {

namespace {

using detail::analytic_contacts;
using detail::box_depth;
using detail::boxes_apart;
using detail::BoxSide;
using detail::Chosen;
using detail::FieldSide;
using detail::Front;
using detail::Limits;
using detail::MeshPlane;
using detail::PlaneSide;
using detail::quaternion_of;
using detail::select_manifold;
using detail::WorldContact;

Rigid to_rigid(const btTransform& t) {
    Rigid r;
    const btMatrix3x3& b = t.getBasis();
    for (int i = 0; i < 3; ++i) r.r[i] = {double(b[i].x()), double(b[i].y()), double(b[i].z())};
    r.t = {double(t.getOrigin().x()), double(t.getOrigin().y()), double(t.getOrigin().z())};
    return r;
}
btVector3 to_bt(Vec3d v) { return btVector3(btScalar(v.x), btScalar(v.y), btScalar(v.z)); }

// The contacts of the front's leaves in the other object's field as the pair query gives them for
// the same pose: its placed points and turned normals (FieldSide), V > 0, by point index, each
// point once; in world coordinates. `deepest[k]`: the largest V of leaves[k]'s points. `hits`:
// scratch.
void field_contacts(const VpsData& shell, const std::vector<std::uint32_t>& leaves, const FieldSide& side,
                    const Rigid& other_world, std::vector<Contact>& hits, std::vector<double>& deepest,
                    std::vector<WorldContact>& out) {
    hits.clear();
    deepest.assign(leaves.size(), -std::numeric_limits<double>::infinity());
    const auto& clusters = shell.moving.tree.clusters;
    const DistanceSampler& field = *side.field;
    // The points' cells are asked for a batch ahead (probe_value), as the pair query does: their
    // reads then overlap instead of waiting one after another. value(cell) is value(p), bit for bit.
    struct Probe {
        std::uint32_t point, leaf;
        Vec3d p;
        DistanceSampler::CellRef cell;
    };
    std::array<Probe, 16> batch;
    std::size_t n = 0;
    const auto check = [&] {
        for (std::size_t k = 0; k < n; ++k) {
            const double v = field.value(batch[k].cell);
            detail::raise_to(deepest[batch[k].leaf], v);
            if (v > 0) hits.push_back({batch[k].point, batch[k].p, side.from_mesh.rotate(shell.moving.normals[batch[k].point]), v});
        }
        n = 0;
    };
    for (std::uint32_t leaf = 0; leaf < leaves.size(); ++leaf)
        for (std::uint32_t i : clusters[leaves[leaf]].points) {
            Probe& b = batch[n];
            b.point = i;
            b.leaf = leaf;
            b.p = side.from_mesh(shell.moving.points[i]);
            field.probe_value(b.p, b.cell);
            if (++n == batch.size()) check();
        }
    check();
    std::sort(hits.begin(), hits.end(), [](const Contact& a, const Contact& b) { return a.point < b.point; });
    for (std::size_t k = 0; k < hits.size(); ++k) {
        if (k > 0 && hits[k].point == hits[k - 1].point) continue;
        out.push_back({other_world(hits[k].position), other_world.rotate(hits[k].normal), hits[k].value, -1});
    }
}

enum class PairKind { vps, plane, box };

// A coherent VPS pair whose front near the other object was overrun (Front::overrun) runs the pair
// query for this many calls, then makes its front again.
constexpr int kQueryCalls = 16;

class VpsAlgorithm final : public btCollisionAlgorithm {
public:
    VpsAlgorithm(const btCollisionAlgorithmConstructionInfo& ci, const btCollisionObjectWrapper* body0,
                 const btCollisionObjectWrapper* body1, PairKind kind, bool swapped, const AlgorithmOptions& options)
        : btCollisionAlgorithm(ci), manifold_(ci.m_manifold), state_(std::make_unique<State>()) {
        state_->kind = kind;
        state_->options = options;
        // swapped: the VPS shape is body1 (plane or box first).
        if (kind == PairKind::vps) {
            const VpsData* a = vps_data(*body0->getCollisionShape());
            const VpsData* b = vps_data(*body1->getCollisionShape());
            // The object with fewer points is the pointshell; the first one on a tie.
            state_->shell_is_body0 = a->moving.points.size() <= b->moving.points.size();
            const VpsData* shell = state_->shell_is_body0 ? a : b;
            const VpsData* other = state_->shell_is_body0 ? b : a;
            QueryOptions q{.mode = QueryMode::full};
            if (options.traversal == Traversal::segmented)
                q = {.mode = QueryMode::segmented, .level = std::min(options.level, shell->moving.tree.levels)};
            if (options.traversal == Traversal::time_critical)
                q = {.mode = QueryMode::time_critical, .budget_us = options.budget_us, .budget_tests = options.budget_tests};
            // The full traversal shares the pointshell's packed tree (nothing packed per pair), and
            // the coherent one makes its query only once it needs it (most pairs never do).
            if (options.traversal != Traversal::full || !shell->full_query)
                state_->query = std::make_unique<VpsQuery>(other->field.field, shell->moving.view(), q);
            else if (!options.coherent)
                state_->query = std::make_unique<VpsQuery>(other->field.field, *shell->full_query);
        } else {
            state_->shell_is_body0 = !swapped;
        }
        if (options.traversal == Traversal::segmented) {
            // The segments: the clusters of the level (the tree's deepest when it has fewer levels).
            const VpsData* shell = vps_data(*(state_->shell_is_body0 ? body0 : body1)->getCollisionShape());
            const int level = std::min(options.level, shell->moving.tree.levels);
            const auto& clusters = shell->moving.tree.clusters;
            state_->segment_of.assign(clusters.size(), -1);
            for (std::uint32_t id = 0; id < clusters.size(); ++id)
                if (clusters[id].level == level) {
                    state_->segment_of[id] = static_cast<std::int32_t>(state_->segments.size());
                    state_->segments.push_back(id);
                }
            state_->segment_manifolds.assign(state_->segments.size(), nullptr);
        }
        if (!manifold_) {
            manifold_ = m_dispatcher->getNewManifold(body0->getCollisionObject(), body1->getCollisionObject());
            own_manifold_ = true;
        }
    }
    ~VpsAlgorithm() override {
        if (own_manifold_ && manifold_) m_dispatcher->releaseManifold(manifold_);
        for (btPersistentManifold* m : state_->segment_manifolds)
            if (m) m_dispatcher->releaseManifold(m);
    }

    void processCollision(const btCollisionObjectWrapper* body0, const btCollisionObjectWrapper* body1,
                          const btDispatcherInfo&, btManifoldResult* result) override {
        if (!manifold_) return;
        result->setPersistentManifold(manifold_);
        manifold_->clearManifold();
        for (btPersistentManifold* m : state_->segment_manifolds)
            if (m) m->clearManifold();
        const AlgorithmOptions& options = state_->options;
        const bool segmented = options.traversal == Traversal::segmented;
        Limits limits;
        const Limits* limit = nullptr;
        if (options.traversal == Traversal::time_critical) {
            limits.tests = options.budget_tests;
            limits.deadline = std::chrono::steady_clock::now() +
                              std::chrono::nanoseconds(static_cast<long long>(options.budget_us * 1000));
            limit = &limits;
        }
        const btCollisionObjectWrapper* shell_wrap = state_->shell_is_body0 ? body0 : body1;
        const btCollisionObjectWrapper* other_wrap = state_->shell_is_body0 ? body1 : body0;
        const VpsData& shell = *vps_data(*shell_wrap->getCollisionShape());
        const Rigid shell_world = to_rigid(shell_wrap->getWorldTransform()) * shell.local_from_mesh;
        std::vector<WorldContact>& contacts = state_->contacts;
        contacts.clear();

        if (state_->kind == PairKind::vps) {
            const VpsData& other = *vps_data(*other_wrap->getCollisionShape());
            const Rigid other_world = to_rigid(other_wrap->getWorldTransform()) * other.local_from_mesh;
            const Rigid pose = other_world.inverse() * shell_world;  // shell mesh -> other mesh
            const Pose query_pose{pose.t, quaternion_of(pose.r)};
            // The points as the pair query places them.
            const Rigid placed{rotation_rows(query_pose.quaternion), query_pose.position};
            if (options.traversal == Traversal::full && boxes_apart(shell, other, placed)) {
                // No point can lie inside: no contact, and nothing read (the front, if any, is
                // left as it is: its bounds compare poses, not steps).
                ++state_->boxes_apart;
            } else if (options.traversal == Traversal::full && options.coherent && state_->query_calls == 0) {
                // The front.
                FieldSide side{{placed}};
                side.field = &other.field.field;
                side.voxel = other.field.field.grid().voxel_size;
                side.margin = 1e-9 * side.voxel;
                Front<FieldSide>& front = state_->field_front;
                const std::vector<std::uint32_t>& leaves = front.leaves_at(shell, side, state_->queue);
                field_contacts(shell, leaves, side, other_world, state_->hits, state_->deepest, contacts);
                front.prune_tested_leaves(shell, side, state_->deepest);
                // A front near the other object overrun: the pair moves more than its clearances
                // allow (a pile still settling), where the pair query's own descent is faster.
                if (front.overrun && !leaves.empty()) state_->query_calls = kQueryCalls;
            } else {
                if (!state_->query) state_->query = std::make_unique<VpsQuery>(other.field.field, *shell.full_query);
                const QueryResult& r = (*state_->query)(query_pose);
                for (const Contact& c : r.contacts)
                    contacts.push_back({other_world(c.position), other_world.rotate(c.normal), c.value, c.segment});
                // Back to a front made anew after these calls.
                if (state_->query_calls > 0 && --state_->query_calls == 0) state_->field_front.shell = nullptr;
            }
        } else if (state_->kind == PairKind::plane) {
            const auto* plane = static_cast<const btStaticPlaneShape*>(other_wrap->getCollisionShape());
            const Rigid plane_world = to_rigid(other_wrap->getWorldTransform());
            const btVector3& n = plane->getPlaneNormal();
            const Vec3d normal = plane_world.rotate({double(n.x()), double(n.y()), double(n.z())});
            // World plane: normal . x = constant + normal . t; in the pointshell's mesh frame
            // (x = R q + t): (R^T normal) . q = offset - normal . t.
            const double offset = double(plane->getPlaneConstant()) + dot(normal, plane_world.t);
            const Vec3d mesh_normal = shell_world.inverse().rotate(normal);
            const double mesh_offset = offset - dot(normal, shell_world.t);
            const MeshPlane mesh_plane{mesh_normal, mesh_offset};
            const auto depth_of = [&](Vec3d q) { return mesh_plane.depth(q); };
            const auto normal_of = [&](Vec3d) { return normal; };
            if (options.traversal == Traversal::full && options.coherent) {
                coherent_contacts(state_->plane_front, PlaneSide{mesh_plane}, shell, shell_world, depth_of, normal_of);
            } else {
                // A cluster whose points all lie above the plane by its sphere or its disc.
                traverse(shell.moving, shell_world, depth_of, normal_of,
                         [&](std::uint32_t id) {
                             const double nc = dot(mesh_normal, shell.moving.tree.clusters[id].sphere.center);
                             return disc_clearance(shell, id, mesh_plane, nc) > 0;
                         },
                         limit);
            }
        } else {
            const auto* box = static_cast<const btBoxShape*>(other_wrap->getCollisionShape());
            const Rigid box_world = to_rigid(other_wrap->getWorldTransform());
            const Rigid box_local = box_world.inverse();
            const btVector3 he = box->getHalfExtentsWithMargin();
            const Vec3d h{double(he.x()), double(he.y()), double(he.z())};
            const BoxSide side{{box_local * shell_world}, h};
            const auto depth_of = [&](Vec3d q) { return side.depth(q); };
            const auto normal_of = [&](Vec3d p) {
                Vec3d n;
                box_depth(box_local(p), h, &n);
                return box_world.rotate(n);
            };
            if (options.traversal == Traversal::full && options.coherent) {
                coherent_contacts(state_->box_front, side, shell, shell_world, depth_of, normal_of);
            } else {
                // A cluster whose points all lie outside the box by its sphere or its disc.
                traverse(
                    shell.moving, shell_world, depth_of, normal_of,
                    [&](std::uint32_t id) {
                        return side.disc(shell, id, side.from_mesh(shell.moving.tree.clusters[id].sphere.center)) > 0;
                    },
                    limit);
            }
        }

        // Bullet's addContactPoint wants the normal on body1 (from body1 towards body0), a point on
        // body1 and a negative depth.
        auto add = [&](const WorldContact& c) {
            if (state_->shell_is_body0)
                result->addContactPoint(to_bt(c.normal), to_bt(c.point + c.normal * c.depth), btScalar(-c.depth));
            else
                result->addContactPoint(to_bt(-c.normal), to_bt(c.point), btScalar(-c.depth));
        };
        if (!segmented) {
            // Deepest first, then the points spanning the largest area.
            for (std::size_t i : select_manifold(contacts)) add(contacts[i]);
            return;
        }
        // One manifold per segment with its deepest contact.
        for (const WorldContact& c : contacts) {
            const std::int32_t k = c.segment < 0 ? -1 : state_->segment_of[static_cast<std::size_t>(c.segment)];
            if (k < 0) continue;
            btPersistentManifold*& m = state_->segment_manifolds[static_cast<std::size_t>(k)];
            if (!m) m = m_dispatcher->getNewManifold(body0->getCollisionObject(), body1->getCollisionObject());
            result->setPersistentManifold(m);
            add(c);
        }
        result->setPersistentManifold(manifold_);
    }

    btScalar calculateTimeOfImpact(btCollisionObject*, btCollisionObject*, const btDispatcherInfo&,
                                   btManifoldResult*) override {
        return 1;  // no continuous collision: Bullet's convention for "no impact before the step's end"
    }
    AlgorithmTrace trace() const {
        AlgorithmTrace t;
        t.fronts_made = state_->plane_front.made_count + state_->box_front.made_count + state_->field_front.made_count;
        t.fronts_kept = state_->plane_front.kept_count + state_->box_front.kept_count + state_->field_front.kept_count;
        t.entries_tested = state_->plane_front.tested_count + state_->box_front.tested_count + state_->field_front.tested_count;
        t.boxes_apart = state_->boxes_apart;
        for (const WorldContact& c : state_->contacts) t.contacts.push_back({c.point.x, c.point.y, c.point.z, c.depth});
        return t;
    }
    void getAllContactManifolds(btManifoldArray& manifolds) override {
        if (manifold_ && own_manifold_) manifolds.push_back(manifold_);
        for (btPersistentManifold* m : state_->segment_manifolds)
            if (m) manifolds.push_back(m);
    }

private:
    // The coherent full traversal against a plane or a box: the front's leaves' points tested (their
    // contacts in leaf order), then the leaves none of whose points is inside pruned by them.
    template <class Side, class Depth, class Normal>
    void coherent_contacts(Front<Side>& front, const Side& side, const VpsData& shell, const Rigid& shell_world, Depth depth_of,
                           Normal normal_of) {
        const std::vector<std::uint32_t>& leaves = front.leaves_at(shell, side, state_->queue);
        state_->deepest.resize(leaves.size());
        for (std::size_t k = 0; k < leaves.size(); ++k)
            state_->deepest[k] = detail::leaf_contacts(shell.moving, shell.moving.tree.clusters[leaves[k]], shell_world, depth_of,
                                                       normal_of, -1, state_->contacts);
        front.prune_tested_leaves(shell, side, state_->deepest);
    }

    // The analytic traversal in the options' mode: from the root (full, time-critical), or from
    // every segment's cluster keeping its deepest contact (segmented).
    template <class Depth, class Normal, class Clear>
    void traverse(const MovingObjectData& m, const Rigid& world_from_mesh, Depth depth_of, Normal normal_of,
                  Clear clear, const Limits* limit) {
        std::vector<WorldContact>& out = state_->contacts;
        if (state_->options.traversal != Traversal::segmented) {
            analytic_contacts(m, world_from_mesh, depth_of, normal_of, clear, 0, -1, limit, state_->queue, out);
            return;
        }
        for (std::uint32_t id : state_->segments) {
            const std::size_t before = out.size();
            analytic_contacts(m, world_from_mesh, depth_of, normal_of, clear, id, static_cast<std::int32_t>(id), nullptr,
                              state_->queue, out);
            if (out.size() <= before) continue;
            const auto deepest = std::max_element(out.begin() + static_cast<std::ptrdiff_t>(before), out.end(),
                                                  [](const WorldContact& a, const WorldContact& b) { return a.depth < b.depth; });
            const WorldContact keep = *deepest;
            out.resize(before);
            out.push_back(keep);
        }
    }

    // Kept out of the object itself: the dispatcher's pool holds algorithms of Bullet's own size.
    struct State {
        PairKind kind = PairKind::vps;
        AlgorithmOptions options;
        std::vector<std::uint32_t> segments;              // segmented: the level's cluster ids
        std::vector<std::int32_t> segment_of;             // cluster id -> index in segments, or -1
        std::vector<btPersistentManifold*> segment_manifolds;  // one per segment, made at its first contact
        bool shell_is_body0 = true;
        std::unique_ptr<VpsQuery> query;  // VPS-VPS: the pointshell against the other's field
        int query_calls = 0;              // VPS-VPS, coherent full: calls left that run `query` instead of the front
        std::size_t boxes_apart = 0;      // VPS-VPS, full: calls the box pre-test answered (AlgorithmTrace)
        std::vector<WorldContact> contacts;
        std::vector<Contact> hits;  // VPS-VPS, coherent full: scratch of field_contacts
        std::vector<double> deepest;  // coherent full: the largest depth of each leaf's points (scratch)
        std::vector<std::uint32_t> queue;
        Front<PlaneSide> plane_front;  // full traversal against a plane, coherent
        Front<BoxSide> box_front;      // full traversal against a box, coherent
        Front<FieldSide> field_front;  // full traversal against another VPS object's field, coherent
    };
    btPersistentManifold* manifold_ = nullptr;
    bool own_manifold_ = false;
    std::unique_ptr<State> state_;
};

struct CreateFunc final : btCollisionAlgorithmCreateFunc {
    PairKind kind;
    const AlgorithmOptions* options;
    CreateFunc(PairKind k, bool swapped, const AlgorithmOptions* o) : kind(k), options(o) { m_swapped = swapped; }
    btCollisionAlgorithm* CreateCollisionAlgorithm(btCollisionAlgorithmConstructionInfo& ci,
                                                   const btCollisionObjectWrapper* body0,
                                                   const btCollisionObjectWrapper* body1) override {
        // Another custom concave shape with the VPS shape's type: no algorithm (no contacts).
        const btCollisionObjectWrapper* vps0 = m_swapped ? body1 : body0;
        const btCollisionObjectWrapper* vps1 = m_swapped ? body0 : body1;
        if (!vps_data(*vps0->getCollisionShape())) return nullptr;
        if (kind == PairKind::vps && !vps_data(*vps1->getCollisionShape())) return nullptr;
        void* memory = ci.m_dispatcher1->allocateCollisionAlgorithm(sizeof(VpsAlgorithm));
        return new (memory) VpsAlgorithm(ci, body0, body1, kind, m_swapped, *options);
    }
};

}  // namespace

struct VpsAlgorithms::Funcs {
    AlgorithmOptions options;
    CreateFunc vps_vps{PairKind::vps, false, &options};
    CreateFunc vps_plane{PairKind::plane, false, &options}, plane_vps{PairKind::plane, true, &options};
    CreateFunc vps_box{PairKind::box, false, &options}, box_vps{PairKind::box, true, &options};
};

VpsAlgorithms::VpsAlgorithms(const AlgorithmOptions& options) : funcs_(std::make_unique<Funcs>()) {
    if (options.traversal == Traversal::segmented && options.level < 1)
        fail_usage("VPS algorithms: the segmentation level must be at least 1 (the root)");
    if (options.traversal == Traversal::time_critical && !(options.budget_us > 0))
        fail_usage("VPS algorithms: the time-critical budget must be a positive number of microseconds");
    funcs_->options = options;
}

VpsAlgorithms::~VpsAlgorithms() = default;

const AlgorithmOptions& VpsAlgorithms::options() const { return funcs_->options; }

void VpsAlgorithms::register_on(btCollisionDispatcher& dispatcher) const {
    const int vps = CUSTOM_CONCAVE_SHAPE_TYPE;
    Funcs& f = *funcs_;
    const struct {
        int a, b;
        CreateFunc* f;
    } table[] = {{vps, vps, &f.vps_vps},
                 {vps, STATIC_PLANE_PROXYTYPE, &f.vps_plane},
                 {STATIC_PLANE_PROXYTYPE, vps, &f.plane_vps},
                 {vps, BOX_SHAPE_PROXYTYPE, &f.vps_box},
                 {BOX_SHAPE_PROXYTYPE, vps, &f.box_vps}};
    for (const auto& e : table) {
        dispatcher.registerCollisionCreateFunc(e.a, e.b, e.f);
        dispatcher.registerClosestPointsCreateFunc(e.a, e.b, e.f);
    }
}

void register_vps_algorithms(btCollisionDispatcher& dispatcher) {
    static const VpsAlgorithms full;  // lives as long as the program, so every dispatcher may use it
    full.register_on(dispatcher);
}

bool is_vps_algorithm(const btCollisionAlgorithm* algorithm) {
    return dynamic_cast<const VpsAlgorithm*>(algorithm) != nullptr;
}

AlgorithmTrace trace_of(const btCollisionAlgorithm* algorithm) {
    const auto* a = dynamic_cast<const VpsAlgorithm*>(algorithm);
    return a ? a->trace() : AlgorithmTrace{};
}

}  // namespace hp::bullet
