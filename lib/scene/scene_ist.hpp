#pragma once
// lib/scene/scene_ist — the ist modes of a scene query (docs/scene.md, "Octrees").
//
// Per pair, the moving tool's octree against the octree of the part on the other side (a static
// part's geometry, or another tool's), descended together at the pose composed into that part's
// frame (octree/ist.hpp; ist-brute: every voxel pair in reach), the normals and the force from that
// part's field (IstResponse, query/ist_check.hpp): what haptic-query --mode ist computes on that
// part's files. The stop level and the one-child and side optimizations are each pair's, as for a
// pair; the contact count of the early stop (IstOptions::max_contacts) is the frame's, shared by
// its k pairs as the time-critical budgets are: each stops at max(1, count / k) (`run`).
// Files: each field slot's geometry's "octree" file of scene.json and each tool part's, verified by
// size and hash before they are read; an outside tool's octree file is given (ToolSpec::octree_file).
// Each octree is loaded once; each worker has one descent per tool and slot (its scratch).
// Errors: hp::Error(bad_input) "SCENE: part 'P': ..." for a geometry without an octree file (add
// the octree stage), a file missing, changed or refused by its reader; the outside tool's file's
// own message. hp::Error(usage) for an outside tool without its octree.
#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "contact/query.hpp"
#include "octree/ist.hpp"
#include "octree/octree.hpp"
#include "query/ist_check.hpp"
#include "scene/scene_file.hpp"
#include "scene/scene_tool.hpp"

namespace hp::scene {

struct IstSpec {
    bool on = false;             // the pairs are octree descents (modes ist and ist-brute), not VPS queries
    bool brute = false;          // ist-brute: every voxel pair in reach, tested directly
    octree::IstOptions descent;  // ist: each pair's descent
};

// One ist pair's figures, in the frame of the part on the other side.
struct IstPairResult {
    IstForce response;  // contacts, deepest overlap, force and torque (about the tool's origin)
    octree::IstStats stats;
};

class SceneIst {
public:
    // `slot_geometry[k]`: the geometry of field slot k (its field `fields[k]` gives the normals);
    // `slot_part[k]`: a part of it that messages name. `tools`: each tool's part (none: outside)
    // with its spec. `workers`: the threads that run pairs.
    SceneIst(const std::filesystem::path& scene_path, const Scene& scene, const IstSpec& spec,
             const std::vector<std::size_t>& slot_geometry, const std::vector<std::string>& slot_part,
             const std::vector<const DistanceSampler*>& fields, const std::vector<std::optional<std::size_t>>& tool_parts,
             const std::vector<ToolSpec>& tools, std::size_t workers);
    SceneIst(SceneIst&&) noexcept;
    SceneIst& operator=(SceneIst&&) noexcept;
    ~SceneIst();

    // Tool t against field slot `slot` at `local` (the tool's pose in that slot's frame), one of
    // the frame's `pairs` pairs. The contacts (that frame) stay valid until this worker's next call.
    const std::vector<octree::IstContact>& run(std::size_t worker, std::size_t tool, std::size_t slot, const Pose& local,
                                               std::size_t pairs, IstPairResult& out);

    const IstSpec& spec() const;
    const octree::Octree& slot_octree(std::size_t slot) const;
    const octree::Octree& tool_octree(std::size_t tool) const;
    const std::filesystem::path& slot_file(std::size_t slot) const;
    const std::filesystem::path& tool_file(std::size_t tool) const;

private:
    struct State;
    std::unique_ptr<State> state_;
};

// An ist contact of a part's frame in the world: both centres placed, the rest kept.
octree::IstContact ist_contact_to_world(const Placement& placement, const octree::IstContact& c);

}  // namespace hp::scene
