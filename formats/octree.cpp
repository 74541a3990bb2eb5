#include "formats/octree.hpp"

#include <string>

#include "core/error.hpp"
#include "formats/container.hpp"

namespace hp {
namespace fs = std::filesystem;

namespace {

// "params" section.
struct ParamsRecord {
    std::uint32_t levels, flags;
    std::uint64_t nodes, voxels;
    double origin[3];
    double voxel_size;
};
static_assert(sizeof(ParamsRecord) == 56);

constexpr std::uint32_t kSurfaceOnly = 1;

}  // namespace

void write_octree_file(const fs::path& path, const nlohmann::json& metadata, const octree::Octree& t) {
    container::Writer w(container::Kind::octree, metadata);
    const ParamsRecord p{static_cast<std::uint32_t>(t.levels), t.surface_only ? kSurfaceOnly : 0u,
                         static_cast<std::uint64_t>(t.nodes()), static_cast<std::uint64_t>(t.voxels),
                         {t.origin.x, t.origin.y, t.origin.z}, t.voxel_size};
    w.add_array("params", std::vector<ParamsRecord>{p});
    w.add_array("masks", t.masks);
    w.write(path);
}

OctreeFile read_octree_file(const fs::path& path) {
    const container::Kind kind = container::Kind::octree;
    const container::Reader r = container::Reader::open(path, &kind);
    const std::string where = path.string();
    auto bad = [&](const std::string& what) { fail_input(where, "corrupt octree: " + what); };

    const auto params = r.array<ParamsRecord>("params", 1);
    const ParamsRecord& p = params[0];
#ifdef HP_FUZZ_CANARY
    // The fuzzing canary (docs/fuzzing.md): the root level check below against the 64 bits of the
    // Morton code instead of its 21 levels.
    if (p.levels > static_cast<std::uint32_t>(octree::kMaxLevels) && p.levels <= 64) __builtin_trap();
#endif
    if (p.flags > kSurfaceOnly) bad("unknown flags " + std::to_string(p.flags));
    // Sized against the section's real bytes before anything is allocated from the header.
    OctreeFile f;
    f.metadata = r.metadata();
    f.file_size = r.file_size();
    octree::Octree& t = f.tree;
    if (p.levels < 1 || p.levels > static_cast<std::uint32_t>(octree::kMaxLevels))
        bad("root level " + std::to_string(p.levels) + " outside 1.." + std::to_string(octree::kMaxLevels));
    t.levels = static_cast<int>(p.levels);
    t.surface_only = p.flags & kSurfaceOnly;
    t.origin = {p.origin[0], p.origin[1], p.origin[2]};
    t.voxel_size = p.voxel_size;
    t.masks = r.array<std::uint8_t>("masks", p.nodes);
    const std::string problem = octree::finalize(t);
    if (!problem.empty()) bad(problem);
    if (t.voxels != p.voxels)
        bad("the masks address " + std::to_string(t.voxels) + " voxels, the header says " + std::to_string(p.voxels));
    return f;
}

}  // namespace hp
