#include "query/ist_check.hpp"

#include <algorithm>
#include <chrono>
#include <optional>

#include "core/error.hpp"
#include "core/hash.hpp"
#include "core/text.hpp"
#include "formats/octree.hpp"
#include "octree/ist.hpp"
#include "query/scenario.hpp"
#include "query/session.hpp"
#include "query/static_field.hpp"

namespace hp {

namespace {

// One query's figures: what its contacts make (IstResponse) and the descent's counts (ist-brute:
// its voxel tests alone).
struct IstRun {
    IstForce response;
    octree::IstStats stats;
};

// A hash of the contact set (sorted voxel or node pairs, levels): equal sets, equal hashes.
std::string contact_set_hash(const std::vector<octree::IstContact>& contacts) {
    std::vector<std::uint64_t> keys;
    keys.reserve(contacts.size());
    for (const auto& c : contacts)
        keys.push_back((static_cast<std::uint64_t>(c.moving) << 32 | c.fixed) ^ (static_cast<std::uint64_t>(c.level) << 58));
    std::sort(keys.begin(), keys.end());
    return hex64(hash64(keys.data(), keys.size() * sizeof(std::uint64_t)));
}

nlohmann::json octree_json(const std::string& file, const octree::Octree& t) {
    return {{"file", file}, {"levels", t.levels}, {"nodes", t.nodes()}, {"voxels", t.voxels},
            {"voxel_size", t.voxel_size}, {"surface_only", t.surface_only}, {"mask_bytes", t.masks.size()}};
}

}  // namespace

IstForce IstResponse::operator()(const std::vector<octree::IstContact>& contacts, const Vec3d& origin) {
    IstForce r;
    r.contacts = contacts.size();
    if (++stamp_ == 0) {  // wrapped: forget every slot
        cache_.fill({});
        stamp_ = 1;
    }
    for (const octree::IstContact& c : contacts) {
        Vec3d n;
        if (c.level == 0) {
            Slot& s = cache_[c.moving & (cache_.size() - 1)];
            if (s.stamp != stamp_ || s.voxel != c.moving) s = {c.moving, stamp_, normalized(-field_.gradient(c.moving_center))};
            n = s.direction;
        } else {
            n = normalized(-field_.gradient(c.moving_center));
        }
        if (length2(n) == 0) n = normalized(c.moving_center - c.fixed_center);
        const Vec3d f = n * c.depth;
        r.force += f;
        r.torque += cross(c.moving_center - origin, f);
        r.max_depth = std::max(r.max_depth, c.depth);
    }
    return r;
}

bool is_ist_mode(const std::string& mode) {
    return std::find(kIstModeNames.begin(), kIstModeNames.end(), mode) != kIstModeNames.end();
}

std::string query_mode_list() {
    std::vector<std::string_view> all(kQueryModeNames.begin(), kQueryModeNames.end());
    all.insert(all.end(), kIstModeNames.begin(), kIstModeNames.end());
    return or_list(all);
}

QueryCheck run_ist_check(const QueryCheckSpec& spec, const Progress& progress) {
    const bool brute = spec.mode == kIstModeNames[1];
    if (spec.moving_octree_path.empty() || spec.static_octree_path.empty())
        fail_usage("mode '" + spec.mode + "' needs both octrees (haptic-octree): the moving object's and the static object's");
    if (!spec.cfm_path.empty()) fail_usage("a closest feature map serves only the time-critical mode, not mode '" + spec.mode + "'");
    if (spec.budget_tests > 0) fail_usage("a budget in sphere tests applies only to the time-critical mode, not mode '" + spec.mode + "'");
    if (brute && (spec.ist_level > 0 || spec.ist_max_contacts > 0))
        fail_usage("mode ist-brute tests every voxel pair: a stop level or contact count applies only to mode ist");
    spec.poses.require();
    auto name = [&](const std::filesystem::path& p) { return report_file_name(spec, p); };

    StaticField st = load_static_field(spec.static_path);
    MovingObjectData shell = load_moving_object(spec.moving_path);
    const OctreeFile mo = read_octree_file(spec.moving_octree_path);
    const OctreeFile so = read_octree_file(spec.static_octree_path);
    const MovingObject moving = shell.view();
    QueryCheck out;
    nlohmann::json validation{{"static_file", "ok"}, {"moving_file", "ok"}, {"moving_octree_file", "ok"}, {"static_octree_file", "ok"}};
    out.covered = true;  // the octrees are complete by construction (their reader checks every mask)
    auto source_of = [](const nlohmann::json& m) { return m.value("source_hash", std::string()); };
    if (!source_of(so.metadata).empty() && !source_of(st.metadata).empty() && source_of(so.metadata) != source_of(st.metadata))
        out.warnings.push_back(name(spec.static_octree_path) + ": made from another mesh than " + name(spec.static_path) +
                               " (source hashes differ): normals and poses do not match the static octree");
    if (!source_of(mo.metadata).empty() && !source_of(shell.metadata).empty() && source_of(mo.metadata) != source_of(shell.metadata))
        out.warnings.push_back(name(spec.moving_octree_path) + ": made from another mesh than " + name(spec.moving_path) +
                               " (source hashes differ): the poses do not place the moving octree as they place the tree");

    CheckPoses got = check_poses(spec.poses, st.field, moving, progress);
    out.poses = std::move(got.poses);
    const double generation_s = got.generation_s;

    const octree::IstOptions io{.one_child = spec.ist_one_child, .side = spec.ist_side, .stop_level = spec.ist_level,
                                .max_contacts = spec.ist_max_contacts};
    octree::IstQuery ist(mo.tree, so.tree, io);
    std::optional<octree::BruteQuery> bq;
    if (brute) bq.emplace(mo.tree, so.tree);
    IstResponse respond(st.field);
    auto one = [&](const Pose& pose, IstRun& r) -> const std::vector<octree::IstContact>& {
        octree::Placement pl{rotation_rows(pose.quaternion), pose.position};
        r = {};
        if (brute) {
            const auto& c = (*bq)(pl);
            r.stats.voxel_tests = bq->voxel_tests();
            r.response = respond(c, pose.position);
            return c;
        }
        const auto& c = ist(pl);
        r.stats = ist.stats();
        r.response = respond(c, pose.position);
        return c;
    };

    const std::size_t warmup = spec.warmup ? *spec.warmup : std::min<std::size_t>(out.poses.size(), 100);
    IstRun r;
    for (std::size_t i = 0; i < warmup && !out.poses.empty(); ++i) one(out.poses[i % out.poses.size()], r);
    out.run.warmup = out.poses.empty() ? 0 : warmup;
    std::vector<std::string> hashes;
    std::size_t skipped_sum = 0, voxel_sum = 0;
    for (std::size_t i = 0; i < out.poses.size(); ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        const auto& contacts = one(out.poses[i], r);
        const auto t1 = std::chrono::steady_clock::now();
        out.run.latency_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
        hashes.push_back(contact_set_hash(contacts));
        QuerySummary q;
        q.contacts = r.response.contacts;
        q.max_penetration = r.response.max_depth;
        q.force = r.response.force, q.torque = r.response.torque;
        q.spheres_tested = r.stats.sphere_tests;
        q.points_tested = r.stats.voxel_tests;
        q.level_reached = r.stats.level_reached;
        q.interrupted = r.stats.interrupted;
        out.run.results.push_back(q);
        skipped_sum += r.stats.skipped;
        voxel_sum += r.stats.voxel_tests;
        progress.report("ist", static_cast<double>(i + 1) / static_cast<double>(out.poses.size()));
    }
    out.latency = latency_stats(out.run.latency_us);

    const double n = std::max<double>(1, static_cast<double>(out.poses.size()));
    const std::size_t field_bytes = st.field.grid().count() * sizeof(double);
    out.report = {
        {"budget_tests", nullptr}, {"mode", spec.mode},
        {"level", nullptr},
        {"cfm", nullptr},
        {"ist", {{"moving_octree", octree_json(name(spec.moving_octree_path), mo.tree)},
                 {"static_octree", octree_json(name(spec.static_octree_path), so.tree)},
                 {"one_child", spec.ist_one_child}, {"side", spec.ist_side},
                 {"stop_level", spec.ist_level}, {"max_contacts", spec.ist_max_contacts},
                 {"mean_voxel_tests", static_cast<double>(voxel_sum) / n},
                 {"mean_skipped_tests", static_cast<double>(skipped_sum) / n},
                 {"memory_bytes", {{"octrees_stored", mo.tree.masks.size() + so.tree.masks.size()},
                                   {"octrees_in_memory", (mo.tree.masks.size() + so.tree.masks.size()) * 5},
                                   {"static_field_in_memory", field_bytes}}}}},
        {"validation", validation}};
    add_inputs(out.report, spec, st, shell, generation_s);
    out.pass = add_run_figures(out.report, out, spec);
    out.report["pass"] = out.pass;
    out.per_query = nlohmann::json::array();
    for (std::size_t i = 0; i < out.run.results.size(); ++i) {
        nlohmann::json q = to_json(out.run.results[i]);
        q["contact_set"] = hashes[i];
        out.per_query.push_back(q);
    }
    return out;
}

}  // namespace hp
