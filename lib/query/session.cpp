#include "query/session.hpp"

#include <utility>

#include "cfm/cfm.hpp"
#include "formats/cfm.hpp"
#include "formats/shell.hpp"
#include "contact/cfm_contacts.hpp"
#include "query/timing.hpp"

namespace hp {

MovingObjectData load_moving_object(const std::filesystem::path& path) {
    ShellFile file = read_shell_file(path, true);  // require_tree: a plain pointshell is refused
    MovingObjectData out;
    out.points = std::move(file.shell.points);
    out.normals = std::move(file.shell.normals);
    out.tree = std::move(*file.tree);
    out.metadata = std::move(file.metadata);
    return out;
}

void attach_cfm(MovingObjectData& moving, const std::filesystem::path& cfm_path,
                const std::filesystem::path& moving_path) {
    CfmFile file = read_cfm_file(cfm_path);
    check_cfm_matches_tree(file.map, file.metadata, cfm_path.string(), moving.tree, moving.metadata, moving_path.string());
    moving.cfm = std::make_shared<const cfm::ClosestFeatureMap>(std::move(file.map));
    moving.cfm_metadata = std::move(file.metadata);
}

struct QuerySession::State {
    StaticField static_object;
    MovingObjectData moving_object;
    MovingObject view;  // kept here: VpsQuery's contract is that field and moving outlive it
    VpsQuery query;

    State(StaticField st, MovingObjectData mo, const QueryOptions& options)
        : static_object(std::move(st)), moving_object(std::move(mo)), view(moving_object.view()),
          query(static_object.field, view, options) {}
};

QuerySession::QuerySession(const std::filesystem::path& static_path, const std::filesystem::path& moving_path,
                           const QueryOptions& options)
    : QuerySession(static_path, moving_path, options, {}) {}

QuerySession::QuerySession(const std::filesystem::path& static_path, const std::filesystem::path& moving_path,
                           const QueryOptions& options, const std::filesystem::path& cfm_path) {
    if (!cfm_path.empty() && options.mode != QueryMode::time_critical)
        fail_usage(cfm_path.string() + ": a closest feature map is used only by the time-critical mode");
    StaticField st = load_static_field(static_path);
    MovingObjectData mo = load_moving_object(moving_path);
    if (!cfm_path.empty()) attach_cfm(mo, cfm_path, moving_path);
    if (!tree_covers_points(mo.tree, mo.points))
        fail_input(moving_path.string(),
                   "the point-sphere tree does not hold all its points in its spheres (rebuild it with haptic-spheretree)");
    // The state is built in place: the query keeps references to the field and the points.
    state_ = std::make_unique<State>(std::move(st), std::move(mo), options);
}

QuerySession::QuerySession(QuerySession&&) noexcept = default;
QuerySession& QuerySession::operator=(QuerySession&&) noexcept = default;
QuerySession::~QuerySession() = default;

const QueryResult& QuerySession::query(const Pose& pose) { return state_->query(pose); }
const QueryOptions& QuerySession::options() const { return state_->query.options(); }
const StaticField& QuerySession::static_object() const { return state_->static_object; }
const MovingObjectData& QuerySession::moving_object() const { return state_->moving_object; }

}  // namespace hp
