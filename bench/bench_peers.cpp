// bench_peers STATIC_MESH MOVING_MESH --static-voxel S --moving-voxel S2 [--moving-scale F]
//             [--count N] [--seed S] [--depth D] [--warmup W] [--bullet-margin M]
// Our VPS query next to what a user would pick instead, in one process, on the same
// meshes and the same poses:
//  vps      hp::VpsQuery, full mode: the static mesh's distance field built in process (voxelize +
//           distance, pad 2, voxel S) against the moving mesh's pointshell (voxel S2) and its
//           point-sphere tree (K = 4), as bench_query builds them.
//  gimpact  Bullet's GImpact (Sagardia et al. 2014's own comparison): a btGImpactMeshShape per mesh, the
//           collision algorithm the dispatcher picks for the pair once btGImpactCollisionAlgorithm
//           is registered (what btCollisionWorld runs for a pair; kept across queries like a
//           world's pair cache), one processCollision per pose. Margin --bullet-margin (default 0:
//           contacts only where the triangles really overlap; GImpact's own default is 0.01 world
//           units, 6% of the bunny).
//  fcl      FCL: a BVHModel<OBBRSS> per mesh, fcl::collide with enable_contact and a contact cap
//           that no pose reaches.
// Poses: hp::generate_scenario contact poses (first touch along a random direction, pressed in by
// at most --depth voxels of the static grid), placing the moving mesh (world = R p + t) for all
// three. Every query is timed alone with a steady clock after W warm-up queries; one thread.
//
// "Contact" is what each one reports and what a haptic loop would consume:
//  vps      colliding shell points (V(P) > 0), each with its own depth and normal;
//  gimpact  contact points from its triangle-pair clipping (each overlapping triangle pair adds its
//           deepest clipped vertices; counted as added, not after the persistent manifold's
//           reduction to at most 4);
//  fcl      triangle-triangle intersection contacts (points of each intersecting pair).
// The counts therefore differ in meaning; the notes also give how many poses each one finds in
// contact (all poses are, by construction, for the shell points) and the mean of its deepest
// reported depth.
//
// One JSON line per contender in make bench's format ("seconds": the timed queries' sum); the
// peers' notes give their p50/p99 against ours as ratios peer / ours (> 1: ours is faster).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include <tbb/global_control.h>

#include <btBulletCollisionCommon.h>
#include <BulletCollision/Gimpact/btGImpactCollisionAlgorithm.h>
#include <BulletCollision/Gimpact/btGImpactShape.h>

#include <fcl/geometry/bvh/BVH_model.h>
#include <fcl/math/bv/OBBRSS.h>
#include <fcl/narrowphase/collision.h>
#include <fcl/narrowphase/collision_object.h>

#include "bench_field.hpp"
#include "peer_meshes.hpp"
#include "common/tool.hpp"
#include "core/error.hpp"
#include "distance/distance.hpp"
#include "pointshell/pointshell.hpp"
#include "query/scenario.hpp"
#include "spheretree/tree.hpp"
#include "voxel/voxelize.hpp"

namespace {

// What one query of any contender reports.
struct Outcome {
    std::size_t contacts = 0;
    double deepest = 0;  // the largest penetration depth reported, 0 without contacts
    std::size_t tested = 0;  // ours: shell points tested
};

// ---- Bullet GImpact ----

struct GImpactMesh {
    hp::bench::BulletTriangles triangles;
    std::unique_ptr<btGImpactMeshShape> shape;

