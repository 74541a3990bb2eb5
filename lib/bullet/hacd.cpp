// HACD convex decomposition with its on-disk cache (hacd.hpp).
#include <system_error>

#include <nlohmann/json.hpp>

#if HP_HAVE_HACD
#include <HACD/hacdHACD.h>
#endif

#include "bullet/hacd.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/hash.hpp"

namespace hp::bullet {

namespace {

std::vector<std::vector<Vec3d>> compute(const TriMesh& mesh, const HacdParams& params) {
#if HP_HAVE_HACD
    std::vector<HACD::Vec3<HACD::Real>> points;
    std::vector<HACD::Vec3<long>> triangles;
    points.reserve(mesh.vertices.size());
    for (const Vec3d& v : mesh.vertices) points.emplace_back(v.x, v.y, v.z);
    for (const auto& t : mesh.triangles) triangles.emplace_back(long(t[0]), long(t[1]), long(t[2]));
    HACD::HACD hacd;
    hacd.SetPoints(points.data());
    hacd.SetNPoints(points.size());
    hacd.SetTriangles(triangles.data());
    hacd.SetNTriangles(triangles.size());
    // The settings of Bullet's convex decomposition demo, with the clusters and hull size given.
    hacd.SetCompacityWeight(0.1);
    hacd.SetVolumeWeight(0.0);
    hacd.SetNClusters(static_cast<std::size_t>(params.clusters));
    hacd.SetNVerticesPerCH(static_cast<std::size_t>(params.max_vertices));
    hacd.SetConcavity(params.concavity);
    hacd.SetAddExtraDistPoints(false);
    hacd.SetAddNeighboursDistPoints(false);
    hacd.SetAddFacesPoints(false);
    hacd.Compute();
    std::vector<std::vector<Vec3d>> hulls;
    for (std::size_t c = 0; c < hacd.GetNClusters(); ++c) {
        std::vector<HACD::Vec3<HACD::Real>> p(hacd.GetNPointsCH(c));
        std::vector<HACD::Vec3<long>> t(hacd.GetNTrianglesCH(c));
        if (p.empty()) continue;
        hacd.GetCH(c, p.data(), t.data());
        std::vector<Vec3d> hull;
        for (const auto& q : p) hull.push_back({q.X(), q.Y(), q.Z()});
        hulls.push_back(std::move(hull));
    }
    return hulls;
#else
    (void)mesh;
    (void)params;
    fail_usage("method 'hacd': this build has no HACD (libbullet-extras-dev; scripts/install-deps.sh installs it)");
#endif
}

}  // namespace

std::vector<std::vector<Vec3d>> hacd_decomposition(const TriMesh& mesh, const std::string& mesh_key,
                                                   const HacdParams& params, const std::filesystem::path& cache_dir,
                                                   const std::function<void(const std::string&)>& note) {
    const nlohmann::json key = {{"mesh", mesh_key}, {"clusters", params.clusters},
                                {"max_vertices", params.max_vertices}, {"concavity", params.concavity}};
    std::filesystem::path file;
    if (!cache_dir.empty()) {
        file = cache_dir / ("hacd-" + hex64(hash64(key.dump())) + ".json");
        std::error_code ec;
        if (std::filesystem::is_regular_file(file, ec)) {
            const nlohmann::json j = nlohmann::json::parse(read_file(file), nullptr, false);
            if (!j.is_discarded() && j.is_object() && j.value("key", nlohmann::json()) == key && j.contains("hulls") &&
                j["hulls"].is_array() && !j["hulls"].empty()) {
                std::vector<std::vector<Vec3d>> hulls;
                bool ok = true;
                for (const auto& h : j["hulls"]) {
#ifdef HP_FUZZ_CANARY
                    // The fuzzing canary (docs/fuzzing.md): the length check below, left out.
                    if (h.is_array() && h.size() % 3 != 0) __builtin_trap();
#endif
                    if (!h.is_array() || h.empty() || h.size() % 3 != 0) { ok = false; break; }
                    std::vector<Vec3d> hull;
                    for (std::size_t i = 0; i < h.size(); i += 3) {
                        if (!h[i].is_number() || !h[i + 1].is_number() || !h[i + 2].is_number()) { ok = false; break; }
                        hull.push_back({h[i].get<double>(), h[i + 1].get<double>(), h[i + 2].get<double>()});
                    }
                    hulls.push_back(std::move(hull));
                }
                if (ok) {
                    if (note) note("hacd: cached decomposition " + file.string());
                    return hulls;
                }
            }
            if (note) note("hacd: " + file.string() + " does not hold this decomposition; recomputing");
        }
    }
    if (note) note("hacd: decomposing " + std::to_string(mesh.triangles.size()) + " triangles (minutes for large meshes)");
    std::vector<std::vector<Vec3d>> hulls = compute(mesh, params);
    if (hulls.empty()) fail_input(mesh_key, "HACD gave no convex hull");
    if (!file.empty()) {
        nlohmann::json j = {{"key", key}, {"hulls", nlohmann::json::array()}};
        for (const auto& h : hulls) {
            nlohmann::json a = nlohmann::json::array();
            for (const Vec3d& p : h) a.insert(a.end(), {p.x, p.y, p.z});
            j["hulls"].push_back(a);
        }
        std::error_code ec;
        std::filesystem::create_directories(cache_dir, ec);
        if (ec) fail_write(cache_dir.string(), "cannot create the cache folder: " + ec.message());
        write_file_atomically(file, j.dump() + "\n");
    }
    return hulls;
}

}  // namespace hp::bullet
