// bench_scene_peers: the scene benchmark's tool and poses (bench/scene.sh, bench_scene) against the
// same scene in the two peers a user would pick instead, frame by frame in one run beside ours.
//   bench_scene_peers SCENE.json TOOL.hps TOOL_MESH [--count 2000] [--seed 1] [--depth 5]
//                     [--peer-poses 0] [--bullet-margin M] [--source FILE] [--list] [--budget-tests N]
//
//  vps     ours: hp::scene::SceneQuery (full mode, one thread) on the scene's prepared fields and
//          the tool's point-sphere tree; the poses are bench_scene's (scene_scenario with the same
//          count, seed and depth).
//  vps-tc  with --budget-tests N: ours in time-critical mode, the paper's haptic query (Sagardia et
//          al.), each frame's N sphere tests shared by its pairs (deterministic, no clock budget):
//          bounded work and an approximate contact set, not the same product as the others'; its
//          row gives the peers' times over its own.
//  fcl     FCL 0.7: a BVHModel<OBBRSS> per geometry, a CollisionObject per static part at its
//          placement, a DynamicAABBTreeCollisionManager over them; per frame the tool's object
//          (a BVHModel<OBBRSS> of TOOL_MESH) is placed and manager.collide runs fcl::collide on
//          every pair its tree reports, contacts requested with a cap no pair reaches.
//  bullet  Bullet: a btBvhTriangleMeshShape per geometry, a static btCollisionObject per part in a
//          btCollisionWorld (btDbvtBroadphase), the tool a btGImpactMeshShape of TOOL_MESH with
//          GImpact's algorithm registered; per frame performDiscreteCollisionDetection, whose
//          near callback is the dispatcher's own one except that every contact point the
//          algorithm adds is counted (not the persistent manifold's 4 per pair). Margins
//          --bullet-margin (default half the scene's voxel size: with 0, GJK/EPA on two crossing
//          triangles misses many of the crossings FCL finds); a point is a contact when its
//          distance less the two margins is <= 0 (within one voxel with the default).
// The geometries' triangles come from the scene's source file through the project's importer
// (read_assembly + prepare_geometry, as haptic-pipeline --assembly prepared them); TOOL_MESH is
// the mesh the tool's tree was made from (the same frame). All three run on every pose, or with
// --peer-poses N on every k-th (k the largest <= count / N that shares no factor with the number
// of geometries, so that every geometry is targeted alike); per frame the three run in turn, the
// first one rotating.
// Per frame: wall time, thread CPU time, the parts touched (a contact) and the contacts. Parts
// touched are compared with ours frame by frame; a part touched by one side only is listed with
// its depth there (ours: the pair's deepest V; the peers: their deepest reported penetration).
// One JSON line per contender on stdout (make bench rows), a summary on stderr.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include <btBulletCollisionCommon.h>
#include <BulletCollision/Gimpact/btGImpactCollisionAlgorithm.h>
#include <BulletCollision/Gimpact/btGImpactShape.h>

#include <fcl/broadphase/broadphase_dynamic_AABB_tree.h>
#include <fcl/narrowphase/collision.h>
#include <fcl/narrowphase/collision_object.h>

#include <nlohmann/json.hpp>

#include "common/tool.hpp"
#include "core/error.hpp"
#include "core/cpu.hpp"
#include "core/memory.hpp"
#include "mesh/assembly.hpp"
#include "peer_meshes.hpp"
#include "query/timing.hpp"
#include "scene/scene_check.hpp"
#include "scene/scene_query.hpp"

namespace {

// What one frame of any contender found: the parts touched with the deepest penetration reported
// on each, and the contacts.
struct Hits {
    std::map<std::uint32_t, double> deepest;
    std::size_t contacts = 0;

