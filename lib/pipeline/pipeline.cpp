#include "pipeline/pipeline.hpp"

#include <algorithm>
#include <set>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/hash.hpp"
#include "core/version.hpp"

namespace hp::pipeline {

namespace {

using nlohmann::json;

std::string known_stages() {
    std::string list;
    for (const auto& s : stages()) list += (list.empty() ? "" : ", ") + s.name;
    return list;
}

std::string known_keys(const StageSpec& spec) {
    std::string list;
    for (const auto& p : spec.params) list += (list.empty() ? "" : ", ") + p.key;
    return list;
}

[[noreturn]] void fail_stage(const std::string& source, const std::string& stage, std::size_t index,
                             const std::string& what) {
    fail_usage(source + ": stage '" + stage + "' (stages[" + std::to_string(index) + "]): " + what);
}

[[noreturn]] void fail_key(const std::string& source, const StageSpec& spec, std::size_t index, const std::string& key,
                           const std::string& what) {
    fail_stage(source, spec.name, index, "key '" + key + "': " + what);
}

// The stage an override or a stage entry names, or a usage error that says what is known.
const StageSpec& known_stage(const std::string& name, const std::string& where) {
    const StageSpec* spec = find_stage(name);
    if (!spec) fail_usage(where + ": unknown stage '" + name + "' (stages: " + known_stages() + ")");
    if (!spec->available)
        fail_usage(where + ": stage '" + name + "' is not available in this build (hapticprep " + kVersion +
                   " has no " + spec->tool + " yet; remove the stage from the pipeline)");
    return *spec;
}

}  // namespace

json Pipeline::to_json() const {
    json st = json::array();
    for (const auto& s : stages) {
        json e = {{"stage", s.spec->name}};
        for (const auto& [k, v] : s.given.items()) e[k] = v;
        st.push_back(e);
    }
    json j = {{"name", name}, {"description", description}, {"stages", st}};
    if (assembly) j["assembly"] = true;
    return j;
}

std::string Pipeline::params_hash() const {
    json st = json::array();
    for (const auto& s : stages) st.push_back({{"stage", s.spec->name}, {"params", s.params}});
    const std::string canonical = json{{"tool_version", kVersion}, {"stages", st}}.dump();
    return hex64(hash64(canonical));
}

Override parse_override(std::string_view assignment) {
    const std::string a(assignment);
    const auto eq = a.find('=');
    const auto dot = a.find('.');
    if (eq == std::string::npos || dot == std::string::npos || dot > eq || dot == 0 || dot + 1 == eq)
        fail_usage("--set " + a + ": expected stage.key=value (e.g. --set voxelize.voxel_size=0.001)");
    Override o;
    o.stage = a.substr(0, dot);
    o.key = normalize_key(a.substr(dot + 1, eq - dot - 1));
    o.value = a.substr(eq + 1);
    o.unset = o.value.empty();
    return o;
}

void apply_overrides(json& raw, const std::vector<Override>& overrides, const std::string& source) {
    for (const auto& o : overrides) {
        const std::string where = "--set " + o.stage + "." + o.key + "=" + o.value;
        const StageSpec& spec = known_stage(o.stage, where);
        const ParamSpec* param = spec.param(o.key);
        if (!param)
            fail_usage(where + ": stage '" + spec.name + "' has no key '" + o.key + "' (keys: " + known_keys(spec) + ")");
        json* entry = nullptr;
        if (raw.is_object() && raw.contains("stages") && raw["stages"].is_array())
            for (auto& e : raw["stages"])
                if (e.is_object())  // (json::value would throw on a "stage" that is not a string)
                    if (const auto s = e.find("stage"); s != e.end() && *s == o.stage) entry = &e;
        if (!entry) fail_usage(where + ": stage '" + o.stage + "' is not in the pipeline " + source);
        // Remove the key as the file spells it (e.g. "voxel-size") and the keys it excludes.
        for (auto it = entry->begin(); it != entry->end();) {
            const std::string k = normalize_key(it.key());
            bool drop = k == o.key;
            for (const auto& x : param->excludes) drop = drop || (!o.unset && k == x);
            it = drop ? entry->erase(it) : std::next(it);
        }
        if (o.unset) continue;
        auto value = parse_value(*param, o.value);
        if (!value)
            fail_usage(where + ": stage '" + spec.name + "', key '" + o.key + "' must be " + type_name(param->type) +
                       " (got '" + o.value + "')");
        (*entry)[o.key] = *value;
    }
}

Pipeline parse_pipeline(const json& raw, const std::string& source) {
    if (!raw.is_object()) fail_usage(source + ": a pipeline is a JSON object with \"name\" and \"stages\"");
    for (const auto& [k, v] : raw.items())
        if (k != "name" && k != "description" && k != "stages" && k != "assembly")
            fail_usage(source + ": unknown key '" + k + "' (a pipeline has name, description, stages, assembly)");
    Pipeline p;
    p.source = source;
    if (!raw.contains("name") || !raw["name"].is_string() || raw["name"].get<std::string>().empty())
        fail_usage(source + ": key 'name' is missing or not a non-empty string");
    p.name = raw["name"].get<std::string>();
    if (raw.contains("description")) {
        if (!raw["description"].is_string()) fail_usage(source + ": key 'description' must be a string");
        p.description = raw["description"].get<std::string>();
    }
    if (!raw.contains("stages") || !raw["stages"].is_array() || raw["stages"].empty())
        fail_usage(source + ": key 'stages' is missing or not a non-empty array of stages");
    if (raw.contains("assembly")) {
        if (!raw["assembly"].is_boolean()) fail_usage(source + ": key 'assembly' must be true or false");
        p.assembly = raw["assembly"].get<bool>();
    }

    std::set<std::string> made = {"mesh"};
    std::set<std::string> seen;
    const json& list = raw["stages"];
    for (std::size_t i = 0; i < list.size(); ++i) {
        const json& e = list[i];
        const std::string at = source + ": stages[" + std::to_string(i) + "]";
        if (!e.is_object()) fail_usage(at + ": a stage is an object {\"stage\": NAME, parameters...}");
        if (!e.contains("stage") || !e["stage"].is_string())
            fail_usage(at + ": key 'stage' is missing (name the stage: " + known_stages() + ")");
        const std::string name = e["stage"].get<std::string>();
        const StageSpec& spec = known_stage(name, at);
        if (!seen.insert(name).second)
            fail_stage(source, name, i, "key 'stage': the stage is given twice (a pipeline runs each stage once)");
        StageConfig cfg;
        cfg.spec = &spec;
        cfg.given = json::object();
        for (const auto& [k, v] : e.items()) {
            if (k == "stage") continue;
            const std::string key = normalize_key(k);
            const ParamSpec* param = spec.param(key);
            if (!param)
                fail_key(source, spec, i, k, "unknown parameter of " + spec.tool + " (keys: " + known_keys(spec) + ")");
            if (cfg.given.contains(key)) fail_key(source, spec, i, k, "given twice");
            const std::string why = check_value(*param, v);
            if (!why.empty()) fail_key(source, spec, i, key, why + " (" + spec.tool + " " + param->option + ")");
            cfg.given[key] = v;
        }
        for (const auto& param : spec.params)
            for (const auto& x : param.excludes)
                if (cfg.given.contains(param.key) && cfg.given.contains(x))
                    fail_key(source, spec, i, param.key, "cannot be given together with '" + x + "' (choose one)");
        for (const auto& need : spec.needs) {
            // "a|b": any of these kinds, the first one present preferred.
            bool found = false;
            std::string kinds, makers;
            for (std::size_t a = 0, b; a <= need.size(); a = b + 1) {
                b = std::min(need.find('|', a), need.size());
                const std::string kind = need.substr(a, b - a);
                found = found || made.count(kind);
                kinds += (kinds.empty() ? "'" : " or '") + kind + "'";
                for (const auto& s : stages())
                    if (s.produces == kind) makers += (makers.empty() ? "'" : " or '") + s.name + "'";
            }
            if (!found)
                fail_key(source, spec, i, "stage",
                         "input " + kinds + " is missing: no earlier stage makes it (put a " + makers +
                             " stage before '" + name + "')");
        }
        made.insert(spec.produces);
        cfg.params = json::object();
        for (const auto& param : spec.params)
            cfg.params[param.key] = cfg.given.contains(param.key) ? cfg.given[param.key] : param.default_value;
        const Spelling as_key = [](const std::string& k) { return k; };
        if (const auto [key, what] = check_applies(spec, cfg.params, cfg.given, as_key); !what.empty())
            fail_key(source, spec, i, key, what);
        if (spec.check) {
            const auto [key, what] = spec.check(cfg.params, as_key);
            if (!what.empty()) fail_key(source, spec, i, key, what);
        }
        // A key that names an input file (query's cfm): true uses the file an earlier stage made.
        for (const auto& param : spec.params)
            if (!param.input.empty() && cfg.params[param.key] == true && !made.count(param.input)) {
                std::string makers;
                for (const auto& s : stages())
                    if (s.produces == param.input) makers += (makers.empty() ? "'" : " or '") + s.name + "'";
                fail_key(source, spec, i, param.key,
                         "uses the '" + param.input + "' of an earlier stage, but none makes it (put a " + makers +
                             " stage before '" + name + "')");
            }
        p.stages.push_back(std::move(cfg));
    }
    return p;
}

Pipeline load_pipeline(const std::filesystem::path& path, const std::vector<Override>& overrides) {
    const std::string source = path.string();
    std::string text;
    try {
        text = read_file(path);
    } catch (const Error& e) {
        throw Error(ExitCode::usage, e.what());  // a pipeline that cannot be read is a usage error
    }
    json raw;
    try {
        raw = json::parse(text);
    } catch (const json::parse_error& e) {
        std::string what = e.what();
        const auto colon = what.find("parse error");
        fail_usage(source + ": not valid JSON (" + (colon == std::string::npos ? what : what.substr(colon)) + ")");
    } catch (const json::out_of_range&) {  // a number beyond double's range, e.g. 1e400
        fail_usage(source + ": not valid JSON (a number too large for a double)");
    }
    apply_overrides(raw, overrides, source);
    return parse_pipeline(raw, source);
}

}  // namespace hp::pipeline
