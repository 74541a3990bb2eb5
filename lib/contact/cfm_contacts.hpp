#pragma once
// lib/contact/cfm_contacts — contacts from a closest feature map (Giang & O'Sullivan 2006, section
// 3.1) for the clusters an interrupted time-critical traversal leaves queued (query.hpp).
//
// In: the field, the map (body frame, outward normals), a queued cluster whose sphere collides,
// the pose. Out: at most one contact: direction d = grad V(X) normalised (into the static object),
// the map's record nearest to R^T d, normal R (-record normal), position R q + t (store full) or
// X + r d (store normal), value V(position), kept when > 0. Each such contact weighs as one point.
// Cost: a gradient, one map lookup (constant time) and V at the position: a few cold reads.
// The map must be the tree's (check_cfm_matches_tree). Why these choices: docs/query.md.
#include <array>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "math/vec.hpp"
#include "field/field.hpp"
#include "contact/query.hpp"
#include "spheretree/tree.hpp"

namespace hp {

// Appends the CFM contact of cluster `cluster` (its sphere as the map stores it, body frame) at the
// pose (rows of R, and t) to `out` when there is one; returns whether it did. The caller has
// checked that the sphere collides and that `cluster` < map.spheres.size().
bool add_cfm_contact(const DistanceSampler& field, const cfm::ClosestFeatureMap& map, std::uint32_t cluster,
                     const std::array<Vec3d, 3>& rot, const Vec3d& t, std::vector<Contact>& out);

// Throws hp::Error(bad_input) "CFM: does not match the tree TREE: WHAT (rebuild it with haptic-cfm
// from this tree)" unless the map has one sphere per cluster with the cluster's level, centre and
// radius (equal to 1e-12 relative: both files store doubles copied from the same tree), and, when
// both metadata record it, the CFM's `tree_source_hash` equals the tree's `source_hash`.
void check_cfm_matches_tree(const cfm::ClosestFeatureMap& map, const nlohmann::json& cfm_metadata,
                            const std::string& cfm_name, const PointSphereTree& tree,
                            const nlohmann::json& tree_metadata, const std::string& tree_name);

}  // namespace hp
