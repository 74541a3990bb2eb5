// haptic-dump on closest feature maps: per-level sample counts, unique features, file size; and
// the JSON export of every sphere and sample.
#include <cstdio>
#include <sstream>

#include "cfm/cfm.hpp"
#include "core/atomic_file.hpp"
#include "core/text.hpp"
#include "formats/cfm.hpp"
#include "inspect/inspect.hpp"

namespace hp::inspect {
namespace fs = std::filesystem;

Summary describe_cfm(const fs::path& path) {
    const CfmFile f = read_cfm_file(path);
    const cfm::ClosestFeatureMap& m = f.map;
    const bool full = m.store == cfm::Store::full;
    Summary s;
    std::ostringstream o;
    o << "file         " << path.string() << "\n";
    o << "kind         closest feature map\n";
    o << "file size    " << human_bytes(static_cast<double>(f.file_size)) << " (" << with_commas(f.file_size) << " bytes)\n";
    o << "source       " << f.metadata.value("source_name", "?") << " (hash " << f.metadata.value("source_hash", "?") << ")\n";
    o << "sampling     " << cfm::sampling_name(m.sampling) << ", " << m.root_stacks << " stacks at the root, " << m.min_stacks
      << " at the deepest level; store " << cfm::store_name(m.store) << "\n";
    o << "spheres      " << with_commas(m.spheres.size()) << " on " << m.levels << " levels\n";
    o << "level  stacks  samples  spheres  single-feature  records\n";
    nlohmann::json levels = nlohmann::json::array();
    for (const cfm::LevelStats& l : cfm::level_stats(m)) {
        char line[96];
        std::snprintf(line, sizeof line, "%5d  %6d  %7zu  %7zu  %14zu  %7zu\n", l.level, l.stacks, l.samples_per_sphere,
                      l.spheres, l.single_feature, l.records);
        o << line;
        levels.push_back({{"level", l.level}, {"stacks", l.stacks}, {"samples_per_sphere", l.samples_per_sphere},
                          {"spheres", l.spheres}, {"single_feature", l.single_feature}, {"records", l.records}});
    }
    nlohmann::json by_type = nullptr, unique = nullptr;
    o << "records      " << with_commas(m.records());
    if (full) {
        std::size_t count[3] = {0, 0, 0};
        for (FeatureType t : m.types) ++count[static_cast<int>(t)];
        unique = cfm::unique_features(m);
        by_type = {{"face", count[0]}, {"edge", count[1]}, {"vertex", count[2]}};
        o << " (" << with_commas(count[0]) << " face, " << with_commas(count[1]) << " edge, " << with_commas(count[2])
          << " vertex); " << with_commas(unique.get<std::size_t>()) << " unique features\n";
    } else {
        o << " (normals only: features not stored)\n";
    }
    s.text = o.str();
    s.json = {{"file", path.string()}, {"kind", "closest feature map"}, {"file_size", f.file_size},
              {"sampling", cfm::sampling_name(m.sampling)}, {"store", cfm::store_name(m.store)},
              {"stacks", m.root_stacks}, {"min_stacks", m.min_stacks}, {"spheres", m.spheres.size()},
              {"levels", levels}, {"records", m.records()}, {"records_by_type", by_type},
              {"unique_features", unique}, {"metadata", f.metadata}};
    return s;
}

void export_cfm_json(const fs::path& path, const fs::path& output) {
    const CfmFile f = read_cfm_file(path);
    const cfm::ClosestFeatureMap& m = f.map;
    const bool full = m.store == cfm::Store::full;
    // Streamed by hand: a map has hundreds of thousands of samples, too many for a json tree.
    std::string out;
    char buf[160];
    auto vec = [&](double x, double y, double z) {
        std::snprintf(buf, sizeof buf, "[%.17g,%.17g,%.17g]", x, y, z);
        out += buf;
    };
    out += "{\"spheres\":[";
    for (std::size_t s = 0; s < m.spheres.size(); ++s) {
        const cfm::Sphere& sp = m.spheres[s];
        const cfm::SampleLayout& l = m.layout(sp.level);
        out += s ? ",\n" : "\n";
        std::snprintf(buf, sizeof buf, "{\"cluster\":%u,\"level\":%d,\"center\":", sp.cluster, sp.level);
        out += buf;
        vec(sp.center.x, sp.center.y, sp.center.z);
        std::snprintf(buf, sizeof buf, ",\"radius\":%.17g,\"stacks\":%d,\"single_feature\":%s,\"samples\":[", sp.radius,
                      sp.stacks, sp.single_feature ? "true" : "false");
        out += buf;
        for (std::uint32_t k = 0; k < sp.count; ++k) {
            const std::size_t r = sp.first + k;
            const Vec3d& d = l.direction(k);  // a single-feature sphere keeps its sample 0
            out += k ? ",{\"dir\":" : "{\"dir\":";
            vec(d.x, d.y, d.z);
            if (full) {
                std::snprintf(buf, sizeof buf, ",\"feature\":{\"type\":\"%s\",\"index\":%u},\"point\":",
                              cfm::feature_name(m.types[r]), m.features[r]);
                out += buf;
                vec(m.points[r].x, m.points[r].y, m.points[r].z);
            } else {
                out += ",\"feature\":null,\"point\":null";
            }
            out += ",\"normal\":";
            // float32 in the file: 9 significant digits round-trip it.
            std::snprintf(buf, sizeof buf, "[%.9g,%.9g,%.9g]}", m.normals[r][0], m.normals[r][1], m.normals[r][2]);
            out += buf;
        }
        out += "]}";
    }
    out += "\n]}\n";
    write_file_atomically(output, out);
}

}  // namespace hp::inspect
