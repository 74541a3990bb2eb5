#include "pipeline/stage.hpp"

#include <cerrno>
#include <cstdarg>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cmath>
#include <cstdlib>

#include "pipeline/stage_cfm.hpp"
#include "pipeline/stage_common.hpp"
#include "pipeline/stage_distance.hpp"
#include "pipeline/stage_octree.hpp"
#include "pipeline/stage_pointshell.hpp"
#include "pipeline/stage_query.hpp"
#include "pipeline/stage_spheretree.hpp"
#include "pipeline/stage_voxelize.hpp"

namespace hp::pipeline {

namespace {

using nlohmann::json;

// What each executable has besides its stage's declared options (and tool_options()): the files
// it reads and writes, named on its command line, which a pipeline names itself. This is the one
// list of executable-only options; the CLI test checks every executable against it.
const std::map<std::string, std::vector<std::string>>& executable_only() {
    static const std::map<std::string, std::vector<std::string>> only = {
        {"voxelize", {"MESH", "--output"}},
        {"distance", {"MESH", "VOXELMAP", "--output"}},
        {"pointshell", {"MESH", "FIELD", "--output"}},
        {"spheretree", {"POINTSHELL", "--output"}},
        {"cfm", {"MESH", "TREE", "--output"}},
        // --static/--moving: the pipeline's field and tree; --report: the stage's output; --csv,
        // --write-poses, --junit and --plot: further output files (a pipeline writes one file per
        // stage; haptic-pipeline has its own --junit and --plot for the batch). --static-mesh and
        // --moving-mesh: the meshes of --validate exact. --scene, --tool, --tool-files, --target: a
        // scene instead of a pair (docs/scene.md; a pipeline's query stage checks one geometry).
        {"query", {"--static", "--moving", "--report", "--csv", "--write-poses", "--junit", "--plot", "--static-mesh",
                   "--moving-mesh", "--scene", "--tool", "--tool-files", "--target"}},
        {"octree", {"VOXELMAP", "--output"}},
    };
    return only;
}

std::vector<StageSpec> make_stages() {
    std::vector<StageSpec> all = {voxelize_stage(), distance_stage(), pointshell_stage(),
                                  spheretree_stage(), cfm_stage(),   octree_stage(), query_stage()};
    for (StageSpec& s : all) {
        s.executable_only = tool_options();
        for (const std::string& o : executable_only().at(s.name)) s.executable_only.push_back(o);
    }
    return all;
}

// Integers as integers ("1000"), other numbers to 17 digits.
std::string number_text(double v) {
    char buf[64];
    if (v == std::floor(v) && std::fabs(v) < 1e17)
        std::snprintf(buf, sizeof buf, "%.0f", v);
    else
        std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

}  // namespace

const char* type_name(ParamType t) {
    switch (t) {
    case ParamType::integer: return "an integer";
    case ParamType::number: return "a number";
    case ParamType::string: return "a string";
    case ParamType::flag: return "true or false";
    }
    return "?";
}

const ParamSpec* StageSpec::param(std::string_view key) const {
    for (const auto& p : params)
        if (p.key == key) return &p;
    return nullptr;
}

const std::vector<StageSpec>& stages() {
    static const std::vector<StageSpec> all = make_stages();
    return all;
}

std::string StageContext::option_name(const std::string& key) const {
    if (!executable) return key;
    std::string o = "--" + key;
    for (char& c : o) if (c == '_') c = '-';
    return o;
}

std::string strf(const char* format, ...) {
    va_list args, copy;
    va_start(args, format);
    va_copy(copy, args);
    const int n = std::vsnprintf(nullptr, 0, format, copy);
    va_end(copy);
    std::string out(n > 0 ? static_cast<std::size_t>(n) : 0, '\0');
    if (n > 0) std::vsnprintf(out.data(), out.size() + 1, format, args);
    va_end(args);
    return out;
}

const std::vector<std::string>& tool_options() {
    static const std::vector<std::string> common = {"--help", "--version", "--json", "--quiet", "--threads"};
    return common;
}

std::pair<std::string, std::string> check_applies(const StageSpec& spec, const json& params, const json& given,
                                                  const Spelling& name) {
    for (const ParamSpec& p : spec.params) {
        if (!given.contains(p.key) || given[p.key].is_null() || given[p.key] == false) continue;
        for (const ParamSpec::Applies& a : p.applies) {
            const json& now = params.contains(a.key) ? params[a.key] : json();
            bool inside = false;
            for (const json& v : a.values) inside = inside || v == now;
            if (inside) continue;
            const std::string on = name(a.key);
            if (a.values.size() == 1 && a.values[0].is_null())
                return {p.key, name(p.key) + " does not apply to " + on + " " + value_text(now) + a.why};
            std::string list;
            for (const json& v : a.values)
                if (!v.is_null()) list += (list.empty() ? "" : " or ") + value_text(v);
            return {p.key, name(p.key) + " applies only to " + on + " " + list + a.why +
                               (now.is_null() ? "" : ", not " + on + " " + value_text(now))};
        }
    }
    return {};
}

std::string range_text(const ParamSpec& spec) {
    if (!spec.choices.empty()) {
        std::string list;
        for (const auto& c : spec.choices) list += (list.empty() ? "" : ", ") + value_text(c);
        return "one of " + list;
    }
    if (spec.positive) return "> 0";
    if (spec.min && spec.max) return "in [" + number_text(*spec.min) + ", " + number_text(*spec.max) + "]";
    if (spec.min) return ">= " + number_text(*spec.min);
    if (spec.max) return "<= " + number_text(*spec.max);
    return {};
}

std::string value_text(const json& value) {
    return value.is_string() ? value.get<std::string>() : value.dump();
}

const StageSpec* find_stage(std::string_view name) {
    for (const auto& s : stages())
        if (s.name == name) return &s;
    return nullptr;
}

std::string normalize_key(std::string_view key) {
    while (!key.empty() && key.front() == '-') key.remove_prefix(1);
    std::string k(key);
    for (char& c : k)
        if (c == '-') c = '_';
    return k;
}

std::string check_value(const ParamSpec& spec, const json& value) {
    auto got = [&] { return " (got " + value.dump() + ")"; };
    switch (spec.type) {
    case ParamType::integer:
        if (!value.is_number_integer()) return std::string("must be ") + type_name(spec.type) + got();
        break;
    case ParamType::number:
        if (!value.is_number() || !std::isfinite(value.get<double>()))
            return std::string("must be ") + type_name(spec.type) + got();
        break;
    case ParamType::string:
        if (!value.is_string()) return std::string("must be ") + type_name(spec.type) + got();
        break;
    case ParamType::flag:
        if (!value.is_boolean()) return std::string("must be ") + type_name(spec.type) + got();
        break;
    }
    if (!spec.choices.empty()) {
        bool ok = false;
        for (const auto& c : spec.choices) ok = ok || c == value;
        if (!ok) return "must be " + range_text(spec) + got();
    }
    if (spec.type == ParamType::integer || spec.type == ParamType::number) {
        const double v = value.get<double>();
#ifdef HP_FUZZ_CANARY
        // The fuzzing canary (docs/fuzzing.md): the range check below, off by one for integers.
        if (spec.max && value.is_number_integer() && value.get<std::int64_t>() == std::int64_t(*spec.max) + 1)
            __builtin_trap();
#endif
        if (spec.positive && !(v > 0)) return "must be a positive number" + got();
        if ((spec.min && v < *spec.min) || (spec.max && v > *spec.max))
            return std::string("must be ") + type_name(spec.type) + " " + range_text(spec) + got();
        if (spec.type == ParamType::integer && value.is_number_unsigned() &&
            value.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
            return std::string("must be ") + type_name(spec.type) + " below 2^63" + got();
    }
    return {};
}

std::optional<json> parse_value(const ParamSpec& spec, std::string_view text) {
    const std::string s(text);
    switch (spec.type) {
    case ParamType::integer: {
        if (s.empty()) return std::nullopt;
        char* end = nullptr;
        errno = 0;
        long long v = std::strtoll(s.c_str(), &end, 10);
        if (errno != 0 || *end != '\0') return std::nullopt;
        return json(v);
    }
    case ParamType::number: {
        if (s.empty()) return std::nullopt;
        char* end = nullptr;
        errno = 0;
        double v = std::strtod(s.c_str(), &end);
        if (errno != 0 || *end != '\0' || !std::isfinite(v)) return std::nullopt;
        return json(v);
    }
    case ParamType::string: return json(s);
    case ParamType::flag:
        if (s == "true" || s == "1" || s == "yes" || s == "on") return json(true);
        if (s == "false" || s == "0" || s == "no" || s == "off") return json(false);
        return std::nullopt;
    }
    return std::nullopt;
}

}  // namespace hp::pipeline
