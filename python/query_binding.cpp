// The Python package's VPS query (module hapticprep._hapticprep, hapticprep_module.cpp):
// hapticprep.Query loads a static field and a moving tree once (lib/query/session.hpp) and runs
// poses, each result's contacts as numpy arrays. docs/python.md.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <array>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common.hpp"
#include "core/error.hpp"
#include "query/session.hpp"
#include "query/timing.hpp"

namespace hp::python {

namespace fs = std::filesystem;

namespace {



struct Contacts {
    py::object point, position, normal, value, segment, cluster;
    std::size_t size = 0;
};

struct Result {
    Contacts contacts;
    py::object force, torque, summary;
    double max_penetration = 0, min_distance_bound = 0, min_distance_checked = 0;
    std::size_t spheres_tested = 0, points_tested = 0, cfm_contacts = 0, queued = 0, queued_untested = 0;
    int level_reached = 0;
    bool interrupted = false;
};

class Query {
public:
    Query(const py::object& field, const py::object& tree, const py::object& cfm, const std::string& mode, int level,
          double budget_us, std::size_t budget_tests) {
        const hp::QueryOptions options{.mode = parse_mode(mode), .level = level, .budget_us = budget_us,
                                       .budget_tests = budget_tests};
        if (budget_tests > 0 && options.mode != hp::QueryMode::time_critical)
            hp::fail_usage("a budget in sphere tests applies only to the time-critical mode (the other modes never stop early), not mode '" +
                           mode + "'");
        const fs::path static_path = to_path(field), moving_path = to_path(tree);
        const fs::path cfm_path = cfm.is_none() ? fs::path() : to_path(cfm);
        py::gil_scoped_release release;
        session_.emplace(static_path, moving_path, options, cfm_path);
    }

    Result run(const std::array<double, 3>& position, const std::array<double, 4>& quaternion) {
        const hp::Pose pose{{position[0], position[1], position[2]}, quaternion};
        const hp::QueryResult& r = session_->query(pose);
        Result out;
        const std::size_t n = r.contacts.size();
        std::vector<std::uint32_t> point(n);
        std::vector<hp::Vec3d> pos(n), nrm(n);
        std::vector<double> value(n);
        std::vector<std::int32_t> segment(n), cluster(n);
        for (std::size_t i = 0; i < n; ++i) {
            const hp::Contact& c = r.contacts[i];
            point[i] = c.point;
            pos[i] = c.position;
            nrm[i] = c.normal;
            value[i] = c.value;
            segment[i] = c.segment;
            cluster[i] = c.cluster;
        }
        out.contacts = {vector_array(point), vec3_array(pos), vec3_array(nrm), vector_array(value),
                        vector_array(segment), vector_array(cluster), n};
        out.force = vec3(r.force);
        out.torque = vec3(r.torque);
        out.max_penetration = r.max_penetration;
        out.min_distance_bound = r.min_distance_bound;
        out.min_distance_checked = r.min_distance_checked;
        out.spheres_tested = r.spheres_tested;
        out.points_tested = r.points_tested;
        out.level_reached = r.level_reached;
        out.interrupted = r.interrupted;
        out.cfm_contacts = r.cfm_contacts;
        out.queued = r.queued;
        out.queued_untested = r.queued_untested;
        out.summary = to_python(hp::to_json(hp::summarize(r)));
        return out;
    }

    const hp::QuerySession& session() const { return *session_; }

private:
    std::optional<hp::QuerySession> session_;
};

}  // namespace

void bind_query(py::module_& m) {
    py::class_<Contacts>(m, "Contacts", "The contacts of one query, sorted as haptic-query sums them")
        .def_readonly("point", &Contacts::point, "uint32, moving object's point (0xffffffff for a CFM contact)")
        .def_readonly("position", &Contacts::position, "float64 (n, 3), static frame")
        .def_readonly("normal", &Contacts::normal, "float64 (n, 3), inward normal of the moving object, static frame")
        .def_readonly("value", &Contacts::value, "float64 (n,), penetration depth V(P) > 0")
        .def_readonly("segment", &Contacts::segment)
        .def_readonly("cluster", &Contacts::cluster)
        .def("__len__", [](const Contacts& c) { return c.size; });

    py::class_<Result>(m, "QueryResult", "One pose's contacts, force and torque")
        .def_readonly("contacts", &Result::contacts)
        .def_readonly("force", &Result::force, "float64 (3,): sum of V(P) n")
        .def_readonly("torque", &Result::torque, "float64 (3,): about the moving object's origin")
        .def_readonly("max_penetration", &Result::max_penetration)
        .def_readonly("min_distance_bound", &Result::min_distance_bound)
        .def_readonly("min_distance_checked", &Result::min_distance_checked)
        .def_readonly("spheres_tested", &Result::spheres_tested)
        .def_readonly("points_tested", &Result::points_tested)
        .def_readonly("level_reached", &Result::level_reached)
        .def_readonly("interrupted", &Result::interrupted)
        .def_readonly("cfm_contacts", &Result::cfm_contacts)
        .def_readonly("queued", &Result::queued)
        .def_readonly("queued_untested", &Result::queued_untested)
        .def_readonly("summary", &Result::summary, "the per_query entry haptic-query --report writes for this pose");

    py::class_<Query>(m, "Query", "Queries of a moving tree against a static field, loaded once (lib/query/session.hpp)")
        .def(py::init<const py::object&, const py::object&, const py::object&, const std::string&, int, double, std::size_t>(),
             py::arg("field"), py::arg("tree"), py::arg("cfm") = py::none(), py::arg("mode") = "full", py::arg("level") = 0,
             py::arg("budget_us") = 1000.0, py::arg("budget_tests") = 0)
        .def("run", &Query::run, py::arg("position"), py::arg("quaternion") = std::array<double, 4>{1, 0, 0, 0},
             "one pose (world point = R p + t; quaternion w, x, y, z): a QueryResult")
        .def_property_readonly("kind", [](const Query& q) { return q.session().static_object().kind; })
        .def_property_readonly("encoding", [](const Query& q) { return q.session().static_object().encoding; })
        .def("value", [](const Query& q, const std::array<double, 3>& p) -> double {
            return q.session().static_object().field.value(hp::Vec3d{p[0], p[1], p[2]});
        }, py::arg("point"), "the static object's distance V at a world point (trilinear, inside positive)");
}

}  // namespace hp::python
