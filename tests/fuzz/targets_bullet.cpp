// Fuzz entries of lib/bullet's readers (built only with Bullet): haptic-sim's scene file and the
// HACD cache file. The scene's invariants are those the simulation relies on after load_scene;
// a decomposition taken from the cache must hold non-empty hulls of finite points, as HACD gives.
#include <cmath>

#include "bullet/hacd.hpp"
#include "bullet/sim.hpp"
#include "core/hash.hpp"
#include "fuzz_targets.hpp"

namespace hp::fuzz {

void bullet_scene(const std::uint8_t* data, std::size_t size) {
    const auto path = scratch_file("sim-scene.json", std::string_view(reinterpret_cast<const char*>(data), size));
    bullet::Scene s;
    if (!refused_or_ran([&] { s = bullet::load_scene(path); })) return;
    if (s.rates.empty()) violated("bullet_scene", "a scene without a rate was accepted");
    for (double r : s.rates)
        if (!(r > 0) || !std::isfinite(r)) violated("bullet_scene", "a rate that is not a positive number was accepted");
    if (s.steps < 1) violated("bullet_scene", "a scene without steps was accepted");
    for (const bullet::SceneObject& o : s.objects) {
        if (o.shape == bullet::SceneObject::Shape::plane && !(std::abs(length(o.normal) - 1) < 1e-9))
            violated("bullet_scene", "a plane normal that is not of unit length was accepted");
        double n = 0;
        for (double c : o.quaternion) n += c * c;
        if (!(std::abs(n - 1) < 1e-9)) violated("bullet_scene", "a quaternion that is not of unit length was accepted");
    }
    refused_or_ran([&] { bullet::copy_counts(s); });
}

// The input is the cache file of a tetrahedron's decomposition with the default parameters.
void hacd_cache(const std::uint8_t* data, std::size_t size) {
    static const TriMesh tetrahedron{{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}}, {{0, 2, 1}, {0, 1, 3}, {0, 3, 2}, {1, 2, 3}}};
    const std::string mesh_key = "fuzz-tetrahedron";
    const bullet::HacdParams params;
    const nlohmann::json key = {{"mesh", mesh_key}, {"clusters", params.clusters},
                                {"max_vertices", params.max_vertices}, {"concavity", params.concavity}};
    const auto cache = scratch_dir() / "hacd-cache";
    std::filesystem::create_directories(cache);
    const std::string name = "hacd-" + hex64(hash64(key.dump())) + ".json";
    scratch_file("hacd-cache/" + name, std::string_view(reinterpret_cast<const char*>(data), size));
    std::vector<std::vector<Vec3d>> hulls;
    if (!refused_or_ran([&] { hulls = bullet::hacd_decomposition(tetrahedron, mesh_key, params, cache, nullptr); })) return;
    if (hulls.empty()) violated("hacd_cache", "no hull");
    for (const auto& h : hulls) {
        if (h.empty()) violated("hacd_cache", "an empty hull");
        for (const Vec3d& p : h)
            if (!std::isfinite(p.x) || !std::isfinite(p.y) || !std::isfinite(p.z)) violated("hacd_cache", "a hull point is not finite");
    }
}

}  // namespace hp::fuzz