    void add(std::uint32_t part, double depth) {
        double& d = deepest[part];
        d = std::max(d, depth);
        ++contacts;
    }
};

// ---- FCL ----

using hp::bench::BulletTriangles;
using hp::bench::fcl_model;
using hp::bench::FclModel;
using hp::bench::unit_quaternion;

fcl::Transform3d fcl_transform(const std::array<double, 4>& quaternion, const hp::Vec3d& t) {
    const auto q = unit_quaternion(quaternion);
    fcl::Transform3d tf = fcl::Transform3d::Identity();
    tf.linear() = fcl::Quaterniond(q[0], q[1], q[2], q[3]).toRotationMatrix();
    tf.translation() = fcl::Vector3d(t.x, t.y, t.z);
    return tf;
}

class FclScene {
public:
    static constexpr std::size_t kMaxContacts = 1000000;

    FclScene(const hp::scene::Scene& scene, const std::vector<std::uint32_t>& static_parts,
             const std::vector<hp::TriMesh>& geometries, const hp::TriMesh& tool)
        : tool_(fcl_model(tool), fcl::Transform3d::Identity()), request_(kMaxContacts, true), parts_(static_parts) {
        std::vector<std::shared_ptr<FclModel>> models(geometries.size());
        std::vector<fcl::CollisionObjectd*> raw;
        for (std::size_t i = 0; i < parts_.size(); ++i) {
            const hp::scene::ScenePart& part = scene.parts[parts_[i]];
            if (!models[part.geometry]) models[part.geometry] = fcl_model(geometries[part.geometry]);
            objects_.push_back(std::make_unique<fcl::CollisionObjectd>(
                models[part.geometry], fcl_transform(part.placement.quaternion, part.placement.position)));
            objects_.back()->setUserData(&parts_[i]);
            raw.push_back(objects_.back().get());
        }
        manager_.registerObjects(raw);
        manager_.setup();
    }

    void frame(const hp::Pose& pose, Hits& hits) {
        tool_.setTransform(fcl_transform(pose.quaternion, pose.position));
        tool_.computeAABB();
        State s{this, &hits};
        manager_.collide(&tool_, &s, &FclScene::pair);
    }

private:
    struct State {
        FclScene* self;
        Hits* hits;
    };
    // Every pair the manager's tree reports: the narrow phase with all contacts; never stops early.
    static bool pair(fcl::CollisionObjectd* a, fcl::CollisionObjectd* b, void* data) {
        State& s = *static_cast<State*>(data);
        const fcl::CollisionObjectd* part = a == &s.self->tool_ ? b : a;
        s.self->result_.clear();
        fcl::collide(a, b, s.self->request_, s.self->result_);
        const std::uint32_t id = *static_cast<const std::uint32_t*>(part->getUserData());
        for (std::size_t i = 0; i < s.self->result_.numContacts(); ++i)
            s.hits->add(id, s.self->result_.getContact(i).penetration_depth);
        return false;
    }

