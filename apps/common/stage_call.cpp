#include "common/stage_call.hpp"

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/memory.hpp"

namespace hp::app {
namespace {

using pipeline::ParamSpec;
using pipeline::ParamType;

const pipeline::StageSpec& spec_of(std::string_view stage) {
    const pipeline::StageSpec* s = pipeline::find_stage(stage);
    if (!s || !s->run) throw Error(ExitCode::usage, "stage '" + std::string(stage) + "' is not in this build");
    return *s;
}

const char* value_name(const ParamSpec& p) {
    if (!p.input.empty()) return "FILE";
    switch (p.type) {
    case ParamType::integer: return "INT";
    case ParamType::number: return "NUM";
    default: return "TEXT";
    }
}

// The declaration's check of one command-line value (type, range, choices).
CLI::Validator validator(const ParamSpec& p) {
    return CLI::Validator(
        [&p](std::string& text) -> std::string {
            const auto value = pipeline::parse_value(p, text);
            if (!value) return std::string("must be ") + pipeline::type_name(p.type) + " (got '" + text + "')";
            return pipeline::check_value(p, *value);
        },
        pipeline::range_text(p));
}

}  // namespace

StageCall::StageCall(Tool& tool, std::string_view stage) : tool_(tool), spec_(spec_of(stage)) {
    tool.exit_without_freeing = true;  // the stage's output is written and closed when run() returns
    for (const ParamSpec& p : spec_.params) {
        CLI::Option* opt = nullptr;
        if (p.type == ParamType::flag && p.input.empty()) {
            opt = tool.cli.add_flag(p.option, flags_[p.key], p.help);
        } else {
            opt = tool.cli.add_option(p.option, text_[p.key], p.help)->type_name(value_name(p));
            if (!p.default_value.is_null()) opt->default_str(pipeline::value_text(p.default_value));
            if (p.input.empty()) opt->check(validator(p));
        }
        options_[p.key] = opt;
    }
    for (const ParamSpec& p : spec_.params)
        for (const std::string& x : p.excludes) options_.at(p.key)->excludes(options_.at(x));
}

bool StageCall::given(const std::string& key) const { return options_.at(key)->count() > 0; }

std::filesystem::path StageCall::file(const std::string& key) const {
    return given(key) ? std::filesystem::path(text_.at(key)) : std::filesystem::path();
}

const nlohmann::json& StageCall::params() {
    if (params_) return *params_;
    nlohmann::json params = nlohmann::json::object();
    for (const ParamSpec& p : spec_.params) {
        params[p.key] = p.default_value;
        if (!given(p.key)) continue;
        if (!p.input.empty())
            params[p.key] = true;
        else if (p.type == ParamType::flag)
            params[p.key] = flags_.at(p.key);
        else
            params[p.key] = *pipeline::parse_value(p, text_.at(p.key));  // the validator parsed it
    }
    if (spec_.check) {
        const auto [key, what] = spec_.check(params, [this](const std::string& k) { return spec_.param(k)->option; });
        if (!what.empty()) fail_usage(what);
    }
    params_ = std::move(params);
    return *params_;
}

StageCall& StageCall::input(const std::string& kind, std::filesystem::path file) {
    inputs_[kind] = std::move(file);
    return *this;
}

const pipeline::StageContext& StageCall::context(std::filesystem::path mesh, std::filesystem::path output) {
    pipeline::StageContext& ctx = ctx_;
    ctx.mesh = std::move(mesh);
    ctx.output = std::move(output);
    for (const ParamSpec& p : spec_.params)
        if (!p.input.empty() && given(p.key)) inputs_[p.input] = file(p.key);
    ctx.inputs = &inputs_;
    ctx.executable = true;
    ctx.params = params();
    ctx.given = nlohmann::json::object();
    for (const ParamSpec& p : spec_.params)
        if (given(p.key)) ctx.given[p.key] = ctx.params[p.key];
    ctx.progress = tool_.progress();
    ctx.load_mesh = [this](const MeshLoadOptions& o) -> const LoadedMesh& {
        if (!mesh_) mesh_ = load_mesh(ctx_.mesh, o);
        return *mesh_;
    };
    return ctx;
}

pipeline::ToolFacts StageCall::facts(std::chrono::steady_clock::time_point start) const {
    pipeline::ToolFacts f;
    f.total_seconds = seconds_since(start);
    f.output = ctx_.output.string();
    f.mesh = mesh();
    std::error_code ec;
    const auto bytes = std::filesystem::file_size(ctx_.output, ec);
    if (!ec) f.file_bytes = bytes;
    f.peak_rss_bytes = peak_rss_bytes();
    return f;
}

}  // namespace hp::app
