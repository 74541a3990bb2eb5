// The entry points of the module hapticprep_vdb.so (formats/vdb_module.hpp): the table of
// formats/vdb's OpenVDB code, for the programs' vdb_loader.cpp.
#include "formats/vdb_module.hpp"

#include "core/module.hpp"
#include "formats/vdb_internal.hpp"

namespace hp::vdb::detail {
namespace {

const ModuleApi kApi{
    .write = &hp::vdb::write,
    .open = &Reader::open,
    .value_type = [](const Reader& r, const std::string& name) { return r.value_type(name); },
    .read_slices = [](const Reader& r, const std::string& name, ValueType type,
                      const std::function<void(int, const void*)>& sink) { r.read_slices(name, type, sink); },
    .read_int32 = [](const Reader& r, const std::string& name) { return r.read_int32(name); },
    .read_real = [](const Reader& r, const std::string& name) { return r.read_real(name); },
    .read_distance = [](const Reader& r) { return r.read_distance(); },
    .read_blocks = [](const Reader& r, const std::string& name, ValueType type,
                      const std::function<void(std::size_t, const void*, const void*)>& sink) {
        r.read_blocks(name, type, sink);
    },
    .read_int32_bricks = [](const Reader& r, const std::string& name) { return r.read_int32_bricks(name); },
    .read_int16_bricks = [](const Reader& r, const std::string& name, std::int32_t limit, bool* clamped) {
        return r.read_int16_bricks(name, limit, clamped);
    },
    .read_distance_bricks = [](const Reader& r) { return r.read_distance_bricks(); },
    .stored_grid = [](const Reader& r, const std::string& name) { return r.stored_grid(name); },
    .stored_background = &hp::vdb::stored_background,
    .leaves_incompressible = &leaves_incompressible,
    .levelset_new = [](const GridSpec& grid, const LevelSetOptions& options) -> void* {
        return new LevelSetWriter(grid, options);
    },
    .levelset_free = [](void* w) { delete static_cast<LevelSetWriter*>(w); },
    .levelset_add_slice = [](void* w, int z, const float* phi) { static_cast<LevelSetWriter*>(w)->add_slice(z, phi); },
    .levelset_write = [](void* w, const std::filesystem::path& path, const std::string& creator,
                         const Progress& progress) { static_cast<LevelSetWriter*>(w)->write(path, creator, progress); },
    .levelset_active_voxels = [](const void* w) { return static_cast<const LevelSetWriter*>(w)->active_voxels(); },
};

}  // namespace
}  // namespace hp::vdb::detail

extern "C" __attribute__((visibility("default"))) const char* hp_vdb_abi_v1() {
    static const std::string key = hp::vdb::detail::module_abi_key();
    return key.c_str();
}

extern "C" __attribute__((visibility("default"))) const hp::vdb::detail::ModuleApi* hp_vdb_api_v1(
    hp::AtomicFileState* program) {
    hp::share_atomic_file_state(program);
    return &hp::vdb::detail::kApi;
}
