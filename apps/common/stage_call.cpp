#include "common/stage_call.hpp"

#include "core/error.hpp"

namespace hp::app {
namespace {
const pipeline::StageSpec& spec_of(std::string_view stage) {
    const pipeline::StageSpec* s = pipeline::find_stage(stage);
    if (!s || !s->run) throw Error(ExitCode::usage, "stage '" + std::string(stage) + "' is not in this build");
    return *s;
}
}  // namespace

StageCall::StageCall(Tool& tool, std::string_view stage, std::filesystem::path mesh, std::filesystem::path output)
    : tool_(tool), spec_(spec_of(stage)) {
    ctx_.mesh = std::move(mesh);
    ctx_.output = std::move(output);
    ctx_.inputs = &inputs_;
    ctx_.executable = true;
    ctx_.params = nlohmann::json::object();
    ctx_.given = nlohmann::json::object();
    for (const pipeline::ParamSpec& p : spec_.params) ctx_.params[p.key] = p.default_value;
    ctx_.progress = tool.progress();
    ctx_.load_mesh = [this](const MeshLoadOptions& o) -> const LoadedMesh& {
        if (!mesh_) mesh_ = load_mesh(ctx_.mesh, o);
        return *mesh_;
    };
}

StageCall& StageCall::set(const std::string& key, nlohmann::json value) {
    if (!spec_.param(key)) throw Error(ExitCode::usage, "stage '" + spec_.name + "' has no parameter '" + key + "'");
    ctx_.params[key] = value;
    ctx_.given[key] = std::move(value);
    return *this;
}

StageCall& StageCall::input(const std::string& kind, std::filesystem::path file) {
    inputs_[kind] = std::move(file);
    return *this;
}

nlohmann::json StageCall::run() {
    nlohmann::json r = spec_.run(ctx_);
    if (r.contains("warnings")) {
        for (const auto& w : r["warnings"]) tool_.warn(w.get<std::string>());
        r.erase("warnings");
    }
    return r;
}

}  // namespace hp::app
