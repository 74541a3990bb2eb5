#pragma once
// lib/query/session — the query as a library: load the two files once, then one query per pose
// in the caller's own loop (a 1 kHz haptic thread), without allocating. The entry point of the
// installed package (`#include <hapticprep/query/session.hpp>`; README, "Library use").
//
//   hp::QuerySession session("part.dist.vdb", "tool.hps", {.mode = hp::QueryMode::full});
//   for (;;) {
//       const hp::QueryResult& r = session.query(pose_now());  // valid until the next query
//       apply(r.force, r.torque);
//   }
//
// Files: static = haptic-distance field or haptic-voxelize voxelmap (static_field.hpp); moving =
// haptic-spheretree file, optionally with its haptic-cfm map (attach_cfm). Modes and results:
// contact/query.hpp.
// Allocation: the first queries grow the contact buffer to the largest contact count they meet;
// after that no query allocates. Threads: queries run on the calling thread; one session per thread.
#include <filesystem>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "math/vec.hpp"
#include "contact/query.hpp"
#include "query/static_field.hpp"
#include "spheretree/tree.hpp"

namespace hp {

// The moving object as loaded from its file: owns what a MovingObject views.
struct MovingObjectData {
    std::vector<Vec3d> points;   // body frame, world units
    std::vector<Vec3d> normals;  // unit, inward
    PointSphereTree tree;
    nlohmann::json metadata;     // the file's provenance
    std::shared_ptr<const cfm::ClosestFeatureMap> cfm;  // optional (attach_cfm)
    nlohmann::json cfm_metadata;                        // the CFM file's provenance, when attached
    // A view for VpsQuery and the scenario functions; valid while this object lives unmoved.
    MovingObject view() const { return {points, normals, &tree, cfm.get()}; }
};

// Reads a point-sphere tree file (haptic-spheretree): checksums and every structural check of
// read_shell_file. Throws hp::Error(bad_input) naming the file for a damaged file, a file of
// another kind, or a pointshell without a tree.
MovingObjectData load_moving_object(const std::filesystem::path& path);

// Reads a closest feature map file (haptic-cfm) and attaches it to `moving` (loaded from
// `moving_path`, named in messages). Throws hp::Error(bad_input) for a damaged file
// (read_cfm_file) or one that is not this tree's (check_cfm_matches_tree, contact/cfm_contacts.hpp).
void attach_cfm(MovingObjectData& moving, const std::filesystem::path& cfm_path,
                const std::filesystem::path& moving_path);

class QuerySession {
public:
    // Loads both files and checks them: the file checks of load_static_field and
    // load_moving_object, and that the tree's spheres hold all its points (tree_covers_points,
    // which makes the traversal exact). Throws hp::Error: bad_input for a file that fails, usage
    // for options the tree does not allow (a segmentation level beyond its depth).
    QuerySession(const std::filesystem::path& static_path, const std::filesystem::path& moving_path,
                 const QueryOptions& options = {});
    // The same with the moving object's closest feature map (attach_cfm); an empty `cfm_path`
    // means none. A CFM with another mode than time_critical: hp::Error(usage), before loading.
    QuerySession(const std::filesystem::path& static_path, const std::filesystem::path& moving_path,
                 const QueryOptions& options, const std::filesystem::path& cfm_path);
    QuerySession(QuerySession&&) noexcept;
    QuerySession& operator=(QuerySession&&) noexcept;
    ~QuerySession();

    // One query; the result stays valid until the next call (or the session's end).
    const QueryResult& query(const Pose& pose);

    const QueryOptions& options() const;
    const StaticField& static_object() const;
    const MovingObjectData& moving_object() const;

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace hp
