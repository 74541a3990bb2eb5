#include "pipeline/stage.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "pipeline/stage_runs.hpp"
#include "cfm/cfm.hpp"
#include "voxel/voxelize.hpp"

namespace hp::pipeline {

namespace {

using nlohmann::json;

ParamSpec integer(std::string key, std::string option, json def, double lo, double hi, std::string help) {
    ParamSpec p;
    p.key = std::move(key), p.option = std::move(option), p.type = ParamType::integer;
    p.default_value = std::move(def), p.min = lo, p.max = hi, p.help = std::move(help);
    return p;
}
ParamSpec choice(std::string key, std::string option, ParamType type, json def, std::vector<json> choices,
                 std::string help) {
    ParamSpec p;
    p.key = std::move(key), p.option = std::move(option), p.type = type;
    p.default_value = std::move(def), p.choices = std::move(choices), p.help = std::move(help);
    return p;
}
ParamSpec positive(std::string key, std::string option, json def, std::string help) {
    ParamSpec p;
    p.key = std::move(key), p.option = std::move(option), p.type = ParamType::number;
    p.default_value = std::move(def), p.positive = true, p.help = std::move(help);
    return p;
}
ParamSpec flag(std::string key, std::string option, std::string help) {
    ParamSpec p;
    p.key = std::move(key), p.option = std::move(option), p.type = ParamType::flag;
    p.default_value = false, p.help = std::move(help);
    return p;
}

// --scale and --units as hp::app::Tool::add_mesh_options declares them.
void add_mesh_params(std::vector<ParamSpec>& params, json scale_default, const std::string& inherit) {
    params.push_back(positive("scale", "--scale", std::move(scale_default),
                              "multiply mesh coordinates by F (after --units)" + inherit));
    params.push_back(choice("units", "--units", ParamType::string, nullptr, {"mm", "cm", "m", "in"},
                            "unit of the mesh file; converts to metres" + inherit));
}

std::vector<StageSpec> make_stages() {
    std::vector<StageSpec> all;

    // haptic-voxelize (apps/haptic-voxelize.cpp)
    StageSpec vox;
    vox.name = "voxelize";
    vox.tool = "haptic-voxelize";
    vox.description = "layered voxelmap (surface 0, inside +n, outside -n)";
    vox.output_name = "voxelize.vdb";
    vox.produces = "voxelmap";
    vox.available = true;
    {
        ParamSpec vs = positive("voxel_size", "--voxel-size", nullptr, "voxel edge length in world units");
        vs.excludes = {"resolution"};
        ParamSpec res = integer("resolution", "--resolution", nullptr, 1, kMaxGridDim,
                                "voxels along the longest side (default 128 when voxel_size is not given)");
        res.excludes = {"voxel_size"};
        vox.params = {vs, res,
                      integer("pad", "--pad", 2, 0, 1000, "voxels of padding on every side"),
                      choice("fill", "--fill", ParamType::string, "auto", {"auto", "scanline", "vote", "winding", "flood"},
                             "inside/outside method"),
                      integer("max_layers", "--max-layers", 0, 0, 32767, "clamp layer values to +-L (0 = unlimited)"),
                      choice("connectivity", "--connectivity", ParamType::integer, 26, {26, 6},
                             "layer steps through 26 or 6 neighbours")};
        add_mesh_params(vox.params, 1.0, "");
    }
    vox.run = run_voxelize;
    all.push_back(std::move(vox));

    // haptic-distance (apps/haptic-distance.cpp)
    StageSpec dist;
    dist.name = "distance";
    dist.tool = "haptic-distance";
    dist.description = "signed distance field (inside positive) over the voxelmap";
    dist.output_name = "distance.vdb";
    dist.produces = "distance";
    dist.needs = {"voxelmap"};
    dist.available = true;
    dist.params = {choice("encoding", "--encoding", ParamType::string, "float", {"float", "double", "scaled"},
                          "float, double or scaled"),
                   integer("precision", "--precision", 6, 0, 12, "decimal digits P of the scaled encoding"),
                   flag("gradient", "--gradient", "also write a Vec3f 'gradient' grid"),
                   flag("force", "--force", "proceed even if the mesh is not the one the voxelmap was made from")};
    add_mesh_params(dist.params, nullptr, " (default: the voxelmap's)");
    dist.run = run_distance;
    all.push_back(std::move(dist));

    // haptic-pointshell (apps/haptic-pointshell.cpp): FIELD is the distance field when the
    // pipeline makes one, else the voxelmap.
    StageSpec shell;
    shell.name = "pointshell";
    shell.tool = "haptic-pointshell";
    shell.description = "surface points about alpha voxels apart with inward normals";
    shell.output_name = "pointshell.hps";
    shell.produces = "pointshell";
    shell.needs = {"distance|voxelmap"};
    shell.available = true;
    {
        ParamSpec alpha = positive("alpha", "--alpha", std::sqrt(2.0), "minimum spacing in voxel sizes");
        shell.params = {alpha,
                        choice("normals", "--normals", ParamType::string, "gradient", {"gradient", "surface"},
                               "gradient (of the distance field) or surface (angle-weighted)"),
                        flag("force", "--force", "proceed even if the mesh is not the one the field was made from")};
    }
    add_mesh_params(shell.params, nullptr, " (default: the field's)");
    shell.run = run_pointshell;
    all.push_back(std::move(shell));

    // haptic-spheretree (apps/haptic-spheretree.cpp)
    StageSpec tree;
    tree.name = "spheretree";
    tree.tool = "haptic-spheretree";
    tree.description = "the pointshell with its point-sphere tree";
    tree.output_name = "spheretree.hps";
    tree.produces = "tree";
    tree.needs = {"pointshell"};
    tree.available = true;
    {
        ParamSpec seed = integer("seed", "--seed", 1, 0, 9.2e18, "chooses the start point of each level");
        ParamSpec threshold;
        threshold.key = "threshold", threshold.option = "--threshold", threshold.type = ParamType::number;
        threshold.default_value = 2.0, threshold.min = 0.0;
        threshold.help = "tagging threshold in multiples of the level's median K-th-neighbour distance (0 = off)";
        tree.params = {integer("k", "--k", 4, 2, 1024, "points per cluster"), seed, threshold};
    }
    tree.run = run_spheretree;
    all.push_back(std::move(tree));

    // haptic-cfm (apps/haptic-cfm.cpp)
    StageSpec cfm;
    cfm.name = "cfm";
    cfm.tool = "haptic-cfm";
    cfm.description = "closest feature map of every sphere of the tree";
    cfm.output_name = "cfm.hcfm";
    cfm.produces = "cfm";
    cfm.needs = {"tree"};
    cfm.available = true;
    cfm.params = {integer("stacks", "--stacks", 16, cfm::kMinStacks, cfm::kMaxStacks, "stacks at the root"),
                  integer("min_stacks", "--min-stacks", 4, cfm::kMinStacks, cfm::kMaxStacks, "stacks at the deepest level"),
                  choice("sampling", "--sampling", ParamType::string, "adaptive", {"adaptive", "polar"}, "adaptive or polar"),
                  choice("store", "--store", ParamType::string, "normal", {"normal", "full"},
                         "normal (normals only) or full (features, points, normals)"),
                  flag("force", "--force", "proceed even if the mesh is not the one the tree was made from")};
    add_mesh_params(cfm.params, nullptr, " (default: the tree's)");
    cfm.check = [](const json& p) -> std::pair<std::string, std::string> {
        if (p["min_stacks"].get<int>() > p["stacks"].get<int>())
            return {"min_stacks", "must not exceed stacks (" + p["min_stacks"].dump() + " > " + p["stacks"].dump() + ")"};
        return {};
    };
    cfm.run = run_cfm;
    all.push_back(std::move(cfm));

    // haptic-query (apps/haptic-query.cpp): the tree of the mesh against its own distance field;
    // --static, --moving and --report are the pipeline's files.
    StageSpec query;
    query.name = "query";
    query.tool = "haptic-query";
    query.description = "timed VPS queries of the mesh's tree against its own distance field (report)";
    query.output_name = "query.json";
    query.produces = "report";
    query.needs = {"distance|voxelmap", "tree"};
    query.available = true;
    query.deterministic = false;
    query.runs_alone = true;
    {
        ParamSpec poses;
        poses.key = "poses", poses.option = "--poses", poses.type = ParamType::string, poses.help = "poses file (JSON)";
        poses.excludes = {"scenario"};
        ParamSpec scenario = choice("scenario", "--scenario", ParamType::string, nullptr, {"contact", "approach", "random"},
                                    "generate poses: contact, approach or random");
        scenario.excludes = {"poses"};
        ParamSpec max_over;
        max_over.key = "max_over_budget", max_over.option = "--max-over-budget", max_over.type = ParamType::number;
        max_over.min = 0.0, max_over.max = 1.0;
        max_over.help = "pass when at most this fraction of queries is over budget (instead of p99)";
        query.params = {poses, scenario,
                        integer("count", "--count", 1000, 1, 100000000, "scenario: number of poses"),
                        integer("seed", "--seed", 1, 0, 9.2e18, "scenario: random seed"),
                        positive("depth", "--depth", 5.0, "contact: maximum penetration in voxels"),
                        choice("mode", "--mode", ParamType::string, "full", {"full", "brute", "segmented", "time-critical"},
                               "full, brute, segmented or time-critical"),
                        integer("level", "--level", nullptr, 1, 1000, "segmented: tree level of the segments (1 = root)"),
                        positive("budget_us", "--budget-us", 1000.0, "per-query budget in microseconds"),
                        max_over,
                        integer("warmup", "--warmup", nullptr, 0, 100000000, "untimed queries first (default: min(count, 100))")};
    }
    query.check = [](const json& p) -> std::pair<std::string, std::string> {
        if (p["poses"].is_null() && p["scenario"].is_null())
            return {"scenario", "give poses (a file) or scenario (contact, approach or random)"};
        if (p["mode"] == "segmented" && p["level"].is_null()) return {"level", "mode segmented needs a level"};
        return {};
    };
    query.run = run_query;
    all.push_back(std::move(query));
    return all;
}

std::string number_text(double v) {
    char buf[64];
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
        std::string list;
        for (const auto& c : spec.choices) {
            ok = ok || c == value;
            list += (list.empty() ? "" : ", ") + (c.is_string() ? c.get<std::string>() : c.dump());
        }
        if (!ok) return "must be one of " + list + got();
    }
    if (spec.type == ParamType::integer || spec.type == ParamType::number) {
        const double v = value.get<double>();
        if (spec.positive && !(v > 0)) return "must be a positive number" + got();
        if ((spec.min && v < *spec.min) || (spec.max && v > *spec.max)) {
            if (spec.min && spec.max)
                return std::string("must be ") + type_name(spec.type) + " in [" + number_text(*spec.min) + ", " +
                       number_text(*spec.max) + "]" + got();
            return std::string("must be ") + type_name(spec.type) + (spec.min ? " >= " + number_text(*spec.min)
                                                                              : " <= " + number_text(*spec.max)) + got();
        }
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
