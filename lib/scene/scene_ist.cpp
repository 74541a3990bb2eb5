#include "scene/scene_ist.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "formats/octree.hpp"

namespace hp::scene {

namespace fs = std::filesystem;

namespace {

const char* const kNoOctree = "an octree: add the octree stage to the pipeline and run haptic-pipeline --assembly again";

// An octree file of the scene (verified first) or given; read errors name the part.
octree::Octree read_octree(const fs::path& file, const std::string& where) {
    try {
        return read_octree_file(file).tree;
    } catch (const Error& e) {
        if (where.empty()) throw;
        throw Error(e.code(), where + ": " + e.what());
    }
}

}  // namespace

struct SceneIst::State {
    IstSpec spec;
    std::vector<octree::Octree> slots, tools;  // sized once: the descents keep references
    std::vector<fs::path> slot_files, tool_files;
    // Per worker, tool and slot: the descent and the response (their scratch).
    struct Pair {
        std::optional<octree::IstQuery> ist;
        std::optional<octree::BruteQuery> brute;
        IstResponse respond;
    };
    std::vector<std::vector<std::vector<std::unique_ptr<Pair>>>> pairs;  // [worker][tool][slot]
};

SceneIst::SceneIst(const fs::path& scene_path, const Scene& scene, const IstSpec& spec, const std::vector<std::size_t>& slot_geometry,
                   const std::vector<std::string>& slot_part, const std::vector<const DistanceSampler*>& fields,
                   const std::vector<std::optional<std::size_t>>& tool_parts, const std::vector<ToolSpec>& tools, std::size_t workers)
    : state_(std::make_unique<State>()) {
    State& s = *state_;
    s.spec = spec;
    for (std::size_t t = 0; t < tools.size(); ++t)
        if (!tool_parts[t] && tools[t].octree_file.empty())
            fail_usage("the outside tool " + tools[t].tree_file.string() + " has no octree: give its file (haptic-octree of its mesh)");
    s.slots.resize(slot_geometry.size());
    s.slot_files.resize(slot_geometry.size());
    for (std::size_t k = 0; k < slot_geometry.size(); ++k) {
        const std::string where = part_where(scene_path, slot_part[k]);
        s.slot_files[k] = verified_geometry_file(scene_path, scene, slot_geometry[k], "octree", where, kNoOctree);
        s.slots[k] = read_octree(s.slot_files[k], where);
    }
    s.tools.resize(tools.size());
    s.tool_files.resize(tools.size());
    for (std::size_t t = 0; t < tools.size(); ++t) {
        if (!tool_parts[t]) {
            s.tool_files[t] = tools[t].octree_file;
            s.tools[t] = read_octree(s.tool_files[t], "");
            continue;
        }
        const ScenePart& p = scene.parts[*tool_parts[t]];
        const std::string where = part_where(scene_path, p.name);
        s.tool_files[t] = verified_geometry_file(scene_path, scene, p.geometry, "octree", where, kNoOctree);
        s.tools[t] = read_octree(s.tool_files[t], where);
    }
    s.pairs.resize(workers);
    for (auto& per_worker : s.pairs) {
        per_worker.resize(tools.size());
        for (std::size_t t = 0; t < tools.size(); ++t)
            for (std::size_t k = 0; k < slot_geometry.size(); ++k) {
                auto pair = std::make_unique<State::Pair>(State::Pair{{}, {}, IstResponse(*fields[k])});
                if (spec.brute) pair->brute.emplace(s.tools[t], s.slots[k]);
                else pair->ist.emplace(s.tools[t], s.slots[k], spec.descent);
                per_worker[t].push_back(std::move(pair));
            }
    }
}

SceneIst::SceneIst(SceneIst&&) noexcept = default;
SceneIst& SceneIst::operator=(SceneIst&&) noexcept = default;
SceneIst::~SceneIst() = default;

const std::vector<octree::IstContact>& SceneIst::run(std::size_t worker, std::size_t tool, std::size_t slot, const Pose& local,
                                                     std::size_t pairs, IstPairResult& out) {
    State::Pair& p = *state_->pairs[worker][tool][slot];
    if (const std::size_t n = state_->spec.descent.max_contacts; n > 0 && p.ist)
        p.ist->set_max_contacts(std::max<std::size_t>(1, n / std::max<std::size_t>(1, pairs)));
    const octree::Placement pl{rotation_rows(local.quaternion), local.position};
    out = {};
    if (p.brute) {
        const auto& c = (*p.brute)(pl);
        out.stats.voxel_tests = p.brute->voxel_tests();
        out.response = p.respond(c, local.position);
        return c;
    }
    const auto& c = (*p.ist)(pl);
    out.stats = p.ist->stats();
    out.response = p.respond(c, local.position);
    return c;
}

const IstSpec& SceneIst::spec() const { return state_->spec; }
const octree::Octree& SceneIst::slot_octree(std::size_t slot) const { return state_->slots.at(slot); }
const octree::Octree& SceneIst::tool_octree(std::size_t tool) const { return state_->tools.at(tool); }
const fs::path& SceneIst::slot_file(std::size_t slot) const { return state_->slot_files.at(slot); }
const fs::path& SceneIst::tool_file(std::size_t tool) const { return state_->tool_files.at(tool); }

octree::IstContact ist_contact_to_world(const Placement& placement, const octree::IstContact& c) {
    octree::IstContact w = c;
    w.moving_center = placement.apply(c.moving_center);
    w.fixed_center = placement.apply(c.fixed_center);
    return w;
}

}  // namespace hp::scene
