#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "core/text.hpp"
#include "formats/vdb.hpp"
#include "inspect/inspect.hpp"

namespace hp::inspect {
namespace fs = std::filesystem;

Summary describe_vdb(const fs::path& path) {
    const vdb::Reader reader = vdb::Reader::open(path, true);  // verified once for every read below
    const vdb::FileInfo& info = reader.info();
    Summary s;
    std::ostringstream o;
    o << "file         " << path.string() << "\n";
    const bool voxelmap = info.ours && std::any_of(info.grids.begin(), info.grids.end(),
                                                   [](const vdb::GridInfo& g) { return g.name == "layers"; });
    const bool distance = info.ours && std::any_of(info.grids.begin(), info.grids.end(),
                                                   [](const vdb::GridInfo& g) { return g.name == "distance"; });
    std::string kind = !info.ours ? "vdb" : (distance ? "distance field" : (voxelmap ? "voxelmap" : "vdb"));
    o << "kind         " << kind << (info.ours ? " (hapticprep)" : " (not written by hapticprep)") << "\n";
    const nlohmann::json& meta = info.metadata;
    auto text_of = [&](const char* key) -> std::string {
        if (!meta.contains(key)) return "-";
        return meta[key].is_string() ? meta[key].get<std::string>() : meta[key].dump();
    };
    nlohmann::json provenance = nlohmann::json::object();
    if (info.ours) {
        o << "format       v" << text_of("format_version") << "\n";
        o << "made by      " << text_of("tool") << " " << text_of("tool_version") << "\n";
        o << "source       " << text_of("source_name") << ", hash " << text_of("source_hash") << ", units " << text_of("units") << "\n";
        o << "parameters   " << text_of("parameters") << "\n";
        o << "created      not recorded (files are deterministic: same input, same bytes)\n";
        nlohmann::json params = nlohmann::json::parse(meta.value("parameters", "null"), nullptr, false);
        provenance = {{"tool", meta.value("tool", "")}, {"tool_version", meta.value("tool_version", "")},
                      {"source_name", meta.value("source_name", "")}, {"source_hash", meta.value("source_hash", "")},
                      {"units", meta.value("units", "")}, {"parameters", params.is_discarded() ? nlohmann::json() : params},
                      {"created", nullptr}};
    }
    o << "creator      " << (info.creator.empty() ? "-" : info.creator) << "\n";
    o << "file size    " << human_bytes(static_cast<double>(fs::file_size(path))) << "\n";
    nlohmann::json grids = nlohmann::json::array();
    for (const auto& g : info.grids) {
        o << "grid         " << g.name << ": " << g.value_type << ", " << g.grid_class << ", " << g.active_voxels
          << " active voxels, " << g.leaf_nodes << " leaves, " << g.tiles << " tiles, background " << g.background << ", "
          << human_bytes(static_cast<double>(g.memory_bytes)) << " in memory\n";
        grids.push_back({{"name", g.name}, {"type", g.value_type}, {"class", g.grid_class},
                         {"active_voxels", g.active_voxels}, {"leaf_nodes", g.leaf_nodes}, {"tiles", g.tiles},
                         {"background", g.background}, {"memory_bytes", g.memory_bytes}});
    }
    s.json = {{"file", path.string()}, {"kind", kind}, {"ours", info.ours}, {"creator", info.creator},
              {"file_size", fs::file_size(path)}, {"grids", grids}, {"metadata", info.metadata}};
    if (info.ours) {
        s.json["format_version"] = meta.value("format_version", std::int64_t{0});
        s.json["provenance"] = provenance;
    }
    if (info.ours) {
        const GridSpec& g = info.grid;
        char buf[256];
        std::snprintf(buf, sizeof buf, "dimensions   %d x %d x %d voxels, voxel size %.6g\n", g.dims[0], g.dims[1],
                      g.dims[2], g.voxel_size);
        o << buf;
        std::snprintf(buf, sizeof buf, "origin       [%.6g, %.6g, %.6g]\n", g.origin.x, g.origin.y, g.origin.z);
        o << buf;
        o << "voxels       " << with_commas(g.count()) << "\n";
        s.json["voxels"] = g.count();
        s.json["dimensions"] = {g.dims[0], g.dims[1], g.dims[2]};
        s.json["voxel_size"] = g.voxel_size;
        s.json["origin"] = {g.origin.x, g.origin.y, g.origin.z};
        for (const auto& [key, value] : info.metadata.items()) {
            static const char* const shown[] = {"grid", "format_version", "tool", "tool_version", "source_name",
                                                "source_hash", "units", "parameters"};
            if (std::find(std::begin(shown), std::end(shown), key) != std::end(shown)) continue;
            o << "meta         " << key << " = " << (value.is_string() ? value.get<std::string>() : value.dump()) << "\n";
        }
        if (voxelmap) {
            // Layer histogram: count per layer value.
            std::map<std::int32_t, std::size_t> histogram;
            reader.read_slices("layers", vdb::ValueType::int32, [&](int, const void* values) {
                const auto* v = static_cast<const std::int32_t*>(values);
                for (std::size_t i = 0; i < static_cast<std::size_t>(g.dims[0]) * static_cast<std::size_t>(g.dims[1]); ++i)
                    ++histogram[v[i]];
            });
            std::size_t inside = 0, surface = 0, outside = 0;
            nlohmann::json hist = nlohmann::json::object();
            for (const auto& [layer, count] : histogram) {
                (layer > 0 ? inside : layer < 0 ? outside : surface) += count;
                hist[std::to_string(layer)] = count;
            }
            o << "layers       " << inside << " inside, " << surface << " surface, " << outside << " outside voxels; "
              << "values " << histogram.begin()->first << " .. " << histogram.rbegin()->first << "\n";
            o << "histogram   ";
            int shown = 0;
            for (const auto& [layer, count] : histogram) {
                if (shown++ == 24) {
                    o << " ...";
                    break;
                }
                o << " " << layer << ":" << count;
            }
            o << "\n";
            s.json["layers"] = {{"inside", inside}, {"surface", surface}, {"outside", outside},
                                {"min", histogram.begin()->first}, {"max", histogram.rbegin()->first},
                                {"histogram", hist}};
        }
        if (distance) {
            // Distance values in world units (scaled encodings divided back), range and histogram.
            const std::string encoding = vdb::distance_encoding_text(info.metadata);
            const std::vector<double> values = reader.read_distance();
            double lo = values.empty() ? 0 : *std::min_element(values.begin(), values.end());
            double hi = values.empty() ? 0 : *std::max_element(values.begin(), values.end());
            const int bins = 10;
            std::vector<std::size_t> counts(bins, 0);
            for (double v : values) {
                int b = hi > lo ? static_cast<int>((v - lo) / (hi - lo) * bins) : 0;
                ++counts[static_cast<std::size_t>(std::clamp(b, 0, bins - 1))];
            }
            std::size_t inside = static_cast<std::size_t>(std::count_if(values.begin(), values.end(), [](double v) { return v > 0; }));
            char buf[256];
            std::snprintf(buf, sizeof buf, "distance     %.6g .. %.6g (inside positive), encoding %s, %zu voxels inside\n", lo, hi,
                          encoding.c_str(), inside);
            o << buf << "histogram   ";
            std::vector<double> edges(bins + 1);
            for (int b = 0; b <= bins; ++b) edges[static_cast<std::size_t>(b)] = lo + (hi - lo) * b / bins;
            for (int b = 0; b < bins; ++b) {
                const auto i = static_cast<std::size_t>(b);
                std::snprintf(buf, sizeof buf, " [%.3g..%.3g):%zu", edges[i], edges[i + 1], counts[i]);
                o << buf;
            }
            o << "\n";
            s.json["distance"] = {{"min", lo}, {"max", hi}, {"encoding", encoding}, {"inside", inside},
                                  {"histogram", {{"min", lo}, {"max", hi}, {"edges", edges}, {"counts", counts}}}};
        }
    }
    s.text = o.str();
    return s;
}

}  // namespace hp::inspect
