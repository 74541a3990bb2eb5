// formats/vdb.hpp's OpenVDB functions in a program built with HP_VDB_MODULE: each loads the module
// hapticprep_vdb.so on first use (core/module.hpp) and forwards to its table
// (formats/vdb_module.hpp). The module's own copy of this code is never this file.
#include <utility>

#include "core/error.hpp"
#include "core/module.hpp"
#include "formats/vdb_module.hpp"

namespace hp::vdb {

namespace {

// The module's table; throws hp::Error(bad_input) naming `what` (the file being read or written)
// when the module cannot be loaded.
const detail::ModuleApi& api(const std::filesystem::path& what) {
    static const std::pair<const detail::ModuleApi*, std::string> loaded = [] {
        const ModuleHandle m =
            load_module("hapticprep_vdb.so", "HP_VDB_MODULE", "hp_vdb_abi_v1", detail::module_abi_key());
        using Entry = const detail::ModuleApi* (*)(AtomicFileState*);
        const auto entry = reinterpret_cast<Entry>(module_symbol(m, "hp_vdb_api_v1"));
        if (!entry) return std::pair<const detail::ModuleApi*, std::string>{nullptr, m.handle ? m.path.string() + " lacks its entry hp_vdb_api_v1" : m.error};
        return std::pair<const detail::ModuleApi*, std::string>{entry(atomic_file_state()), ""};
    }();
    if (!loaded.first)
        fail_input(what.string(), "needs OpenVDB, and this installation cannot load it: " + loaded.second +
                                      " (reinstall hapticprep)");
    return *loaded.first;
}

}  // namespace

void write(const std::filesystem::path& path, const GridSpec& grid, const std::vector<GridOut>& grids,
           const nlohmann::json& metadata, const std::string& creator, const WriteOptions& options,
           const Progress& progress) {
    api(path).write(path, grid, grids, metadata, creator, options, progress);
}

Reader Reader::open(const std::filesystem::path& path, bool deep) { return api(path).open(path, deep); }

std::string Reader::value_type(const std::string& name) const { return api(path_).value_type(*this, name); }

void Reader::read_slices(const std::string& name, ValueType type,
                         const std::function<void(int z, const void* values)>& sink) const {
    api(path_).read_slices(*this, name, type, sink);
}

std::vector<std::int32_t> Reader::read_int32(const std::string& name) const { return api(path_).read_int32(*this, name); }

std::vector<double> Reader::read_real(const std::string& name) const { return api(path_).read_real(*this, name); }

std::vector<double> Reader::read_distance() const { return api(path_).read_distance(*this); }

void Reader::read_blocks(const std::string& name, ValueType type,
                         const std::function<void(std::size_t block, const void* brick, const void* tile)>& sink) const {
    api(path_).read_blocks(*this, name, type, sink);
}

BrickField<std::int32_t> Reader::read_int32_bricks(const std::string& name) const {
    return api(path_).read_int32_bricks(*this, name);
}

BrickField<std::int16_t> Reader::read_int16_bricks(const std::string& name, std::int32_t limit, bool* clamped) const {
    return api(path_).read_int16_bricks(*this, name, limit, clamped);
}

BrickField<double> Reader::read_distance_bricks() const { return api(path_).read_distance_bricks(*this); }

std::shared_ptr<const detail::StoredGrid> Reader::stored_grid(const std::string& name) const {
    return api(path_).stored_grid(*this, name);
}

// A StoredGrid exists only once the module has made it.
double stored_background(const detail::StoredGrid& grid) { return api("hapticprep_vdb.so").stored_background(grid); }

namespace detail {
std::uint64_t leaves_incompressible() { return api("hapticprep_vdb.so").leaves_incompressible(); }
}  // namespace detail

// The writer inside the module, freed there.
struct LevelSetWriter::Impl {
    void* writer = nullptr;
    ~Impl() {
        if (writer) api("hapticprep_vdb.so").levelset_free(writer);
    }
};

LevelSetWriter::LevelSetWriter(const GridSpec& grid, const LevelSetOptions& options) : impl_(std::make_unique<Impl>()) {
    impl_->writer = api("hapticprep_vdb.so").levelset_new(grid, options);
}

LevelSetWriter::~LevelSetWriter() = default;

void LevelSetWriter::add_slice(int z, const float* phi) { api("hapticprep_vdb.so").levelset_add_slice(impl_->writer, z, phi); }

void LevelSetWriter::write(const std::filesystem::path& path, const std::string& creator, const Progress& progress) {
    api(path).levelset_write(impl_->writer, path, creator, progress);
}

std::size_t LevelSetWriter::active_voxels() const { return api("hapticprep_vdb.so").levelset_active_voxels(impl_->writer); }

}  // namespace hp::vdb
