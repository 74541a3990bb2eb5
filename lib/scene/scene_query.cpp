#include "scene/scene_query.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <iterator>
#include <limits>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "query/timing.hpp"
#include "scene/scene_sampler.hpp"

namespace hp::scene {

namespace fs = std::filesystem;

namespace {

double elapsed_us(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::micro>(b - a).count();
}

// A world box widened by the rounding of placing its corners (and of composing poses).
Aabb widen_for_rounding(Aabb b) {
    if (b.empty()) return b;
    const double m = std::max({std::abs(b.min.x), std::abs(b.min.y), std::abs(b.min.z), std::abs(b.max.x),
                               std::abs(b.max.y), std::abs(b.max.z)});
    const double e = 1e-9 * (m + b.diagonal());
    b.min = b.min - Vec3d{e, e, e};
    b.max = b.max + Vec3d{e, e, e};
    return b;
}

}  // namespace

Aabb positive_reach(const DistanceSampler& field) {
    const GridSpec& g = field.grid();
    const auto& d = g.dims;
    // Whether the slice `index` across `axis` holds a positive sample.
    auto slice_positive = [&](int axis, int index) {
        const int u = (axis + 1) % 3, v = (axis + 2) % 3;
        std::array<int, 3> c{};
        c[axis] = index;
        for (c[v] = 0; c[v] < d[v]; ++c[v])
            for (c[u] = 0; c[u] < d[u]; ++c[u])
                if (field.sample(c[0], c[1], c[2]) > 0) return true;
        return false;
    };
    // From each side inwards to the first slice with a positive sample: the same box as testing
    // every sample, at the cost of the few slices of padding and outside layers on each side.
    std::array<int, 3> lo{}, hi{};
    for (int a = 0; a < 3; ++a) {
        lo[a] = 0;
        while (lo[a] < d[a] && !slice_positive(a, lo[a])) ++lo[a];
        if (lo[a] == d[a]) return {};  // no positive sample: V <= 0 everywhere
        hi[a] = d[a] - 1;
        while (hi[a] > lo[a] && !slice_positive(a, hi[a])) --hi[a];
    }
    Aabb box;
    box.extend(g.center(lo[0], lo[1], lo[2]));
    box.extend(g.center(hi[0], hi[1], hi[2]));
    double pad = g.voxel_size;
    const double border = field.border_max_value();
    if (border > 0) pad += border;
    box.min = box.min - Vec3d{pad, pad, pad};
    box.max = box.max + Vec3d{pad, pad, pad};
    return box;
}

struct SceneQuery::State {
    static constexpr std::size_t npos = static_cast<std::size_t>(-1);

    struct Tool : SceneTool {
        MovingObject view;
        std::size_t slot = npos;  // its geometry's field when other tools collide with it
    };

    fs::path scene_path;
    Scene scene;
    QueryOptions options;
    int threads = 1;
    std::vector<Tool> tools;                 // sized once (views point into their data)
    std::vector<std::size_t> tool_of_part;   // per part: the tool it is, or npos
    std::vector<std::uint32_t> static_parts;
    std::vector<std::size_t> geometry_slot;  // per geometry: index into fields, or npos
    std::vector<StaticField> fields;         // one per geometry used
    std::vector<fs::path> field_files;
    std::vector<std::size_t> part_slot;      // per part: its geometry's slot (npos when neither static nor a tool with a field)
    std::vector<Aabb> reach;                 // per part (empty when not static)
    std::vector<Aabb> local_reach;           // per geometry slot, in its frame (widened for rounding)
    // What the ball test of a part reads, in one record: its placement's rotation (transposed) and
    // position, and its geometry's local reach box.
    struct Reach {
        std::array<double, 9> world_to_local;  // rows of R^T
        Vec3d position;
        Aabb local;
    };
    std::vector<Reach> static_reach;  // per static part, in the order of static_parts (the broad phase's indices)
    BroadPhase broad;
    double load_seconds = 0;
    LoadTimes load_times;
    std::vector<std::string> warnings;