    GImpactMesh(const hp::TriMesh& m, double margin) : triangles(m), shape(hp::bench::gimpact_shape(triangles, margin)) {}
};

// Counts every contact point the algorithm adds (the manifold itself keeps at most 4).
struct CountingResult : btManifoldResult {
    Outcome out;
    CountingResult(const btCollisionObjectWrapper* a, const btCollisionObjectWrapper* b) : btManifoldResult(a, b) {}
    void addContactPoint(const btVector3& normal, const btVector3& point, btScalar depth) override {
        (void)normal;
        (void)point;
        ++out.contacts;
        out.deepest = std::max(out.deepest, -double(depth));  // Bullet: negative depth = penetration
    }
};

class GImpactPeer {
public:
    GImpactPeer(const hp::TriMesh& fixed, const hp::TriMesh& moving, double margin)
        : fixed_(fixed, margin), moving_(moving, margin), dispatcher_(&config_) {
        btGImpactCollisionAlgorithm::registerAlgorithm(&dispatcher_);
        a_.setCollisionShape(fixed_.shape.get());
        b_.setCollisionShape(moving_.shape.get());
        b_.setCollisionFlags(0);  // the moving object is not static
        a_.setWorldTransform(btTransform::getIdentity());
        b_.setWorldTransform(btTransform::getIdentity());
        btCollisionObjectWrapper wa(nullptr, a_.getCollisionShape(), &a_, a_.getWorldTransform(), -1, -1);
        btCollisionObjectWrapper wb(nullptr, b_.getCollisionShape(), &b_, b_.getWorldTransform(), -1, -1);
        algorithm_ = dispatcher_.findAlgorithm(&wa, &wb, nullptr, BT_CONTACT_POINT_ALGORITHMS);
        if (!algorithm_) throw hp::Error(hp::ExitCode::check_failed, "bench_peers: Bullet has no algorithm for GImpact vs GImpact");
    }
    ~GImpactPeer() {
        algorithm_->~btCollisionAlgorithm();
        dispatcher_.freeCollisionAlgorithm(algorithm_);
    }
    GImpactPeer(const GImpactPeer&) = delete;
    GImpactPeer& operator=(const GImpactPeer&) = delete;

    Outcome operator()(const hp::Pose& pose) {
        const auto q = hp::bench::unit_quaternion(pose.quaternion);
        b_.setWorldTransform(btTransform(btQuaternion(btScalar(q[1]), btScalar(q[2]), btScalar(q[3]), btScalar(q[0])),
                                         btVector3(btScalar(pose.position.x), btScalar(pose.position.y),
                                                   btScalar(pose.position.z))));
        btCollisionObjectWrapper wa(nullptr, a_.getCollisionShape(), &a_, a_.getWorldTransform(), -1, -1);
        btCollisionObjectWrapper wb(nullptr, b_.getCollisionShape(), &b_, b_.getWorldTransform(), -1, -1);
        CountingResult result(&wa, &wb);
        algorithm_->processCollision(&wa, &wb, info_, &result);
        return result.out;
    }

private:
    GImpactMesh fixed_, moving_;
    btDefaultCollisionConfiguration config_;
    btCollisionDispatcher dispatcher_;
    btDispatcherInfo info_;
    btCollisionObject a_, b_;
    btCollisionAlgorithm* algorithm_ = nullptr;
};

// ---- FCL ----

class FclPeer {
public:
    static constexpr std::size_t kMaxContacts = 1000000;
    FclPeer(const hp::TriMesh& fixed, const hp::TriMesh& moving)
        : a_(hp::bench::fcl_model(fixed), fcl::Transform3d::Identity()), b_(hp::bench::fcl_model(moving), fcl::Transform3d::Identity()),
          request_(kMaxContacts, true) {}

    Outcome operator()(const hp::Pose& pose) {
        const auto q = hp::bench::unit_quaternion(pose.quaternion);
        b_.setTransform(fcl::Quaterniond(q[0], q[1], q[2], q[3]),
                        fcl::Vector3d(pose.position.x, pose.position.y, pose.position.z));
        result_.clear();
        fcl::collide(&a_, &b_, request_, result_);
        Outcome out;
        out.contacts = result_.numContacts();
        for (std::size_t i = 0; i < out.contacts; ++i)
            out.deepest = std::max(out.deepest, result_.getContact(i).penetration_depth);
        return out;
    }

private:
    fcl::CollisionObjectd a_, b_;
    fcl::CollisionRequestd request_;
    fcl::CollisionResultd result_;
};

// ---- timing ----

struct Run {
    std::vector<double> latency_us;
    std::vector<Outcome> outcomes;
    double p50 = 0, p99 = 0, max = 0, seconds = 0, contacts_mean = 0, deepest_mean = 0, tested_mean = 0;
    std::size_t in_contact = 0;
};

// Nearest-rank percentile of a sorted sample.
double percentile(const std::vector<double>& sorted, double p) {
    const std::size_t rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(sorted.size())));
    return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