    fcl::CollisionObjectd tool_;
    fcl::CollisionRequestd request_;
    fcl::CollisionResultd result_;
    std::vector<std::uint32_t> parts_;  // the objects' user data points here
    std::vector<std::unique_ptr<fcl::CollisionObjectd>> objects_;
    fcl::DynamicAABBTreeCollisionManagerd manager_;
};

// ---- Bullet ----

btTransform bt_transform(const std::array<double, 4>& quaternion, const hp::Vec3d& t) {
    const auto q = unit_quaternion(quaternion);
    return btTransform(btQuaternion(btScalar(q[1]), btScalar(q[2]), btScalar(q[3]), btScalar(q[0])),
                       btVector3(btScalar(t.x), btScalar(t.y), btScalar(t.z)));
}

// The frame's hits while performDiscreteCollisionDetection runs (Bullet's near callback has no
// user pointer).
Hits* g_bullet_hits = nullptr;

// Every contact point an algorithm adds, on the static part it touches (Bullet: negative
// distance = penetration).
struct CountingResult : btManifoldResult {
    std::uint32_t part;
    CountingResult(const btCollisionObjectWrapper* a, const btCollisionObjectWrapper* b, std::uint32_t p)
        : btManifoldResult(a, b), part(p) {}
    void addContactPoint(const btVector3& normal, const btVector3& point, btScalar distance) override {
        (void)normal;
        (void)point;
        if (distance <= 0) g_bullet_hits->add(part, -double(distance));
    }
};

// What the dispatcher's default near callback does for a discrete step (the pair keeps its
// algorithm across frames), with the counting result.
void counting_near_callback(btBroadphasePair& pair, btCollisionDispatcher& dispatcher, const btDispatcherInfo& info) {
    auto* a = static_cast<btCollisionObject*>(pair.m_pProxy0->m_clientObject);
    auto* b = static_cast<btCollisionObject*>(pair.m_pProxy1->m_clientObject);
    if (!dispatcher.needsCollision(a, b)) return;
    btCollisionObjectWrapper wa(nullptr, a->getCollisionShape(), a, a->getWorldTransform(), -1, -1);
    btCollisionObjectWrapper wb(nullptr, b->getCollisionShape(), b, b->getWorldTransform(), -1, -1);
    if (!pair.m_algorithm) pair.m_algorithm = dispatcher.findAlgorithm(&wa, &wb, nullptr, BT_CONTACT_POINT_ALGORITHMS);
    if (!pair.m_algorithm) return;
    const int part = a->isStaticObject() ? a->getUserIndex() : b->getUserIndex();
    CountingResult result(&wa, &wb, std::uint32_t(part));
    pair.m_algorithm->processCollision(&wa, &wb, info, &result);
}

class BulletScene {
public:
    BulletScene(const hp::scene::Scene& scene, const std::vector<std::uint32_t>& static_parts,
                const std::vector<hp::TriMesh>& geometries, const hp::TriMesh& tool, double margin)
        : tool_mesh_(tool), dispatcher_(&config_), world_(&dispatcher_, &broadphase_, &config_) {
        btGImpactCollisionAlgorithm::registerAlgorithm(&dispatcher_);
        dispatcher_.setNearCallback(&counting_near_callback);
        world_.setForceUpdateAllAabbs(false);  // static parts keep their boxes
        meshes_.resize(geometries.size());
        shapes_.resize(geometries.size());
        for (std::uint32_t p : static_parts) {
            const hp::scene::ScenePart& part = scene.parts[p];
            btBvhTriangleMeshShape* shape = shape_of(part.geometry, geometries, margin);
            auto obj = std::make_unique<btCollisionObject>();
            obj->setCollisionShape(shape);
            obj->setWorldTransform(bt_transform(part.placement.quaternion, part.placement.position));
            obj->setCollisionFlags(btCollisionObject::CF_STATIC_OBJECT);
            obj->setActivationState(ISLAND_SLEEPING);
            obj->setUserIndex(int(p));
            world_.addCollisionObject(obj.get(), btBroadphaseProxy::StaticFilter,
                                      btBroadphaseProxy::AllFilter ^ btBroadphaseProxy::StaticFilter);
            objects_.push_back(std::move(obj));
        }
        tool_shape_ = hp::bench::gimpact_shape(tool_mesh_, margin);
        tool_.setCollisionShape(tool_shape_.get());
        tool_.setCollisionFlags(btCollisionObject::CF_KINEMATIC_OBJECT);
        tool_.setActivationState(DISABLE_DEACTIVATION);
        tool_.setUserIndex(-1);
        world_.addCollisionObject(&tool_, btBroadphaseProxy::DefaultFilter, btBroadphaseProxy::AllFilter);
    }
    ~BulletScene() {
        world_.removeCollisionObject(&tool_);
        for (auto& obj : objects_) world_.removeCollisionObject(obj.get());
    }
    BulletScene(const BulletScene&) = delete;
    BulletScene& operator=(const BulletScene&) = delete;

