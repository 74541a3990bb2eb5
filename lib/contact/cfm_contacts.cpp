#include "contact/cfm_contacts.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "cfm/cfm.hpp"
#include "core/error.hpp"

namespace hp {

bool add_cfm_contact(const DistanceSampler& field, const cfm::ClosestFeatureMap& map, std::uint32_t cluster,
                     const std::array<Vec3d, 3>& rot, const Vec3d& t, std::vector<Contact>& out) {
    const cfm::Sphere& sp = map.spheres[cluster];
    auto turn = [&](const Vec3d& v) { return Vec3d{dot(rot[0], v), dot(rot[1], v), dot(rot[2], v)}; };
    const Vec3d x = turn(sp.center) + t;
    const Vec3d g = field.gradient(x);
    const double glen = length(g);
    if (!(glen > 0) || !std::isfinite(glen)) return false;
    const Vec3d d = g / glen;
    // R^T d: the rows of R weighted by d's components.
    const Vec3d body = rot[0] * d[0] + rot[1] * d[1] + rot[2] * d[2];
    const std::size_t r = map.lookup(cluster, body);
    const auto& n = map.normals[r];
    const Vec3d outward{n[0], n[1], n[2]};
    if (!(length2(outward) > 0)) return false;
    const Vec3d p = map.store == cfm::Store::full ? turn(map.points[r]) + t : x + d * sp.radius;
    const double v = field.value(p);
    if (!(v > 0)) return false;
    Contact c;
    c.point = Contact::kNoPoint;
    c.position = p;
    c.normal = turn(-normalized(outward));
    c.value = v;
    c.cluster = static_cast<std::int32_t>(cluster);
    out.push_back(c);
    return true;
}

namespace {
std::string vec_text(const Vec3d& v) {
    char b[96];
    std::snprintf(b, sizeof b, "(%.17g, %.17g, %.17g)", v.x, v.y, v.z);
    return b;
}
std::string num_text(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.17g", v);
    return b;
}
bool close(double a, double b, double scale) { return std::abs(a - b) <= 1e-12 * scale; }
}  // namespace

void check_cfm_matches_tree(const cfm::ClosestFeatureMap& map, const nlohmann::json& cfm_metadata,
                            const std::string& cfm_name, const PointSphereTree& tree,
                            const nlohmann::json& tree_metadata, const std::string& tree_name) {
    auto mismatch = [&](const std::string& what) {
        fail_input(cfm_name, "does not match the tree " + tree_name + ": " + what +
                                 " (rebuild the CFM with haptic-cfm from this tree)");
    };
    auto text = [](const nlohmann::json& j, const char* key) -> std::string {
        return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
    };
    const std::string recorded = text(cfm_metadata, "tree_source_hash"), actual = text(tree_metadata, "source_hash");
    if (!recorded.empty() && !actual.empty() && recorded != actual)
        mismatch("the CFM was built for a tree of source hash " + recorded + ", this tree's source hash is " + actual);
    if (map.spheres.size() != tree.clusters.size())
        mismatch(std::to_string(map.spheres.size()) + " spheres in the CFM, " + std::to_string(tree.clusters.size()) +
                 " clusters in the tree");
    for (std::size_t i = 0; i < tree.clusters.size(); ++i) {
        const cfm::Sphere& s = map.spheres[i];
        const TreeCluster& c = tree.clusters[i];
        const std::string which = "sphere " + std::to_string(i);
        if (s.level != c.level)
            mismatch(which + " is on level " + std::to_string(s.level) + " in the CFM, " + std::to_string(c.level) +
                     " in the tree");
        const double scale = std::max({std::abs(c.sphere.center.x), std::abs(c.sphere.center.y),
                                       std::abs(c.sphere.center.z), c.sphere.radius, 1e-300});
        if (!close(s.center.x, c.sphere.center.x, scale) || !close(s.center.y, c.sphere.center.y, scale) ||
            !close(s.center.z, c.sphere.center.z, scale))
            mismatch(which + " has centre " + vec_text(s.center) + " in the CFM, " + vec_text(c.sphere.center) +
                     " in the tree");
        if (!close(s.radius, std::max(0.0, c.sphere.radius), scale))
            mismatch(which + " has radius " + num_text(s.radius) + " in the CFM, " + num_text(c.sphere.radius) +
                     " in the tree");
    }
}

}  // namespace hp
