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

std::string status_of(const MeshEntry& e) { return e.resumed ? "resumed" : status_name(e.status); }

const StageRecord* find_stage_record(const MeshEntry& e, const std::string& stage) {
    for (const auto& s : e.stages)
        if (s.stage == stage) return &s;
    return nullptr;
}

}  // namespace

std::string format_mesh_line(const MeshEntry& e) {
    std::string line = fmt("%-8s %-24s", status_of(e).c_str(), e.name.c_str());
    if (e.status == MeshStatus::failed) return line + " " + e.error.value_or("");
    std::string stages;
    for (const auto& s : e.stages)
        stages += fmt("%s%s %.2f s", stages.empty() ? "" : ", ", s.stage.c_str(), s.seconds);
    return line + " " + stages;
}

std::string format_summary(const Manifest& m, const std::string& manifest_file) {
    std::string out = fmt("%-24s %-8s %10s", "mesh", "status", "triangles");
    for (const auto& s : m.pipeline.stages) out += fmt(" %10s", s.stage.substr(0, 10).c_str());
    out += fmt(" %9s %10s\n", "total s", "output");
    for (const auto& e : m.meshes) {
        std::string tris = "-";
        if (e.diagnostics.is_object()) tris = with_commas(e.diagnostics.value("triangles", 0ULL));
        out += fmt("%-24s %-8s %10s", e.name.c_str(), status_of(e).c_str(), tris.c_str());
        for (const auto& s : m.pipeline.stages) {
            const StageRecord* r = find_stage_record(e, s.stage);
            out += r ? fmt(" %10.3f", r->seconds) : fmt(" %10s", "-");
        }
        out += fmt(" %9.3f %10s\n", e.seconds, human_bytes(static_cast<double>(output_bytes(e))).c_str());
        if (e.status == MeshStatus::failed) out += "    error: " + e.error.value_or("") + "\n";
    }
    const Summary& s = m.summary;
    out += fmt("%zu meshes: %zu ok (%zu resumed), %zu failed", s.meshes, s.ok, s.resumed, s.failed);
    if (s.planned) out += fmt(", %zu planned", s.planned);
    out += fmt("; %s written, %.2f s of mesh work; manifest %s\n", human_bytes(static_cast<double>(s.output_bytes)).c_str(),
               s.seconds, manifest_file.c_str());
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
            for (const auto& a : p.applies) e["applies"].push_back({{"key", a.key}, {"values", a.values}});
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