    void frame(const hp::Pose& pose, Hits& hits) {
        tool_.setWorldTransform(bt_transform(pose.quaternion, pose.position));
        g_bullet_hits = &hits;
        world_.performDiscreteCollisionDetection();
        g_bullet_hits = nullptr;
    }

private:
    btBvhTriangleMeshShape* shape_of(std::size_t g, const std::vector<hp::TriMesh>& geometries, double margin) {
        if (!shapes_[g]) {
            meshes_[g] = std::make_unique<BulletTriangles>(geometries[g]);
            shapes_[g] = std::make_unique<btBvhTriangleMeshShape>(meshes_[g]->array.get(), true);
            shapes_[g]->setMargin(btScalar(margin));
        }
        return shapes_[g].get();
    }

    std::vector<std::unique_ptr<BulletTriangles>> meshes_;
    std::vector<std::unique_ptr<btBvhTriangleMeshShape>> shapes_;
    BulletTriangles tool_mesh_;
    std::unique_ptr<btGImpactMeshShape> tool_shape_;
    std::vector<std::unique_ptr<btCollisionObject>> objects_;
    btCollisionObject tool_;
    btDefaultCollisionConfiguration config_;
    btCollisionDispatcher dispatcher_;
    btDbvtBroadphase broadphase_;
    btCollisionWorld world_;
};

// ---- timing and comparison ----

double thread_us() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return 1e6 * static_cast<double>(t.tv_sec) + 1e-3 * static_cast<double>(t.tv_nsec);
}

// One contender's frames.
struct Series {
    std::string name;
    std::vector<double> wall_us, cpu_us;
    std::vector<Hits> hits;

    template <class Frame>
    void run(Frame&& frame) {
        Hits h;
        const double c0 = thread_us();
        const auto t0 = std::chrono::steady_clock::now();
        frame(h);
        const auto t1 = std::chrono::steady_clock::now();
        cpu_us.push_back(thread_us() - c0);
        wall_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
        hits.push_back(std::move(h));
    }
};

// Parts touched by a peer against ours, over all frames.
struct Agreement {
    std::size_t frames_equal = 0, both = 0, ours_only = 0, peer_only = 0;
    double ours_only_deepest = 0, peer_only_deepest = 0;  // the deepest depth on a one-sided part
    std::size_t ours_only_shallow = 0;  // ours-only parts with a depth under one voxel
};

// With `list`, every one-sided part on stderr: frame, part, geometry and its depth there in voxels.
Agreement compare(const Series& ours, const Series& peer, double voxel, const hp::scene::Scene* list = nullptr) {
    Agreement a;
    auto say = [&](std::size_t frame, std::uint32_t part, double depth, const std::string& who) {
        if (list)
            std::fprintf(stderr, "bench_scene_peers: %s/%s frame %zu: part %u (%s) touched by %s only, %.2f voxels deep there\n",
                         ours.name.c_str(), peer.name.c_str(), frame, part,
                         list->geometries[list->parts[part].geometry].id.c_str(), who.c_str(), depth / voxel);
    };
    for (std::size_t i = 0; i < ours.hits.size(); ++i) {
        const auto& o = ours.hits[i].deepest;
        const auto& p = peer.hits[i].deepest;
        bool equal = o.size() == p.size();
        for (const auto& [part, depth] : o) {
            if (p.count(part)) {
                ++a.both;
                continue;
            }
            equal = false;
            say(i, part, depth, ours.name);
            ++a.ours_only;
            a.ours_only_deepest = std::max(a.ours_only_deepest, depth);
            a.ours_only_shallow += depth < voxel;
        }
        for (const auto& [part, depth] : p)
            if (!o.count(part)) {
                equal = false;
                say(i, part, depth, peer.name);
                ++a.peer_only;
                a.peer_only_deepest = std::max(a.peer_only_deepest, depth);
            }
        a.frames_equal += equal;
    }
    return a;
}

double mean_of(const std::vector<Hits>& hits, bool parts) {
    double sum = 0;
    for (const Hits& h : hits) sum += static_cast<double>(parts ? h.deepest.size() : h.contacts);
    return hits.empty() ? 0 : sum / static_cast<double>(hits.size());
}

