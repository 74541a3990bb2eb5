// Fuzz entries of our .vdb files, through the readers the tools use: load_static_field (the query:
// voxelmap, distance field, narrow band), pipeline::read_shell_field (the pointshell stage) and the dense read
// of the gradient grid (haptic-dump --check). Each runs on the bytes as given (the trailer gate)
// and with the XXH3-64 trailer recomputed, so that OpenVDB's parse and our checks of what it
// returns see the mutated contents.
//
// Dense reads allocate what the grid's box says (the memory model of the stages budgets for it):
// a tiny file may legitimately describe a 2^31-voxel box of tiles. The entries therefore read
// grids of at most kMaxVoxels voxels (or 8^3 blocks, for the sparse reads); larger boxes are
// opened and verified only.
#include <cmath>

#include "formats/vdb.hpp"
#include "fuzz_targets.hpp"
#include "pipeline/stage_pointshell.hpp"
#include "pointshell/pointshell.hpp"
#include "query/static_field.hpp"

namespace hp::fuzz {

namespace {

constexpr double kMaxVoxels = double(1 << 22);

template <class Check>
void both_ways(const std::uint8_t* data, std::size_t size, Check check) {
    const std::string raw(reinterpret_cast<const char*>(data), size);
    const std::string fixed = fix_vdb_trailer(raw);
    check(scratch_file("input.vdb", raw));
    if (fixed != raw) check(scratch_file("input.vdb", fixed));  // a right trailer: read once
}

double box_voxels(const GridSpec& g) { return double(g.dims[0]) * double(g.dims[1]) * double(g.dims[2]); }

// Opens the file; true when it is ours and small enough to read further.
bool open_small(const std::filesystem::path& path, vdb::FileInfo& info) {
    if (!refused_or_ran([&] { info = vdb::Reader::open(path).info(); })) return false;
    if (!info.ours) return false;
    const GridSpec& g = info.grid;
    if (!(g.voxel_size > 0) || g.dims[0] < 1 || g.dims[1] < 1 || g.dims[2] < 1)
        violated("vdb", "an accepted file of ours has no valid grid");
    return box_voxels(g) <= kMaxVoxels;
}

}  // namespace

void vdb_field(const std::uint8_t* data, std::size_t size) {
    both_ways(data, size, [](const std::filesystem::path& path) {
        vdb::FileInfo info;
        if (!open_small(path, info)) return;
        StaticField f;
        if (!refused_or_ran([&] { f = load_static_field(path); })) return;
        if (f.kind != "distance" && f.kind != "voxelmap") violated("vdb_field", "loaded a field of kind '" + f.kind + "'");
    });
}

void vdb_shell_field(const std::uint8_t* data, std::size_t size) {
    both_ways(data, size, [](const std::filesystem::path& path) {
        vdb::FileInfo info;
        if (!open_small(path, info)) return;
        ShellField f;
        vdb::FileInfo read_info;
        if (!refused_or_ran([&] { f = pipeline::read_shell_field(path, read_info); })) return;
        if (f.layers.size() != f.grid.count()) violated("vdb_shell_field", "the layers do not fill the grid");
        if (!f.distance.empty() && f.distance.size() != f.grid.count())
            violated("vdb_shell_field", "the distances do not fill the grid");
    });
}

void vdb_gradient(const std::uint8_t* data, std::size_t size) {
    both_ways(data, size, [](const std::filesystem::path& path) {
        vdb::FileInfo info;
        if (!open_small(path, info)) return;
        refused_or_ran([&] {
            const vdb::Reader reader = vdb::Reader::open(path);
            if (reader.value_type("gradient").empty()) return;
            int next = 0;
            double sum = 0;
            const std::size_t slice = std::size_t(info.grid.dims[0]) * std::size_t(info.grid.dims[1]);
            reader.read_slices("gradient", vdb::ValueType::vec3f, [&](int z, const void* values) {
                if (z != next++) violated("vdb_gradient", "slices out of order");
                const auto* v = static_cast<const float*>(values);
                for (std::size_t i = 0; i < 3 * slice; ++i) sum += std::abs(v[i]);  // reads every value
            });
            if (next != info.grid.dims[2]) violated("vdb_gradient", "not every slice was delivered");
            if (sum < 0) violated("vdb_gradient", "a sum of magnitudes is negative");
        });
    });
}

}  // namespace hp::fuzz