template <class Query>
Run timed(Query& query, const std::vector<hp::Pose>& poses, std::size_t warmup) {
    for (std::size_t i = 0; i < warmup; ++i) (void)query(poses[i % poses.size()]);
    Run r;
    for (const hp::Pose& p : poses) {
        const auto t0 = std::chrono::steady_clock::now();
        Outcome o = query(p);
        const auto t1 = std::chrono::steady_clock::now();
        r.latency_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
        r.outcomes.push_back(o);
    }
    std::vector<double> sorted = r.latency_us;
    std::sort(sorted.begin(), sorted.end());
    r.p50 = percentile(sorted, 0.5);
    r.p99 = percentile(sorted, 0.99);
    r.max = sorted.back();
    for (std::size_t i = 0; i < poses.size(); ++i) {
        r.seconds += r.latency_us[i] * 1e-6;
        r.contacts_mean += static_cast<double>(r.outcomes[i].contacts);
        r.deepest_mean += r.outcomes[i].deepest;
        r.tested_mean += static_cast<double>(r.outcomes[i].tested);
        r.in_contact += r.outcomes[i].contacts > 0;
    }
    r.contacts_mean /= static_cast<double>(poses.size());
    r.deepest_mean /= static_cast<double>(poses.size());
    r.tested_mean /= static_cast<double>(poses.size());
    return r;
}

}  // namespace