    // Per worker and tool: one query per loaded geometry (scratch), sharing the tool's packed tree.
    struct Worker {
        std::vector<std::vector<std::unique_ptr<VpsQuery>>> queries;  // [tool][slot]
    };
    std::vector<Worker> workers;
    std::unique_ptr<tbb::task_arena> arena;
    // Frame scratch.
    FrameResult frame;
    std::vector<std::vector<Contact>> pair_contacts;  // threads > 1: per candidate
    std::vector<std::vector<octree::IstContact>> pair_ist_contacts;  // the same, ist modes
    std::optional<SceneIst> ist;
    std::vector<std::uint32_t> hits;
    std::vector<Placement> tool_placements;           // the frame's placement of each tool (several tools)
    std::vector<Pose> frame_poses;                    // query(pose): the one tool's

    VpsQuery& query_for(std::size_t worker, std::size_t tool, std::size_t slot) { return *workers[worker].queries[tool][slot]; }
    void run_pair(std::size_t worker, std::size_t index, const Pose& pose, const QueryOptions& opt,
                  std::vector<Contact>& out);
    Reach reach_of(const Placement& pl, std::size_t slot) const;
    // Whether a ball (world) meets a placed reach box (in the part's frame).
    static bool ball_meets(const Reach& r, const Vec3d& center, double radius);
    Vec3d tool_ball_center(std::size_t t, const Pose& pose) const;
    // Tool t's static candidates, then the other tools' parts it may touch (placements: the frame's).
    void candidates_of(std::size_t t, const Pose& pose, const std::vector<Placement>& placements,
                       std::vector<std::uint32_t>& out) const;
    void load_tool(std::size_t t, const ToolSpec& spec);
    // The octrees of the ist modes (after the fields and the tools).
    void load_ist(const IstSpec& spec, const std::vector<ToolSpec>& specs);
    void run_ist_pair(std::size_t worker, std::size_t index, const Pose& pose, std::vector<octree::IstContact>& out);
    // The frame's pairs (tool after tool, each tool's candidates in ascending part order), unrun.
    void gather_pairs(const std::vector<Pose>& poses);
};

namespace {


}  // namespace

SceneQuery::SceneQuery(const fs::path& scene_path, const ToolSpec& tool, const QueryOptions& options, int threads)
    : SceneQuery(scene_path, options, std::vector<ToolSpec>{tool}, threads) {}

SceneQuery::SceneQuery(const fs::path& scene_path, const QueryOptions& options, const std::vector<ToolSpec>& tools,
                       int threads, const IstSpec& ist)
    : state_(std::make_unique<State>()) {
    const auto t0 = Clock::now();
    State& s = *state_;
    s.scene_path = scene_path;
    s.options = options;
    s.threads = threads > 0 ? threads : std::max(1, tbb::this_task_arena::max_concurrency());
    s.scene = read_scene(scene_path);
    const Scene& sc = s.scene;
    const std::string where = scene_path.string();
    if (tools.empty()) fail_usage("give a tool: a part of the scene (--tool NAME) or a tree file (--tool-files TREE.hps)");
    s.tools.resize(tools.size());
    s.tool_of_part.assign(sc.parts.size(), State::npos);
    for (std::size_t t = 0; t < tools.size(); ++t) {
        if (tools[t].part.empty() == tools[t].tree_file.empty())
            fail_usage("give the tool as one part of the scene (--tool NAME) or as a tree file (--tool-files TREE.hps)");
        check_tool_spec(tools[t], options);
        if (!tools[t].octree_file.empty() && (!ist.on || !tools[t].part.empty()))
            fail_usage("tool " + (tools[t].part.empty() ? tools[t].tree_file.string() : "part '" + tools[t].part + "'") +
                       ": an octree file serves an outside tool in the ist modes (a part's is the scene's)");
        if (tools[t].part.empty()) continue;
        const std::size_t i = sc.find_part(tools[t].part, where + ": --tool");
        if (s.tool_of_part[i] != State::npos) fail_usage("--tool " + tools[t].part + ": part '" + sc.parts[i].name + "' is given twice as a tool");
        s.tool_of_part[i] = t;
        s.tools[t].part = i;
    }

    // The geometries used: those of the static parts (and the tool's).
    s.geometry_slot.assign(sc.geometries.size(), State::npos);
    s.part_slot.assign(sc.parts.size(), State::npos);
    s.reach.assign(sc.parts.size(), Aabb{});
    std::vector<std::size_t> used;
    for (std::size_t i = 0; i < sc.parts.size(); ++i) {
        if (s.tool_of_part[i] != State::npos) continue;
        const std::size_t g = sc.parts[i].geometry;
        if (!sc.geometries[g].ok) {
            s.warnings.push_back(part_where(scene_path, sc.parts[i].name) + ": left out (its geometry " + sc.geometries[g].id +
                                 " failed to prepare: " + sc.geometries[g].error + ")");
            continue;
        }
        if (s.geometry_slot[g] == State::npos) {
            s.geometry_slot[g] = used.size();
            used.push_back(g);
        }
        s.static_parts.push_back(static_cast<std::uint32_t>(i));
    }
    std::vector<std::size_t> verify = used;
    std::vector<bool> tree_geometry(sc.geometries.size(), false);
    for (State::Tool& tool : s.tools) {
        if (!tool.part) continue;
        const std::string& name = sc.parts[*tool.part].name;
        const std::size_t g = sc.parts[*tool.part].geometry;
        if (!sc.geometries[g].ok)
            fail_input("", part_where(scene_path, name) + ": the tool's geometry " + sc.geometries[g].id + " failed to prepare (" +
                               sc.geometries[g].error + ")");
        tree_geometry[g] = true;
        if (std::find(verify.begin(), verify.end(), g) == verify.end()) verify.push_back(g);
        if (s.tools.size() < 2) continue;
        // Other tools collide with this one through its geometry's field.
        if (!sc.geometries[g].files.count("distance") && !sc.geometries[g].files.count("voxelmap")) {
            s.warnings.push_back(part_where(scene_path, name) + ": the tool's geometry " + sc.geometries[g].id +
                                 " has no field: the other tools do not collide with it");
            continue;
        }
        if (s.geometry_slot[g] == State::npos) {
            s.geometry_slot[g] = used.size();
            used.push_back(g);
        }
        tool.slot = s.geometry_slot[g];
        s.part_slot[*tool.part] = tool.slot;
    }
    {
        // Only the files this query reads are checked (hashing the others would only add to the
        // load): the static geometries' fields and the tool's tree, with verify_scene_files' messages.
        Scene read = sc;
        for (std::size_t g = 0; g < read.geometries.size(); ++g) {
            auto& files = read.geometries[g].files;
            const bool field = s.geometry_slot[g] != State::npos;
            const bool tree = tree_geometry[g];
            const std::string kind = files.count("distance") ? "distance" : "voxelmap";
            for (auto it = files.begin(); it != files.end();)
                it = (field && it->first == kind) || (tree && it->first == "tree") ? std::next(it) : files.erase(it);
        }
        // A field whose prepared sampler is mapped instead is not read: its size is checked, its
        // hash is the sampler's record of it (map_scene_sampler); the sampler is verified as it is mapped.
        auto size_only = [&](std::size_t g, const std::string& kind) {
            return kind != "tree" && sc.geometries[g].files.count("sampler") > 0;
        };
        const auto tv = Clock::now();
        verify_scene_files(scene_path, read, verify, size_only);
        s.load_times.verify = seconds_since(tv);
    }
    const auto tf = Clock::now();

    // The fields, once per geometry.
    auto first_part_of = [&](std::size_t g) {
        for (std::uint32_t i : s.static_parts)
            if (sc.parts[i].geometry == g) return sc.parts[i].name;
        return sc.geometries[g].first_part;
    };
    auto rethrow_for = [&](const std::string& part, const Error& e) -> void {
        throw Error(e.code(), part_where(scene_path, part) + ": " + e.what());
    };
    // On all threads, one geometry each; every slot is filled alone, and the first failure in
    // geometry order is thrown, so the result and the message do not depend on the threads.
    s.fields.resize(used.size());
    s.field_files.resize(used.size());
    std::vector<std::exception_ptr> failed(used.size());
    tbb::parallel_for(std::size_t{0}, used.size(), [&](std::size_t k) {
        const std::size_t g = used[k];
        const SceneGeometry& geometry = sc.geometries[g];
        try {
            const std::string kind = geometry.files.count("distance") ? "distance" : "voxelmap";
            if (!geometry.files.count(kind))
                fail_input("", part_where(scene_path, first_part_of(g)) + ": geometry " + geometry.id +
                                   " has no distance field nor voxelmap (add the voxelize and distance stages to the pipeline)");
            s.field_files[k] = geometry_file(scene_path, sc, g, kind);
            if (geometry.files.count("sampler")) {
                s.field_files[k] = geometry_file(scene_path, sc, g, "sampler");
                s.fields[k] = map_scene_sampler(scene_path, sc, g, kind);
                return;
            }
            try {
                s.fields[k] = load_static_field(s.field_files[k]);
            } catch (const Error& e) {
                rethrow_for(first_part_of(g), e);
            }
        } catch (...) {
            failed[k] = std::current_exception();
        }
    });
    for (const std::exception_ptr& e : failed)
        if (e) std::rethrow_exception(e);
    s.load_times.fields = seconds_since(tf);
    const auto tt = Clock::now();
    for (std::size_t t = 0; t < tools.size(); ++t) s.load_tool(t, tools[t]);
    s.load_times.tool = seconds_since(tt);
    const auto tr = Clock::now();
    // Reach per geometry (local), per static part (world), and the hierarchy over them.
    std::vector<Aabb> local(s.fields.size());
    for (std::size_t k = 0; k < s.fields.size(); ++k) local[k] = positive_reach(s.fields[k].field);
    std::vector<Aabb> boxes;
    boxes.reserve(s.static_parts.size());
    for (std::uint32_t i : s.static_parts) {
        const std::size_t slot = s.geometry_slot[sc.parts[i].geometry];
        s.part_slot[i] = slot;
        s.reach[i] = widen_for_rounding(world_bounds(local[slot], sc.parts[i].placement));
        boxes.push_back(s.reach[i]);
    }
    s.broad = BroadPhase(boxes);
    for (const Aabb& b : local) s.local_reach.push_back(widen_for_rounding(b));
    s.static_reach.reserve(s.static_parts.size());
    for (std::uint32_t i : s.static_parts) s.static_reach.push_back(s.reach_of(sc.parts[i].placement, s.part_slot[i]));

    // The queries: one per worker, tool and geometry, each tool's sharing one packed tree.
    s.workers.resize(static_cast<std::size_t>(s.threads));
    for (auto& w : s.workers) w.queries.resize(s.tools.size());
    for (std::size_t t = 0; t < s.tools.size() && !s.fields.empty() && !ist.on; ++t) {
        const VpsQuery first(s.fields[0].field, s.tools[t].view, options);  // checks the options against the tree
        for (auto& w : s.workers)
            for (const StaticField& f : s.fields) w.queries[t].push_back(std::make_unique<VpsQuery>(f.field, first));
    }
    if (ist.on) s.load_ist(ist, tools);
    if (s.threads > 1) s.arena = std::make_unique<tbb::task_arena>(s.threads);
    s.load_times.reach = seconds_since(tr);
    s.load_seconds = seconds_since(t0);
}

void SceneQuery::State::load_tool(std::size_t t, const ToolSpec& spec) {
    Tool& tool = tools[t];
    static_cast<SceneTool&>(tool) = load_scene_tool(scene_path, scene, tool.part, spec);
    tool.view = tool.data.view();
}

SceneQuery::SceneQuery(SceneQuery&&) noexcept = default;
SceneQuery& SceneQuery::operator=(SceneQuery&&) noexcept = default;
SceneQuery::~SceneQuery() = default;

QueryOptions SceneQuery::pair_options(std::size_t candidates) const {
    QueryOptions o = state_->options;
    const std::size_t n = std::max<std::size_t>(1, candidates);
    if (o.budget_tests > 0) o.budget_tests = std::max<std::size_t>(1, o.budget_tests / n);
    o.budget_us = o.budget_us * static_cast<double>(std::min<std::size_t>(static_cast<std::size_t>(state_->threads), n)) /
                  static_cast<double>(n);
    return o;
}

SceneQuery::State::Reach SceneQuery::State::reach_of(const Placement& pl, std::size_t slot) const {
    const auto& m = pl.matrix;
    return {{m[0], m[4], m[8], m[1], m[5], m[9], m[2], m[6], m[10]}, pl.position, local_reach[slot]};
}

bool SceneQuery::State::ball_meets(const Reach& r, const Vec3d& center, double radius) {
    const auto& m = r.world_to_local;
    const Vec3d d = center - r.position;
    const Vec3d local{m[0] * d.x + m[1] * d.y + m[2] * d.z, m[3] * d.x + m[4] * d.y + m[5] * d.z,
                      m[6] * d.x + m[7] * d.y + m[8] * d.z};
    return squared_distance(r.local, local) <= radius * radius;
}

Vec3d SceneQuery::State::tool_ball_center(std::size_t t, const Pose& pose) const {
    const auto rot = rotation_rows(pose.quaternion);
    const Vec3d& c = tools[t].center;
    return {dot(rot[0], c) + pose.position.x, dot(rot[1], c) + pose.position.y, dot(rot[2], c) + pose.position.z};
}

void SceneQuery::State::candidates_of(std::size_t t, const Pose& pose, const std::vector<Placement>& placements,
                                      std::vector<std::uint32_t>& out) const {
    const Vec3d center = tool_ball_center(t, pose);
    const double radius = tools[t].radius;
    broad.query(center, radius, out);
    // The hierarchy's world boxes hold the placed reach boxes loosely (a rotated box's bounds); the
    // ball is then tested against the reach box itself, in the part's frame.
    std::size_t kept = 0;
    for (std::uint32_t i : out)
        if (ball_meets(static_reach[i], center, radius)) out[kept++] = static_parts[i];
    out.resize(kept);  // still ascending: so is static_parts
    // The other tools with a field, at their placements of the frame, in ascending part order.
    for (std::size_t u = 0; u < placements.size(); ++u) {
        if (u == t || tools[u].slot == npos || !ball_meets(reach_of(placements[u], tools[u].slot), center, radius)) continue;
        const auto part = static_cast<std::uint32_t>(*tools[u].part);
        out.insert(std::upper_bound(out.begin(), out.end(), part), part);
    }
}

void SceneQuery::candidates(const Pose& pose, std::vector<std::uint32_t>& out) const {
    state_->candidates_of(0, pose, {}, out);
}

void SceneQuery::candidates(std::size_t t, const std::vector<Pose>& poses, std::vector<std::uint32_t>& out) const {
    const State& s = *state_;
    if (poses.size() != s.tools.size())
        fail_usage("a frame needs one pose per tool (" + std::to_string(s.tools.size()) + " tools, " + std::to_string(poses.size()) +
                   " poses)");
    std::vector<Placement> placements(poses.size());
    for (std::size_t u = 0; u < poses.size(); ++u) placements[u] = placement_of(poses[u]);
    s.candidates_of(t, poses.at(t), placements, out);
}

void SceneQuery::State::load_ist(const IstSpec& spec, const std::vector<ToolSpec>& specs) {
    std::vector<std::size_t> slot_geometry(fields.size());
    std::vector<std::string> slot_part(fields.size());
    std::vector<const DistanceSampler*> slot_fields(fields.size());
    for (std::size_t g = 0; g < geometry_slot.size(); ++g)
        if (geometry_slot[g] != npos) slot_geometry[geometry_slot[g]] = g;
    for (std::size_t i = scene.parts.size(); i-- > 0;)  // the first part of each slot's geometry names it
        if (part_slot[i] != npos) slot_part[part_slot[i]] = scene.parts[i].name;
    for (std::size_t k = 0; k < fields.size(); ++k) slot_fields[k] = &fields[k].field;
    std::vector<std::optional<std::size_t>> tool_parts;
    for (const Tool& t : tools) tool_parts.push_back(t.part);
    ist.emplace(scene_path, scene, spec, slot_geometry, slot_part, slot_fields, tool_parts, specs, workers.size());
}

void SceneQuery::State::run_ist_pair(std::size_t worker, std::size_t index, const Pose& pose, std::vector<octree::IstContact>& out) {
    PairResult& pr = frame.pairs[index];
    const Placement& pl = pr.other_tool < 0 ? scene.parts[pr.part].placement : tool_placements[static_cast<std::size_t>(pr.other_tool)];
    IstPairResult r;
    const auto& contacts = ist->run(worker, pr.tool, part_slot[pr.part], compose_into(pl, pose), frame.pairs.size(), r);
    pr.contacts = contacts.size();
    pr.force = rotate_to_world(pl, r.response.force);
    pr.torque = rotate_to_world(pl, r.response.torque);
    pr.max_penetration = r.response.max_depth;
    pr.spheres_tested = r.stats.sphere_tests;
    pr.points_tested = r.stats.voxel_tests;
    pr.level_reached = r.stats.level_reached;
    pr.interrupted = r.stats.interrupted;
    for (const octree::IstContact& c : contacts) out.push_back(ist_contact_to_world(pl, c));
}

void SceneQuery::State::run_pair(std::size_t worker, std::size_t index, const Pose& pose, const QueryOptions& opt,
                                 std::vector<Contact>& out) {
    PairResult& pr = frame.pairs[index];
    const Placement& pl = pr.other_tool < 0 ? scene.parts[pr.part].placement : tool_placements[static_cast<std::size_t>(pr.other_tool)];
    VpsQuery& q = query_for(worker, pr.tool, part_slot[pr.part]);
    q.set_budget(opt.budget_us, opt.budget_tests);
    const QueryResult& r = q(compose_into(pl, pose));
    pr.contacts = r.contacts.size();
    pr.force = rotate_to_world(pl, r.force);
    pr.torque = rotate_to_world(pl, r.torque);
    pr.max_penetration = r.max_penetration;
    pr.spheres_tested = r.spheres_tested;
    pr.points_tested = r.points_tested;
    pr.level_reached = r.level_reached;
    pr.interrupted = r.interrupted;
    pr.cfm_contacts = r.cfm_contacts;
    for (const Contact& c : r.contacts) out.push_back(contact_to_world(pl, c));
}

void SceneQuery::State::gather_pairs(const std::vector<Pose>& poses) {
    FrameResult& f = frame;
    f.candidates.clear();
    f.pairs.clear();
    f.tools.resize(tools.size());
    for (std::size_t t = 0; t < tools.size(); ++t) {
        candidates_of(t, poses[t], tool_placements, hits);
        f.tools[t] = ToolResult{};
        f.tools[t].first_pair = f.pairs.size();
        f.tools[t].pairs = hits.size();
        for (std::uint32_t part : hits) {
            f.candidates.push_back(part);
            PairResult pr;
            pr.tool = static_cast<std::uint32_t>(t);
            pr.part = part;
            if (tool_of_part[part] != npos) pr.other_tool = static_cast<std::int32_t>(tool_of_part[part]);
            f.pairs.push_back(pr);
        }
    }
}

namespace {

// Per tool and in total, the sums of the pairs in their order.
void sum_pairs(FrameResult& f) {
    f.force = {};
    f.torque = {};
    f.max_penetration = 0;
    f.parts_touched = 0;
    std::size_t contacts = 0;
    for (ToolResult& tr : f.tools) {
        tr.first_contact = contacts;
        for (std::size_t k = tr.first_pair; k < tr.first_pair + tr.pairs; ++k) {
            const PairResult& p = f.pairs[k];
            tr.contacts += p.contacts;
            tr.force = tr.force + p.force;
            tr.torque = tr.torque + p.torque;
            tr.max_penetration = std::max(tr.max_penetration, p.max_penetration);
            tr.parts_touched += p.contacts > 0;
            f.force = f.force + p.force;
            f.torque = f.torque + p.torque;
        }
        contacts += tr.contacts;
        f.max_penetration = std::max(f.max_penetration, tr.max_penetration);
        f.parts_touched += tr.parts_touched;
    }
}

}  // namespace

const FrameResult& SceneQuery::query(const Pose& pose) {
    State& s = *state_;
    if (s.tools.size() != 1) fail_usage("a frame of " + std::to_string(s.tools.size()) + " tools needs one pose per tool");
    if (s.frame_poses.size() != 1) s.frame_poses.resize(1);
    s.frame_poses[0] = pose;
    return query(s.frame_poses);
}

const FrameResult& SceneQuery::query(const std::vector<Pose>& poses) {
    State& s = *state_;
    FrameResult& f = s.frame;
    const std::size_t tools = s.tools.size();
    if (poses.size() != tools)
        fail_usage("a frame needs one pose per tool (" + std::to_string(tools) + " tools, " + std::to_string(poses.size()) + " poses)");
    const auto t0 = Clock::now();
    s.tool_placements.resize(tools > 1 ? tools : 0);
    for (std::size_t u = 0; u < s.tool_placements.size(); ++u)
        if (s.tools[u].slot != State::npos) s.tool_placements[u] = placement_of(poses[u]);
    s.gather_pairs(poses);
    const auto t1 = Clock::now();
    const std::size_t n = f.pairs.size();
    f.contacts.clear();
    f.ist_contacts.clear();
    QueryOptions opt = pair_options(n);
    if (s.threads == 1 || n < 2) {
        const auto deadline = t0 + std::chrono::nanoseconds(static_cast<long long>(std::min(s.options.budget_us, 1e12) * 1000));
        for (std::size_t k = 0; k < n; ++k) {
            if (s.options.mode == QueryMode::time_critical) {
                // The frame's remaining time, shared by the pairs left.
                const double left = std::max(0.0, elapsed_us(Clock::now(), deadline));
                opt.budget_us = left / static_cast<double>(n - k);
            }
            if (s.ist) {
                f.pairs[k].first_contact = f.ist_contacts.size();
                s.run_ist_pair(0, k, poses[f.pairs[k].tool], f.ist_contacts);
                continue;
            }
            f.pairs[k].first_contact = f.contacts.size();
            s.run_pair(0, k, poses[f.pairs[k].tool], opt, f.contacts);
        }
    } else {
        if (s.pair_contacts.size() < n) s.pair_contacts.resize(n);
        if (s.pair_ist_contacts.size() < n) s.pair_ist_contacts.resize(n);
        s.arena->execute([&] {
            tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 1), [&](const tbb::blocked_range<std::size_t>& range) {
                const int w = tbb::this_task_arena::current_thread_index();
                const std::size_t worker = w < 0 ? 0 : static_cast<std::size_t>(w);
                for (std::size_t k = range.begin(); k < range.end(); ++k) {
                    s.pair_contacts[k].clear();
                    s.pair_ist_contacts[k].clear();
                    if (s.ist) s.run_ist_pair(worker, k, poses[f.pairs[k].tool], s.pair_ist_contacts[k]);
                    else s.run_pair(worker, k, poses[f.pairs[k].tool], opt, s.pair_contacts[k]);
                }
            });
        });
        for (std::size_t k = 0; k < n; ++k) {
            f.pairs[k].first_contact = s.ist ? f.ist_contacts.size() : f.contacts.size();
            f.contacts.insert(f.contacts.end(), s.pair_contacts[k].begin(), s.pair_contacts[k].end());
            f.ist_contacts.insert(f.ist_contacts.end(), s.pair_ist_contacts[k].begin(), s.pair_ist_contacts[k].end());
        }
    }
    sum_pairs(f);
    const auto t2 = Clock::now();
    f.broad_us = elapsed_us(t0, t1);
    f.narrow_us = elapsed_us(t1, t2);
    f.frame_us = elapsed_us(t0, t2);
    return f;
}

