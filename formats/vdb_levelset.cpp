// Includes OpenVDB (only formats/vdb*.cpp do); see formats/vdb_levelset.hpp.
#include "formats/vdb_levelset.hpp"

#include <cassert>
#include <cmath>

#include <openvdb/io/File.h>
#include <openvdb/openvdb.h>
#include <openvdb/tools/Prune.h>
#include <openvdb/tools/SignedFloodFill.h>

#include "core/atomic_file.hpp"
#include "core/error.hpp"

namespace hp::vdb {

struct LevelSetWriter::Impl {
    GridSpec spec;
    float background = 0;
    openvdb::FloatGrid::Ptr grid;
    std::unique_ptr<openvdb::FloatGrid::Accessor> acc;
    std::size_t active = 0;
};

LevelSetWriter::LevelSetWriter(const GridSpec& grid, const LevelSetOptions& options) : impl_(std::make_unique<Impl>()) {
    assert(grid.voxel_size > 0 && options.half_width > 0);
    openvdb::initialize();  // idempotent
    impl_->spec = grid;
    impl_->background = static_cast<float>(options.half_width * grid.voxel_size);
    impl_->grid = openvdb::FloatGrid::create(impl_->background);
    impl_->grid->setName(options.name);
    impl_->grid->setGridClass(openvdb::GRID_LEVEL_SET);
    auto transform = openvdb::math::Transform::createLinearTransform(grid.voxel_size);
    transform->postTranslate(openvdb::Vec3d(grid.origin.x + 0.5 * grid.voxel_size, grid.origin.y + 0.5 * grid.voxel_size,
                                            grid.origin.z + 0.5 * grid.voxel_size));
    impl_->grid->setTransform(transform);
    impl_->acc = std::make_unique<openvdb::FloatGrid::Accessor>(impl_->grid->getAccessor());
}

LevelSetWriter::~LevelSetWriter() = default;

void LevelSetWriter::add_slice(int z, const float* phi) {
    const int nx = impl_->spec.dims[0], ny = impl_->spec.dims[1];
    const float bg = impl_->background;
    for (int j = 0; j < ny; ++j)
        for (int i = 0; i < nx; ++i) {
            const float v = phi[static_cast<std::size_t>(j) * static_cast<std::size_t>(nx) + static_cast<std::size_t>(i)];
            if (std::abs(v) < bg) {
                impl_->acc->setValue(openvdb::Coord(i, j, z), v);
                ++impl_->active;
            }
        }
}

std::size_t LevelSetWriter::active_voxels() const { return impl_->active; }

void LevelSetWriter::write(const std::filesystem::path& path, const std::string& creator, const Progress& progress) {
    progress.report("flood fill", 0.0);
    impl_->acc.reset();
    openvdb::tools::signedFloodFill(impl_->grid->tree());
    openvdb::tools::pruneLevelSet(impl_->grid->tree());
    openvdb::MetaMap file_meta;
    file_meta.insertMeta("creator", openvdb::StringMetadata(creator));
    openvdb::GridPtrVec grids{impl_->grid};
    progress.report("save", 0.0);
    write_atomically(path, [&](const std::filesystem::path& tmp) {
        try {
            openvdb::io::File file(tmp.string());
            file.write(grids, file_meta);
            file.close();
        } catch (const std::exception& e) {
            fail_write(path.string(), std::string("cannot write the level set (") + e.what() + ")");
        }
    });
    progress.report("save", 1.0);
}

}  // namespace hp::vdb