int main(int argc, char** argv) {
    hp::app::Tool tool("bench_peers", "Time the VPS query next to Bullet GImpact and FCL on the same poses (make bench).",
                       "Example:\n  bench_peers bunny.obj bunny.obj --static-voxel 0.0005 --moving-voxel 0.0007 --count 200\n");
    std::string static_path, moving_path;
    double static_voxel = 0, moving_voxel = 0, moving_scale = 1, depth = 5, bullet_margin = 0;
    std::size_t count = 200, warmup = 20;
    std::uint64_t seed = 1;
    tool.cli.add_option("STATIC", static_path)->required();
    tool.cli.add_option("MOVING", moving_path)->required();
    tool.cli.add_option("--static-voxel", static_voxel)->required();
    tool.cli.add_option("--moving-voxel", moving_voxel)->required();
    tool.cli.add_option("--moving-scale", moving_scale);
    tool.cli.add_option("--count", count);
    tool.cli.add_option("--seed", seed);
    tool.cli.add_option("--depth", depth, "contact depth in static voxels");
    tool.cli.add_option("--warmup", warmup);
    tool.cli.add_option("--bullet-margin", bullet_margin, "GImpact collision margin, world units");
    return tool.run(argc, argv, [&] {
        hp::LoadedMesh sm = hp::load_mesh(static_path);
        hp::MeshLoadOptions moving_options;
        moving_options.scale = moving_scale;
        hp::LoadedMesh mm = hp::load_mesh(moving_path, moving_options);
        hp::bench::Field sf = hp::bench::make_field(sm.mesh, sm.diagnostics.bbox, static_voxel);
        hp::bench::Field mf = hp::bench::make_field(mm.mesh, mm.diagnostics.bbox, moving_voxel);
        hp::DistanceSampler field(sf.grid, std::move(sf.distance));
        hp::PointshellResult ps = hp::sample_pointshell(mm.mesh, {mf.grid, std::move(mf.layers), std::move(mf.distance)}, {});
        const auto& pts = ps.shell.points;
        hp::PointSphereTree tree = hp::build_point_sphere_tree(pts, {.k = 4});
        hp::MovingObject moving{pts, ps.shell.normals, &tree};
        const std::vector<hp::Pose> poses =
            hp::generate_scenario(field, moving, {.kind = hp::ScenarioKind::contact, .count = count, .seed = seed, .depth = depth});

        auto name = [](const std::string& p) { return std::filesystem::path(p).filename().string(); };
        // The table's mesh column stays short; the resolutions go into the notes of ours.
        const std::string pair = name(static_path) + (name(moving_path) == name(static_path) ? " x2" : " vs " + name(moving_path));
        char setup[160];
        std::snprintf(setup, sizeof setup, "field @%g vs shell @%g (%zu pts), %zu poses", static_voxel, moving_voxel,
                      pts.size(), poses.size());

        tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
        hp::VpsQuery vps(field, moving, {.mode = hp::QueryMode::full});
        auto ours_query = [&](const hp::Pose& p) {
            const hp::QueryResult& r = vps(p);
            return Outcome{r.contacts.size(), r.max_penetration, r.points_tested};
        };
        const Run ours = timed(ours_query, poses, warmup);

        auto emit = [&](const std::string& stage, const Run& r, const std::string& what, std::size_t triangles) {
            char notes[512];
            if (&r == &ours)
                std::snprintf(notes, sizeof notes,
                              "%s, %s: p50 %.1f us, p99 %.1f us, max %.1f us; %.1f contacts (%s), in contact %zu/%zu, deepest %.3g mean; "
                              "%.0f pts tested, field Lipschitz bound %.3g",
                              what.c_str(), setup, r.p50, r.p99, r.max, r.contacts_mean, "shell points with V > 0", r.in_contact,
                              poses.size(), r.deepest_mean, r.tested_mean, field.lipschitz());
            else
                std::snprintf(notes, sizeof notes,
                              "%s: p50 %.1f us, p99 %.1f us (%.1fx / %.1fx ours), max %.1f us; %.1f contacts (%s), in contact %zu/%zu, deepest %.3g mean",
                              stage == "peer-gimpact" ? "Bullet GImpact" : "FCL OBBRSS", r.p50, r.p99, r.p50 / ours.p50,
                              r.p99 / ours.p99, r.max, r.contacts_mean, what.c_str(), r.in_contact, poses.size(),
                              r.deepest_mean);
            nlohmann::json j{{"stage", stage},
                             {"mesh", pair},
                             {"seconds", r.seconds},
                             {"peak_rss", hp::peak_rss_bytes()},
                             {"notes", notes},
                             {"queries", poses.size()},
                             {"p50_us", r.p50},
                             {"p99_us", r.p99},
                             {"max_us", r.max},
                             {"contacts_mean", r.contacts_mean},
                             {"in_contact", r.in_contact},
                             {"deepest_mean", r.deepest_mean}};
            if (&r == &ours) {
                j["points"] = pts.size();  // what ours reads per query: shell points, no triangles
                j["points_tested_mean"] = r.tested_mean;
                j["lipschitz"] = field.lipschitz();
            } else {
                j["triangles"] = triangles;
                j["ratio_p50"] = r.p50 / ours.p50;
                j["ratio_p99"] = r.p99 / ours.p99;
            }
            std::printf("%s\n", j.dump().c_str());
            std::fflush(stdout);
        };
        const std::size_t tris = sm.mesh.triangles.size() + mm.mesh.triangles.size();
        emit("peer-vps", ours, "VPS full K=4", 0);
        {
            GImpactPeer bullet(sm.mesh, mm.mesh, bullet_margin);
            const Run r = timed(bullet, poses, warmup);
            emit("peer-gimpact", r, "triangle-pair clip points", tris);
        }
        {
            FclPeer fcl(sm.mesh, mm.mesh);
            const Run r = timed(fcl, poses, warmup);
            emit("peer-fcl", r, "triangle-pair intersection points", tris);
        }
        return 0;
    });
}