const Scene& SceneQuery::scene() const { return state_->scene; }
const fs::path& SceneQuery::scene_path() const { return state_->scene_path; }
const QueryOptions& SceneQuery::options() const { return state_->options; }
int SceneQuery::threads() const { return state_->threads; }
std::size_t SceneQuery::tool_count() const { return state_->tools.size(); }
std::optional<std::size_t> SceneQuery::tool_part(std::size_t t) const { return state_->tools.at(t).part; }
const fs::path& SceneQuery::tool_file(std::size_t t) const { return state_->tools.at(t).file; }
const MovingObjectData& SceneQuery::tool(std::size_t t) const { return state_->tools.at(t).data; }
const fs::path& SceneQuery::tool_cfm_file(std::size_t t) const { return state_->tools.at(t).cfm_file; }
const SceneIst* SceneQuery::ist() const { return state_->ist ? &*state_->ist : nullptr; }
MovingObject SceneQuery::tool_view(std::size_t t) const { return state_->tools.at(t).view; }
bool SceneQuery::tool_has_field(std::size_t t) const { return state_->tools.at(t).slot != State::npos; }
Vec3d SceneQuery::tool_center(std::size_t t) const { return state_->tools.at(t).center; }
double SceneQuery::tool_radius(std::size_t t) const { return state_->tools.at(t).radius; }
std::string SceneQuery::tool_label(std::size_t t) const {
    const State::Tool& tool = state_->tools.at(t);
    return tool.part ? state_->scene.parts[*tool.part].name : tool.file.string();
}
const std::vector<std::uint32_t>& SceneQuery::static_parts() const { return state_->static_parts; }
const StaticField& SceneQuery::field(std::size_t part) const {
    const std::size_t slot = state_->part_slot.at(part);
    if (slot == State::npos) fail_usage("part " + std::to_string(part) + " is neither a static part of the scene nor a tool with a field");
    return state_->fields[slot];
}
const fs::path& SceneQuery::field_file(std::size_t part) const {
    const std::size_t slot = state_->part_slot.at(part);
    if (slot == State::npos) fail_usage("part " + std::to_string(part) + " is neither a static part of the scene nor a tool with a field");
    return state_->field_files[slot];
}
const Aabb& SceneQuery::reach(std::size_t part) const { return state_->reach.at(part); }
const BroadPhase& SceneQuery::broad_phase() const { return state_->broad; }
std::size_t SceneQuery::geometries_loaded() const { return state_->fields.size(); }
std::size_t SceneQuery::memory_bytes() const {
    std::size_t b = 0;
    for (const StaticField& f : state_->fields) b += f.field.memory_bytes();
    return b;
}
double SceneQuery::load_seconds() const { return state_->load_seconds; }
const LoadTimes& SceneQuery::load_times() const { return state_->load_times; }
std::vector<std::string> SceneQuery::warnings() const { return state_->warnings; }

}  // namespace hp::scene