nlohmann::json row_of(const Series& s, const Series& ours, double voxel, std::size_t poses_total) {
    const hp::LatencyStats w = hp::latency_stats(s.wall_us), c = hp::latency_stats(s.cpu_us);
    const hp::LatencyStats ow = hp::latency_stats(ours.wall_us), oc = hp::latency_stats(ours.cpu_us);
    const std::size_t frames = s.hits.size();
    char notes[768];
    int n = std::snprintf(notes, sizeof notes,
                          "%s, %zu of the %zu poses, one thread: frame wall p50 %.1f p99 %.1f us, thread CPU p50 %.1f p99 %.1f us; "
                          "parts touched %.2f, contacts %.1f per frame",
                          s.name.c_str(), frames, poses_total, w.p50, w.p99, c.p50, c.p99, mean_of(s.hits, true),
                          mean_of(s.hits, false));
    nlohmann::json j{{"stage", "scene-" + s.name},
                     {"mesh", "1000 parts"},
                     {"seconds", 1e-6 * std::accumulate(s.wall_us.begin(), s.wall_us.end(), 0.0)},
                     {"peak_rss", hp::peak_rss_bytes()},
                     {"frames", frames},
                     {"poses_total", poses_total},
                     {"frame_us", hp::to_json(w)},
                     {"frame_thread_cpu_us", hp::to_json(c)},
                     {"parts_touched_mean", mean_of(s.hits, true)},
                     {"contacts_mean", mean_of(s.hits, false)}};
    if (&s != &ours) {
        const Agreement a = compare(ours, s, voxel);
        std::snprintf(notes + n, sizeof notes - std::size_t(n),
                      "; / ours: wall p50 %.1fx p99 %.1fx, CPU p50 %.1fx p99 %.1fx; parts touched as ours in %zu/%zu frames "
                      "(%zu parts both, %zu ours only, %zu %s only)",
                      w.p50 / ow.p50, w.p99 / ow.p99, c.p50 / oc.p50, c.p99 / oc.p99, a.frames_equal, frames, a.both,
                      a.ours_only, a.peer_only, s.name.c_str());
        j["ratio_wall"] = {{"p50", w.p50 / ow.p50}, {"p99", w.p99 / ow.p99}};
        j["ratio_thread_cpu"] = {{"p50", c.p50 / oc.p50}, {"p99", c.p99 / oc.p99}};
        j["agreement"] = {{"frames_equal", a.frames_equal},
                          {"parts_both", a.both},
                          {"parts_ours_only", a.ours_only},
                          {"parts_peer_only", a.peer_only},
                          {"ours_only_deepest_voxels", a.ours_only_deepest / voxel},
                          {"ours_only_under_one_voxel", a.ours_only_shallow},
                          {"peer_only_deepest_voxels", a.peer_only_deepest / voxel}};
    }
    j["notes"] = notes;
    return j;
}

// ---- inputs ----

// The triangles of every geometry as haptic-pipeline --assembly prepared them, from the scene's
// source file; hp::Error(bad_input) when the file's hash or a geometry's triangle count differs.
std::vector<hp::TriMesh> scene_geometries(const hp::scene::Scene& scene, const std::filesystem::path& source) {
    const hp::Assembly assembly = hp::read_assembly(source);
    if (assembly.source_hash != scene.source_hash)
        hp::fail_input(source.string(), "is not the file the scene was prepared from (its hash differs); give --source");
    std::vector<hp::TriMesh> out;
    for (std::size_t g = 0; g < scene.geometries.size(); ++g) {
        hp::LoadedMesh m = hp::prepare_geometry(assembly, g, {}, source.string());
        if (m.mesh.triangles.size() != scene.geometries[g].triangles)
            hp::fail_input(source.string(), "geometry " + scene.geometries[g].id + " has " +
                                                 std::to_string(m.mesh.triangles.size()) + " triangles, the scene says " +
                                                 std::to_string(scene.geometries[g].triangles));
        out.push_back(std::move(m.mesh));
    }
    return out;
}

