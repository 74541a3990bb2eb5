#include "pipeline/report.hpp"

#include <cstdarg>
#include <cstdio>

#include "core/text.hpp"
#include "pipeline/stage.hpp"

namespace hp::pipeline {

using nlohmann::json;

namespace {

std::string fmt(const char* format, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char* format, ...) {
    char buf[1024];
    va_list args;
    va_start(args, format);
    std::vsnprintf(buf, sizeof buf, format, args);
    va_end(args);
    return buf;
}

std::string status_of(const json& e) {
    if (e.value("resumed", false)) return "resumed";
    return e.value("status", "?");
}

std::uint64_t output_bytes(const json& e) {
    std::uint64_t b = 0;
    if (e.contains("outputs"))
        for (const auto& o : e["outputs"]) b += o.value("bytes", std::uint64_t{0});
    return b;
}

double stage_seconds(const json& e, const std::string& stage, bool& found) {
    found = false;
    if (e.contains("stages"))
        for (const auto& s : e["stages"])
            if (s.value("stage", "") == stage) {
                found = true;
                return s.value("seconds", 0.0);
            }
    return 0;
}

}  // namespace

std::string format_mesh_line(const json& e) {
    std::string line = fmt("%-8s %-24s", status_of(e).c_str(), e.value("name", "").c_str());
    if (e.value("status", "") == "failed") return line + " " + e.value("error", "");
    std::string stages;
    for (const auto& s : e["stages"])
        stages += fmt("%s%s %.2f s", stages.empty() ? "" : ", ", s.value("stage", "").c_str(), s.value("seconds", 0.0));
    return line + " " + stages;
}

std::string format_summary(const json& m, const std::string& manifest_file) {
    std::vector<std::string> names;
    for (const auto& s : m["pipeline"]["stages"]) names.push_back(s.value("stage", ""));
    std::string out = fmt("%-24s %-8s %10s", "mesh", "status", "triangles");
    for (const auto& n : names) out += fmt(" %10s", n.substr(0, 10).c_str());
    out += fmt(" %9s %10s\n", "total s", "output");
    for (const auto& e : m["meshes"]) {
        std::string tris = "-";
        if (e.contains("diagnostics") && e["diagnostics"].is_object())
            tris = with_commas(e["diagnostics"].value("triangles", 0ULL));
        out += fmt("%-24s %-8s %10s", e.value("name", "").c_str(), status_of(e).c_str(), tris.c_str());
        for (const auto& n : names) {
            bool found = false;
            const double s = stage_seconds(e, n, found);
            out += found ? fmt(" %10.3f", s) : fmt(" %10s", "-");
        }
        out += fmt(" %9.3f %10s\n", e.value("seconds", 0.0), human_bytes(static_cast<double>(output_bytes(e))).c_str());
        if (e.value("status", "") == "failed") out += "    error: " + e.value("error", "") + "\n";
    }
    const json& s = m["summary"];
    out += fmt("%zu meshes: %zu ok (%zu resumed), %zu failed", s.value("meshes", std::size_t{0}), s.value("ok", std::size_t{0}),
               s.value("resumed", std::size_t{0}), s.value("failed", std::size_t{0}));
    if (s.value("planned", std::size_t{0})) out += fmt(", %zu planned", s.value("planned", std::size_t{0}));
    out += fmt("; %s written, %.2f s of mesh work; manifest %s\n",
               human_bytes(static_cast<double>(s.value("output_bytes", std::uint64_t{0}))).c_str(),
               s.value("seconds", 0.0), manifest_file.c_str());
    return out;
}

json stages_json() {
    json list = json::array();
    for (const auto& s : stages()) {
        json params = json::array();
        for (const auto& p : s.params) {
            json e = {{"key", p.key}, {"option", p.option}, {"type", type_name(p.type)}, {"default", p.default_value},
                      {"help", p.help}};
            if (!p.choices.empty()) e["choices"] = p.choices;
            if (p.min) e["min"] = *p.min;
            if (p.max) e["max"] = *p.max;
            if (!p.excludes.empty()) e["excludes"] = p.excludes;
            if (p.positive) e["positive"] = true;
            if (!p.input.empty()) e["input"] = p.input;
            params.push_back(e);
        }
        list.push_back({{"stage", s.name}, {"tool", s.tool}, {"available", s.available}, {"output", s.output_name},
                        {"produces", s.produces}, {"needs", s.needs}, {"description", s.description}, {"params", params},
                        {"executable_only", s.executable_only}});
    }
    return {{"stages", list}};
}

std::string format_stages() {
    std::string out;
    for (const auto& s : stages()) {
        if (!s.available) {
            out += fmt("%-11s (not available in this build)\n", s.name.c_str());
            continue;
        }
        out += fmt("%-11s %s -> %s: %s\n", s.name.c_str(), s.tool.c_str(), s.output_name.c_str(), s.description.c_str());
        for (const auto& p : s.params) {
            std::string def = p.default_value.is_null() ? "-" : p.default_value.dump();
            out += fmt("  %-14s %-16s %-13s default %-8s %s\n", p.key.c_str(), p.option.c_str(), type_name(p.type),
                       def.c_str(), p.help.c_str());
        }
    }
    return out;
}

}  // namespace hp::pipeline
