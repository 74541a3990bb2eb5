#include "formats/cfm.hpp"

#include <cmath>
#include <string>

#include "core/error.hpp"
#include "formats/container.hpp"

namespace hp {
namespace fs = std::filesystem;

namespace {

// "params" section.
struct ParamsRecord {
    std::uint32_t sampling, store, root_stacks, min_stacks, levels, spheres;
    std::uint64_t records;
};
static_assert(sizeof(ParamsRecord) == 32);

// One "spheres" entry.
struct SphereRecord {
    std::uint32_t cluster, level, stacks, flags, first, count;
    double center[3];
    double radius;
};
static_assert(sizeof(SphereRecord) == 56);

constexpr std::uint32_t kSingleFeature = 1;

}  // namespace

void write_cfm_file(const fs::path& path, const nlohmann::json& metadata, const cfm::ClosestFeatureMap& map) {
    container::Writer w(container::Kind::cfm, metadata);
    ParamsRecord p{static_cast<std::uint32_t>(map.sampling), static_cast<std::uint32_t>(map.store),
                   static_cast<std::uint32_t>(map.root_stacks), static_cast<std::uint32_t>(map.min_stacks),
                   static_cast<std::uint32_t>(map.levels), static_cast<std::uint32_t>(map.spheres.size()),
                   static_cast<std::uint64_t>(map.records())};
    w.add_array("params", std::vector<ParamsRecord>{p});
    std::vector<SphereRecord> spheres;
    spheres.reserve(map.spheres.size());
    for (const cfm::Sphere& s : map.spheres)
        spheres.push_back({s.cluster, static_cast<std::uint32_t>(s.level), static_cast<std::uint32_t>(s.stacks),
                           s.single_feature ? kSingleFeature : 0u, s.first, s.count,
                           {s.center.x, s.center.y, s.center.z}, s.radius});
    w.add_array("spheres", spheres);
    w.add_array("normals", map.normals);
    if (map.store == cfm::Store::full) {
        w.add_array("types", map.types);
        w.add_array("features", map.features);
        w.add_array("points", map.points);
    }
    w.write(path);
}

CfmFile read_cfm_file(const fs::path& path) {
    const container::Kind kind = container::Kind::cfm;
    const container::Reader r = container::Reader::open(path, &kind);
    const std::string where = path.string();
    auto bad = [&](const std::string& what) { fail_input(where, "corrupt closest feature map: " + what); };

    const auto params = r.array<ParamsRecord>("params", 1);
    const ParamsRecord& p = params[0];
    if (p.sampling > 1) bad("unknown sampling " + std::to_string(p.sampling));
    if (p.store > 1) bad("unknown store mode " + std::to_string(p.store));
#ifdef HP_FUZZ_CANARY
    // The fuzzing canary (docs/fuzzing.md): the stack count check below against 16 bits instead
    // of kMaxStacks.
    if (p.root_stacks > static_cast<std::uint32_t>(cfm::kMaxStacks) && p.root_stacks <= 0xFFFF) __builtin_trap();
#endif
    if (p.min_stacks < static_cast<std::uint32_t>(cfm::kMinStacks) || p.root_stacks > static_cast<std::uint32_t>(cfm::kMaxStacks) ||
        p.min_stacks > p.root_stacks)
        bad("stacks " + std::to_string(p.root_stacks) + " (root) and " + std::to_string(p.min_stacks) + " (min) out of range");
    // Sized against the section's real bytes before anything is allocated from the header.
    const auto spheres = r.array<SphereRecord>("spheres", p.spheres);
    if (p.spheres == 0 || p.levels == 0 || p.levels > p.spheres) bad("no spheres or a level count that does not fit them");

    CfmFile f;
    f.metadata = r.metadata();
    f.file_size = r.file_size();
    cfm::ClosestFeatureMap& m = f.map;
    m.sampling = static_cast<cfm::Sampling>(p.sampling);
    m.store = static_cast<cfm::Store>(p.store);
    m.root_stacks = static_cast<int>(p.root_stacks);
    m.min_stacks = static_cast<int>(p.min_stacks);
    m.levels = static_cast<int>(p.levels);
    cfm::make_layouts(m);

    std::uint64_t next = 0;
    int deepest = 0;
    m.spheres.reserve(spheres.size());
    for (std::size_t i = 0; i < spheres.size(); ++i) {
        const SphereRecord& s = spheres[i];
        const std::string at = "sphere " + std::to_string(i) + ": ";
        if (s.cluster != i) bad(at + "cluster id " + std::to_string(s.cluster) + " out of order");
        if (s.level < 1 || s.level > p.levels) bad(at + "level " + std::to_string(s.level) + " outside 1.." + std::to_string(p.levels));
        if ((i == 0) != (s.level == 1)) bad(at + "only the first sphere (the root) is on level 1");
        if (static_cast<int>(s.level) < deepest) bad(at + "levels are not in breadth-first order");
        deepest = static_cast<int>(s.level);
        const cfm::SampleLayout& layout = m.layout(static_cast<int>(s.level));
        if (s.stacks != static_cast<std::uint32_t>(layout.stacks()))
            bad(at + std::to_string(s.stacks) + " stacks, the refinement rule gives " + std::to_string(layout.stacks()));
        if (s.flags > kSingleFeature) bad(at + "unknown flags");
        const bool single = s.flags & kSingleFeature;
        if (s.count != (single ? 1u : layout.size()))
            bad(at + std::to_string(s.count) + " records, expected " + std::to_string(single ? 1u : layout.size()));
        if (s.first != next) bad(at + "records are not contiguous");
        next += s.count;
        const Vec3d c{s.center[0], s.center[1], s.center[2]};
        if (!is_finite(c) || !std::isfinite(s.radius) || s.radius < 0) bad(at + "centre or radius not a finite sphere");
        m.spheres.push_back({s.cluster, static_cast<int>(s.level), c, s.radius, static_cast<int>(s.stacks), single, s.first, s.count});
    }
    if (deepest != m.levels) bad("the deepest sphere is on level " + std::to_string(deepest) + ", not " + std::to_string(m.levels));
    if (next != p.records) bad("the spheres hold " + std::to_string(next) + " records, the header says " + std::to_string(p.records));

    const std::size_t n = static_cast<std::size_t>(p.records);
    m.normals = r.array<std::array<float, 3>>("normals", n);
    for (std::size_t k = 0; k < n; ++k) {
        const auto& v = m.normals[k];
        const double len = std::sqrt(double(v[0]) * v[0] + double(v[1]) * v[1] + double(v[2]) * v[2]);
        // Unit within float rounding, or zero where a degenerate feature has no normal.
        if (!std::isfinite(len) || (len != 0 && std::abs(len - 1) > 1e-5)) bad("normal " + std::to_string(k) + " is not a unit vector");
    }
    if (m.store == cfm::Store::full) {
        m.types = r.array<FeatureType>("types", n);
        m.features = r.array<std::uint32_t>("features", n);
        m.points = r.array<Vec3d>("points", n);
        for (std::size_t k = 0; k < n; ++k) {
            if (static_cast<std::uint8_t>(m.types[k]) > 2) bad("record " + std::to_string(k) + " has an unknown feature type");
            if (!is_finite(m.points[k])) bad("record " + std::to_string(k) + " has a point that is not finite");
        }
    }
    return f;
}

}  // namespace hp
