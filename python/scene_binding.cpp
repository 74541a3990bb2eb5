// hapticprep.Scene: a scene.json of haptic-pipeline --assembly queried with a tool along many poses
// (lib/scene/scene_query.hpp; docs/scene.md, docs/python.md).
#include <pybind11/stl.h>

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "common.hpp"
#include "scene/scene_query.hpp"

namespace hp::python {

namespace {

class Scene {
public:
    Scene(const py::object& path, const std::optional<std::string>& tool, const py::object& tool_files, const std::string& mode,
          int level, double budget_us, std::size_t budget_tests, int threads) {
        const hp::QueryOptions options{.mode = parse_mode(mode), .level = level, .budget_us = budget_us,
                                       .budget_tests = budget_tests};
        if (tool.has_value() == !tool_files.is_none())
            hp::fail_usage("give the tool as tool= (a part of the scene) or as tool_files= (a tree file), one of them");
        hp::scene::ToolSpec spec;
        if (tool) spec.part = *tool;
        else spec.tree_file = to_path(tool_files);
        const std::filesystem::path scene_path = to_path(path);
        py::gil_scoped_release release;
        query_.emplace(scene_path, spec, options, threads);
    }

    // One row per part: name, geometry, position, quaternion (what the query places).
    py::list parts() const {
        py::list out;
        const hp::scene::Scene& s = query_->scene();
        for (const auto& p : s.parts) {
            py::dict d;
            d["name"] = p.name;
            d["geometry"] = s.geometries[p.geometry].id;
            d["position"] = vec3(p.placement.position);
            d["quaternion"] = vector_array(std::vector<double>(p.placement.quaternion.begin(), p.placement.quaternion.end()));
            out.append(d);
        }
        return out;
    }

    // The tool along N poses (positions (N, 3), quaternions (N, 4) w, x, y, z, world frame):
    // every contact with its frame and part, and per part and in total the force and torque of
    // every frame.
    py::dict query(const py::array_t<double, py::array::c_style | py::array::forcecast>& positions,
                   const py::array_t<double, py::array::c_style | py::array::forcecast>& quaternions) {
        if (positions.ndim() != 2 || positions.shape(1) != 3)
            hp::fail_usage("positions must have the shape (N, 3)");
        if (quaternions.ndim() != 2 || quaternions.shape(1) != 4 || quaternions.shape(0) != positions.shape(0))
            hp::fail_usage("quaternions must have the shape (N, 4), one per position (w, x, y, z)");
        const auto n = static_cast<std::size_t>(positions.shape(0));
        const std::size_t parts = query_->scene().parts.size();
        const auto p = positions.unchecked<2>();
        const auto q = quaternions.unchecked<2>();
        std::vector<std::uint32_t> frame, part;
        std::vector<hp::Vec3d> position, normal, force(n), torque(n), part_force(n * parts), part_torque(n * parts);
        std::vector<double> value;
        std::vector<std::uint32_t> part_contacts(n * parts, 0), candidates(n), touched(n);
        {
            py::gil_scoped_release release;
            for (std::size_t i = 0; i < n; ++i) {
                const auto ii = static_cast<py::ssize_t>(i);
                const hp::Pose pose{{p(ii, 0), p(ii, 1), p(ii, 2)}, {q(ii, 0), q(ii, 1), q(ii, 2), q(ii, 3)}};
                const hp::scene::FrameResult& r = query_->query(pose);
                force[i] = r.force;
                torque[i] = r.torque;
                candidates[i] = static_cast<std::uint32_t>(r.candidates.size());
                touched[i] = static_cast<std::uint32_t>(r.parts_touched);
                for (const hp::scene::PairResult& pr : r.pairs) {
                    part_force[i * parts + pr.part] = pr.force;
                    part_torque[i * parts + pr.part] = pr.torque;
                    part_contacts[i * parts + pr.part] = static_cast<std::uint32_t>(pr.contacts);
                    for (std::size_t c = pr.first_contact; c < pr.first_contact + pr.contacts; ++c) {
                        frame.push_back(static_cast<std::uint32_t>(i));
                        part.push_back(pr.part);
                        position.push_back(r.contacts[c].position);
                        normal.push_back(r.contacts[c].normal);
                        value.push_back(r.contacts[c].value);
                    }
                }
            }
        }
        auto per_part = [&](const std::vector<hp::Vec3d>& v) {
            py::array_t<double> a({static_cast<py::ssize_t>(n), static_cast<py::ssize_t>(parts), py::ssize_t{3}});
            auto m = a.mutable_unchecked<3>();
            for (std::size_t i = 0; i < n; ++i)
                for (std::size_t k = 0; k < parts; ++k)
                    for (int c = 0; c < 3; ++c)
                        m(static_cast<py::ssize_t>(i), static_cast<py::ssize_t>(k), c) = v[i * parts + k][c];
            return a;
        };
        py::array_t<std::uint32_t> counts({static_cast<py::ssize_t>(n), static_cast<py::ssize_t>(parts)});
        if (!part_contacts.empty()) std::memcpy(counts.mutable_data(), part_contacts.data(), part_contacts.size() * sizeof(std::uint32_t));
        py::dict out;
        out["frame"] = vector_array(frame);
        out["part"] = vector_array(part);
        out["position"] = vec3_array(position);
        out["normal"] = vec3_array(normal);
        out["value"] = vector_array(value);
        out["force"] = vec3_array(force);
        out["torque"] = vec3_array(torque);
        out["part_force"] = per_part(part_force);
        out["part_torque"] = per_part(part_torque);
        out["part_contacts"] = counts;
        out["candidates"] = vector_array(candidates);
        out["parts_touched"] = vector_array(touched);
        return out;
    }

    const hp::scene::SceneQuery& query_object() const { return *query_; }

private:
    std::optional<hp::scene::SceneQuery> query_;
};

}  // namespace

void bind_scene(py::module_& m) {
    py::class_<Scene>(m, "Scene",
                      "A scene.json of haptic-pipeline --assembly and a tool moving among its parts, loaded once "
                      "(each geometry's files once, whatever its instances; docs/scene.md)")
        .def(py::init<const py::object&, const std::optional<std::string>&, const py::object&, const std::string&, int, double,
                      std::size_t, int>(),
             py::arg("path"), py::arg("tool") = py::none(), py::arg("tool_files") = py::none(), py::arg("mode") = "full",
             py::arg("level") = 0, py::arg("budget_us") = 1000.0, py::arg("budget_tests") = 0, py::arg("threads") = 1)
        .def_property_readonly("parts", &Scene::parts, "the scene's parts: name, geometry, position, quaternion")
        .def_property_readonly("tool_part", [](const Scene& s) -> py::object {
            const auto t = s.query_object().tool_part();
            return t ? py::cast(*t) : py::none();
        })
        .def_property_readonly("load_seconds", [](const Scene& s) { return s.query_object().load_seconds(); })
        .def("query", &Scene::query, py::arg("positions"), py::arg("quaternions"),
             "the tool at N world poses (positions (N, 3), quaternions (N, 4) w, x, y, z): a dict of numpy arrays, "
             "contacts (frame, part, position, normal, value; world frame), force and torque per frame (N, 3) and per "
             "part (N, parts, 3), part_contacts (N, parts), candidates and parts_touched (N,)");
}

}  // namespace hp::python