// Every k-th of `total` poses, about `wanted` of them, k sharing no factor with `geometries`.
std::vector<std::size_t> peer_frames(std::size_t total, std::size_t wanted, std::size_t geometries) {
    std::size_t k = wanted == 0 || wanted >= total ? 1 : total / wanted;
    while (k > 1 && std::gcd(k, std::max<std::size_t>(geometries, 1)) != 1) --k;
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < total && (wanted == 0 || out.size() < wanted); i += k) out.push_back(i);
    return out;
}

struct Options {
    std::string scene, tree, tool_mesh, source;
    std::size_t count = 2000, peer_poses = 0, warmup = 5;
    std::uint64_t seed = 1;
    bool list = false;
    double depth = 5, bullet_margin = -1;  // negative: half the scene's voxel size
    std::size_t budget_tests = 0;          // > 0: also ours in time-critical mode (vps-tc)
};

int run(const Options& o) {
    hp::scene::SceneCheckSpec spec;
    spec.scene_path = o.scene;
    spec.tool.tree_file = o.tree;
    spec.poses.scenario = "contact";
    spec.poses.count = o.count;
    spec.poses.seed = o.seed;
    spec.poses.depth = o.depth;
    hp::scene::SceneQuery sq(spec.scene_path, spec.tool, {.mode = hp::QueryMode::full}, 1);
    const std::vector<hp::Pose> poses = hp::scene::scene_scenario(sq, spec);
    const hp::scene::Scene& scene = sq.scene();
    std::filesystem::path source = o.source.empty() ? scene.source_file : o.source;
    if (source.is_relative() && !std::filesystem::exists(source))
        source = std::filesystem::path(o.scene).parent_path() / source;
    const std::vector<hp::TriMesh> geometries = scene_geometries(scene, source);
    const hp::TriMesh tool = hp::load_mesh(o.tool_mesh).mesh;

    FclScene fcl_scene(scene, sq.static_parts(), geometries, tool);
    const double margin = o.bullet_margin < 0 ? 0.5 * scene.voxel_size : o.bullet_margin;
    BulletScene bullet_scene(scene, sq.static_parts(), geometries, tool, margin);
    const std::vector<std::size_t> frames = peer_frames(poses.size(), o.peer_poses, scene.geometries.size());
    std::unique_ptr<hp::scene::SceneQuery> tc;
    if (o.budget_tests > 0)
        tc = std::make_unique<hp::scene::SceneQuery>(
            spec.scene_path, spec.tool,
            hp::QueryOptions{.mode = hp::QueryMode::time_critical, .budget_us = 1e12, .budget_tests = o.budget_tests}, 1);
    Series ours, fcl_s, bullet_s, tc_s;
    ours.name = "vps";
    tc_s.name = "vps-tc";
    fcl_s.name = "fcl";
    bullet_s.name = "bullet";
    auto frame_of = [](hp::scene::SceneQuery& q, const hp::Pose& p, Hits& h) {
        const hp::scene::FrameResult& f = q.query(p);
        for (const hp::scene::PairResult& pr : f.pairs)
            if (pr.contacts) h.deepest[pr.part] = pr.max_penetration;
        h.contacts = f.contacts.size();
    };
    auto ours_frame = [&](const hp::Pose& p, Hits& h) { frame_of(sq, p, h); };
    auto tc_frame = [&](const hp::Pose& p, Hits& h) { frame_of(*tc, p, h); };
    for (std::size_t i = 0; i < std::min(o.warmup, frames.size()); ++i) {
        Hits h;
        ours_frame(poses[frames[i]], h);
        fcl_scene.frame(poses[frames[i]], h);
        bullet_scene.frame(poses[frames[i]], h);
        if (tc) tc_frame(poses[frames[i]], h);
    }
    const std::size_t contenders = tc ? 4 : 3;
    for (std::size_t n = 0; n < frames.size(); ++n) {
        const hp::Pose& p = poses[frames[n]];
        for (std::size_t k = 0; k < contenders; ++k) {
            switch ((n + k) % contenders) {
                case 0: ours.run([&](Hits& h) { ours_frame(p, h); }); break;
                case 1: fcl_s.run([&](Hits& h) { fcl_scene.frame(p, h); }); break;
                case 2: bullet_s.run([&](Hits& h) { bullet_scene.frame(p, h); }); break;
                default: tc_s.run([&](Hits& h) { tc_frame(p, h); }); break;
            }
        }
    }
    if (o.list)
        for (const Series* s : {&fcl_s, &bullet_s}) compare(ours, *s, scene.voxel_size, &scene);
    std::vector<const Series*> rows{&ours, &fcl_s, &bullet_s};
    if (tc) rows.push_back(&tc_s);
    for (const Series* s : rows) {
        nlohmann::json row = row_of(*s, ours, scene.voxel_size, poses.size());
        if (s == &bullet_s) row["margin"] = margin;
        if (s == &tc_s) {
            row["budget_tests"] = o.budget_tests;
            const hp::LatencyStats tw = hp::latency_stats(tc_s.wall_us), tcpu = hp::latency_stats(tc_s.cpu_us);
            for (const Series* peer : {&fcl_s, &bullet_s}) {
                const hp::LatencyStats pw = hp::latency_stats(peer->wall_us), pc = hp::latency_stats(peer->cpu_us);
                row["peer_over_this"][peer->name] = {{"wall", {{"p50", pw.p50 / tw.p50}, {"p99", pw.p99 / tw.p99}}},
                                                     {"thread_cpu", {{"p50", pc.p50 / tcpu.p50}, {"p99", pc.p99 / tcpu.p99}}}};
            }
            char tail[128];
            std::snprintf(tail, sizeof tail, "; peers / this at p99, thread CPU: fcl %.1fx, bullet %.1fx",
                          row["peer_over_this"]["fcl"]["thread_cpu"]["p99"].get<double>(),
                          row["peer_over_this"]["bullet"]["thread_cpu"]["p99"].get<double>());
            row["notes"] = row["notes"].get<std::string>() + tail;
        }
        std::printf("%s\n", row.dump().c_str());
        std::fprintf(stderr, "bench_scene_peers: %s\n", row["notes"].get<std::string>().c_str());
        if (row.contains("agreement"))
            std::fprintf(stderr, "bench_scene_peers: %s agreement %s\n", s->name.c_str(), row["agreement"].dump().c_str());
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    hp::app::Tool tool("bench_scene_peers",
                       "Time a tool against a scene of placed parts in ours, FCL and Bullet, frame by frame on the same poses (make bench).",
                       "Example:\n  bench_scene_peers prepared/scene.json tool.hps stanford-bunny.obj --count 2000 --peer-poses 200\n");
    Options o;
    tool.cli.add_option("SCENE", o.scene, "scene.json of haptic-pipeline --assembly")->required();
    tool.cli.add_option("TOOL_TREE", o.tree, "the tool's point-sphere tree")->required();
    tool.cli.add_option("TOOL_MESH", o.tool_mesh, "the mesh the tool's tree was made from")->required();
    tool.cli.add_option("--count", o.count, "poses generated (as bench_scene)");
    tool.cli.add_option("--seed", o.seed);
    tool.cli.add_option("--depth", o.depth, "contact depth in voxels");
    tool.cli.add_option("--peer-poses", o.peer_poses, "frames timed, about this many spread over the poses (0: all)");
    tool.cli.add_option("--warmup", o.warmup, "untimed frames of each contender first");
    tool.cli.add_option("--bullet-margin", o.bullet_margin, "Bullet's collision margins, scene units (default half the voxel size)");
    tool.cli.add_option("--budget-tests", o.budget_tests,
                        "also ours in time-critical mode, N sphere tests per frame shared by its pairs (a row 'vps-tc')");
    tool.cli.add_flag("--list", o.list, "every part touched by one side only, on stderr");
    tool.cli.add_option("--source", o.source, "the scene's source file (default: as scene.json names it)");
    hp::pin_to_current_core();
    return tool.run(argc, argv, [&] { return run(o); });
}
