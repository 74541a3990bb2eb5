#include "scene/scene_sampler.hpp"

#include <cmath>
#include <string_view>

#include "core/error.hpp"
#include "core/hash.hpp"
#include "core/mapped_file.hpp"

namespace hp::scene {

namespace fs = std::filesystem;

StaticField map_scene_sampler(const fs::path& scene_path, const Scene& sc, std::size_t g, const std::string& kind) {
    const SceneGeometry& geometry = sc.geometries[g];
    const FileRef& ref = geometry.files.at("sampler");
    const fs::path file = scene_path.parent_path() / ref.file;
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) fail_scene_file(scene_path, sc, g, file, true);
    std::string part;
    for (const ScenePart& p : sc.parts)
        if (p.geometry == g) {
            part = p.name;
            break;
        }
    const std::string at_part = part_where(scene_path, part.empty() ? geometry.first_part : part);
    const std::string where = at_part + ": " + file.string();
    std::shared_ptr<const MappedFile> mapped;
    try {
        mapped = MappedFile::open(file);
    } catch (const Error& e) {
        throw Error(e.code(), at_part + ": " + e.what());
    }
    const std::string_view bytes = mapped->bytes();
    if (bytes.size() != ref.bytes || "xxh3:" + hex64(xxh3_64(bytes.data(), bytes.size())) != ref.hash)
        fail_scene_file(scene_path, sc, g, file, false);
    StaticField f = map_static_field(mapped, where);
    const FileRef& field = geometry.files.at(kind);
    const nlohmann::json& made = f.made_from;
    if (made.value("hash", "") != field.hash || made.value("bytes", std::uint64_t{0}) != field.bytes)
        fail_input("", where + ": made from another " + kind + " than " + field.file +
                           " (its record of the field differs from scene.json; prepare the scene again with "
                           "haptic-pipeline --assembly --resume)");
    const GridSpec& grid = f.field.grid();
    Aabb box;
    box.extend(grid.origin);
    box.extend(grid.origin + Vec3d{grid.dims[0] * grid.voxel_size, grid.dims[1] * grid.voxel_size, grid.dims[2] * grid.voxel_size});
    const Aabb& mesh = geometry.local_bounds;
    const double slack = grid.voxel_size;
    const bool holds = mesh.empty() || (mesh.min.x >= box.min.x - slack && mesh.min.y >= box.min.y - slack && mesh.min.z >= box.min.z - slack &&
                                        mesh.max.x <= box.max.x + slack && mesh.max.y <= box.max.y + slack && mesh.max.z <= box.max.z + slack);
    if ((sc.voxel_size > 0 && std::abs(grid.voxel_size - sc.voxel_size) > 1e-9 * sc.voxel_size) || !holds)
        fail_input("", where + ": its grid (voxel size " + std::to_string(grid.voxel_size) +
                           ") does not fit the scene's voxel size or the geometry's bounds (prepare the scene again with "
                           "haptic-pipeline --assembly)");
    return f;
}

}  // namespace hp::scene
