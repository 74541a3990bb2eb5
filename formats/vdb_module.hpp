#pragma once
// Internal to formats/vdb: the table of functions through which the programs reach the OpenVDB
// code of formats/vdb (vdb_read.cpp, vdb_write.cpp, vdb_levelset.cpp...) when it is built into
// the module hapticprep_vdb.so (CMake option HP_VDB_MODULE, on by default): vdb_module.cpp fills
// the table inside the module, vdb_loader.cpp loads the module on the first call that needs
// OpenVDB and forwards formats/vdb.hpp's functions to it. A program that reads or writes no VDB
// file never loads OpenVDB (about 60,000 symbol relocations at start). No OpenVDB here.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/version.hpp"
#include "formats/vdb.hpp"
#include "formats/vdb_levelset.hpp"

namespace hp {
struct AtomicFileState;
}

namespace hp::vdb::detail {

struct ModuleApi {
    void (*write)(const std::filesystem::path&, const GridSpec&, const std::vector<GridOut>&, const nlohmann::json&,
                  const std::string&, const WriteOptions&, const Progress&);
    Reader (*open)(const std::filesystem::path&, bool deep);
    std::string (*value_type)(const Reader&, const std::string&);
    void (*read_slices)(const Reader&, const std::string&, ValueType, const std::function<void(int, const void*)>&);
    std::vector<std::int32_t> (*read_int32)(const Reader&, const std::string&);
    std::vector<double> (*read_real)(const Reader&, const std::string&);
    std::vector<double> (*read_distance)(const Reader&);
    void (*read_blocks)(const Reader&, const std::string&, ValueType,
                        const std::function<void(std::size_t, const void*, const void*)>&);
    BrickField<std::int32_t> (*read_int32_bricks)(const Reader&, const std::string&);
    BrickField<std::int16_t> (*read_int16_bricks)(const Reader&, const std::string&, std::int32_t, bool*);
    BrickField<double> (*read_distance_bricks)(const Reader&);
    std::shared_ptr<const StoredGrid> (*stored_grid)(const Reader&, const std::string&);
    double (*stored_background)(const StoredGrid&);
    std::uint64_t (*leaves_incompressible)();
    // LevelSetWriter: an opaque writer made and freed inside the module.
    void* (*levelset_new)(const GridSpec&, const LevelSetOptions&);
    void (*levelset_free)(void*);
    void (*levelset_add_slice)(void*, int, const float*);
    void (*levelset_write)(void*, const std::filesystem::path&, const std::string&, const Progress&);
    std::size_t (*levelset_active_voxels)(const void*);
};

// What the module and the program must agree on: the version and the layouts they pass.
inline std::string module_abi_key() {
    return std::string(kVersion) + "/vdb/" + std::to_string(sizeof(ModuleApi)) + "/" + std::to_string(sizeof(Reader)) +
           "/" + std::to_string(sizeof(FileInfo)) + "/" + std::to_string(sizeof(GridOut)) + "/" +
           std::to_string(sizeof(GridSpec)) + "/" + std::to_string(sizeof(BrickField<double>)) + "/" +
           std::to_string(sizeof(nlohmann::json)) + "/" + std::to_string(sizeof(Progress));
}

}  // namespace hp::vdb::detail

// The module's entry points (vdb_module.cpp): its ABI key, and its table, given the program's
// state of atomic writes (core/atomic_file.hpp), which the module then shares.
extern "C" const char* hp_vdb_abi_v1();
extern "C" const hp::vdb::detail::ModuleApi* hp_vdb_api_v1(hp::AtomicFileState* program);
