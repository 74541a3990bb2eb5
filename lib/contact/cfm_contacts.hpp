#pragma once
// lib/query/cfm_contacts — contacts from a closest feature map (paper 003) for the clusters an
// interrupted time-critical traversal leaves undescended (query.hpp, mode time_critical).
//
// Paper 003 section 3.1: when a sphere of the tree is in collision but there is no time to
// descend, approximate the contact point, take the sample of the sphere's map nearest to it, and
// use the closest feature's normal recorded there as the contact normal. Its contact point is
// Dingliana and O'Sullivan's, on the line between the two spheres' centres; our static object is
// a distance field, so the line through the centre X becomes the steepest ascent of V:
//   d      = grad V(X) / |grad V(X)|   (DistanceSampler::gradient; points into the static object)
//   record = map.lookup(cluster, R^T d)        (body frame, constant time)
//   normal = R (-n_record)                     (the map keeps outward normals; a contact's normal
//                                               is the moving object's inward one, query.hpp)
//   P      = R q_record + t when the map keeps closest points (store full), else X + r d
//            (the sphere's point deepest along d)
//   value  = V(P); a contact only when V(P) > 0.
// A cluster whose gradient vanishes (no direction) or whose record's normal is zero gives none.
// Which clusters: the ones still in the queue when the traversal hands over (query.hpp,
// time_critical: early enough for the queue to fit in the budget), coarsest first until the
// budget is spent, and whose sphere collides (the traversal's sphere test). The traversal already
// evaluates that bound there for the separation bound, so the test costs no extra lookup. The
// queued clusters are the finest regions the traversal reached: disjoint subtrees that hold every
// unvisited cluster that may still collide (the rest was pruned). Their already tested parents
// would be coarser and stand for regions whose parent point is already a contact. Each CFM
// contact weighs as one point (the paper's one contact per colliding sphere pair), whatever the
// number of points below the cluster.
// Cost: per queued sphere its sphere test, and per colliding one (many more than give a contact)
// the gradient at X, V(P) and the map lookup: 0.3-0.5 us of cold reads on the paper's case, which
// the traversal's hand-over reserves time for (query.hpp). bench_query's query-tc-dir rows measure
// the latencies and the force direction against the full mode's, with the map's normals and, for
// the same contacts, with the sphere-geometry normal -grad V(X) (paper 003's baseline).
//
// The map must be the tree's (check_cfm_matches_tree): one sphere per cluster, same levels,
// centres and radii, built for a tree of the same source.
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
