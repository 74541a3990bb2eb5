#include "common/stage_call.hpp"

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/memory.hpp"

namespace hp::app {
namespace {

using pipeline::ParamSpec;

const pipeline::StageSpec& spec_of(std::string_view stage) {
    const pipeline::StageSpec* s = pipeline::find_stage(stage);
    if (!s || !s->run) throw Error(ExitCode::usage, "stage '" + std::string(stage) + "' is not in this build");
    return *s;
}

}  // namespace

StageCall::StageCall(Tool& tool, std::string_view stage)
    : tool_(tool), spec_(spec_of(stage)), options_(tool.cli, spec_.params) {
    tool.exit_without_freeing = true;  // the stage's output is written and closed when run() returns
}

bool StageCall::given(const std::string& key) const { return options_.given(key); }

std::filesystem::path StageCall::file(const std::string& key) const {
    return given(key) ? std::filesystem::path(options_.text(key)) : std::filesystem::path();
}

const nlohmann::json& StageCall::params() {
    if (params_) return *params_;
    nlohmann::json params = options_.values();
    const nlohmann::json given = options_.given_values();
    const pipeline::Spelling as_option = [this](const std::string& k) { return spec_.param(k)->option; };
    if (const auto [key, what] = pipeline::check_applies(spec_, params, given, as_option); !what.empty()) fail_usage(what);
    if (spec_.check) {
        nlohmann::json checked = params;
        for (const std::string& k : waived_) checked[k] = true;
        const auto [key, what] = spec_.check(checked, as_option);
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
