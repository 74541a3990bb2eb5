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

// None, one item or a list (tuple) of items.
std::vector<py::handle> items(const py::object& o) {
    std::vector<py::handle> out;
    if (o.is_none()) return out;
    if (py::isinstance<py::list>(o) || py::isinstance<py::tuple>(o)) {
        for (const py::handle h : o) out.push_back(h);
        return out;
    }
    out.push_back(o);
    return out;
}

class Scene {
public:
    // cfm: None or False (no map), True (each tool part's map of scene.json), or the outside tool's
    // map file (the parts' still the scene's).
    Scene(const py::object& path, const py::object& tool, const py::object& tool_files, const std::string& mode, int level,
          double budget_us, std::size_t budget_tests, int threads, const py::object& cfm) {
        const hp::QueryOptions options{.mode = parse_mode(mode), .level = level, .budget_us = budget_us,
                                       .budget_tests = budget_tests};
        std::vector<hp::scene::ToolSpec> tools;
        for (const py::handle h : items(tool)) tools.push_back({py::cast<std::string>(h), {}});
        for (const py::handle h : items(tool_files)) tools.push_back({{}, to_path(h)});
        const bool maps = !cfm.is_none() && (!py::isinstance<py::bool_>(cfm) || cfm.cast<bool>());
        const std::filesystem::path map_file = maps && !py::isinstance<py::bool_>(cfm) ? to_path(cfm) : std::filesystem::path();
        for (hp::scene::ToolSpec& t : tools) {
            t.cfm = maps;
            if (t.part.empty()) t.cfm_file = map_file;
        }
        if (tools.empty())
            hp::fail_usage("give the tool as tool= (a part of the scene) or as tool_files= (a tree file), one of them "
                           "(or lists of them: several tools, the parts first)");
        const std::filesystem::path scene_path = to_path(path);
        py::gil_scoped_release release;
        query_.emplace(scene_path, options, tools, threads);
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

    // The tools along N frames (positions (N, 3), quaternions (N, 4) w, x, y, z, world frame; with
    // T > 1 tools (N, T, 3) and (N, T, 4)): every contact with its frame, part (and tool), and per
    // part (and tool) and in total the force and torque of every frame.
    py::dict query(const py::array_t<double, py::array::c_style | py::array::forcecast>& positions,
                   const py::array_t<double, py::array::c_style | py::array::forcecast>& quaternions) {
        const std::size_t tools = query_->tool_count();
        const py::ssize_t dims = tools == 1 ? 2 : 3;
        const auto t_dim = static_cast<py::ssize_t>(tools);
        if (positions.ndim() != dims || positions.shape(dims - 1) != 3 || (tools > 1 && positions.shape(1) != t_dim))
            hp::fail_usage(tools == 1 ? "positions must have the shape (N, 3)" : "positions must have the shape (N, tools, 3)");
        if (quaternions.ndim() != dims || quaternions.shape(dims - 1) != 4 || quaternions.shape(0) != positions.shape(0) ||
            (tools > 1 && quaternions.shape(1) != t_dim))
            hp::fail_usage(tools == 1 ? "quaternions must have the shape (N, 4), one per position (w, x, y, z)"
                                      : "quaternions must have the shape (N, tools, 4), one per position (w, x, y, z)");
        const auto n = static_cast<std::size_t>(positions.shape(0));
        const std::size_t parts = query_->scene().parts.size();
        const double* p = positions.data();
        const double* q = quaternions.data();
        std::vector<std::uint32_t> frame, part, tool;
        std::vector<hp::Vec3d> position, normal, force(n), torque(n), tool_force(n * tools), tool_torque(n * tools),
            part_force(n * tools * parts), part_torque(n * tools * parts);
        std::vector<double> value;
        std::vector<std::uint32_t> part_contacts(n * tools * parts, 0), candidates(n), touched(n);
        {
            py::gil_scoped_release release;
            std::vector<hp::Pose> poses(tools);
            for (std::size_t i = 0; i < n; ++i) {
                for (std::size_t t = 0; t < tools; ++t) {
                    const std::size_t k = i * tools + t;
                    poses[t] = {{p[3 * k], p[3 * k + 1], p[3 * k + 2]}, {q[4 * k], q[4 * k + 1], q[4 * k + 2], q[4 * k + 3]}};
                }
                const hp::scene::FrameResult& r = query_->query(poses);
                force[i] = r.force;
                torque[i] = r.torque;
                candidates[i] = static_cast<std::uint32_t>(r.candidates.size());
                touched[i] = static_cast<std::uint32_t>(r.parts_touched);
                for (std::size_t t = 0; t < tools; ++t) {
                    tool_force[i * tools + t] = r.tools[t].force;
                    tool_torque[i * tools + t] = r.tools[t].torque;
                }
                for (const hp::scene::PairResult& pr : r.pairs) {
                    const std::size_t slot = (i * tools + pr.tool) * parts + pr.part;
                    part_force[slot] = pr.force;
                    part_torque[slot] = pr.torque;
                    part_contacts[slot] = static_cast<std::uint32_t>(pr.contacts);
                    for (std::size_t c = pr.first_contact; c < pr.first_contact + pr.contacts; ++c) {
                        frame.push_back(static_cast<std::uint32_t>(i));
                        part.push_back(pr.part);
                        tool.push_back(pr.tool);
                        position.push_back(r.contacts[c].position);
                        normal.push_back(r.contacts[c].normal);
                        value.push_back(r.contacts[c].value);
                    }
                }
            }
        }
        // (N, parts[, 3]) with one tool, (N, tools, parts[, 3]) with several.
        auto shape = [&](bool xyz) {
            std::vector<py::ssize_t> s{static_cast<py::ssize_t>(n)};
            if (tools > 1) s.push_back(t_dim);
            s.push_back(static_cast<py::ssize_t>(parts));
            if (xyz) s.push_back(3);
            return s;
        };
        auto per_part = [&](const std::vector<hp::Vec3d>& v) {
            py::array_t<double> a(shape(true));
            double* m = a.mutable_data();
            for (std::size_t k = 0; k < v.size(); ++k)
                for (int c = 0; c < 3; ++c) m[3 * k + static_cast<std::size_t>(c)] = v[k][c];
            return a;
        };
        py::array_t<std::uint32_t> counts(shape(false));
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
        if (tools > 1) {
            out["tool"] = vector_array(tool);
            out["tool_force"] = vec3_array(tool_force).attr("reshape")(static_cast<py::ssize_t>(n), t_dim, 3);
            out["tool_torque"] = vec3_array(tool_torque).attr("reshape")(static_cast<py::ssize_t>(n), t_dim, 3);
        }
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
        .def(py::init<const py::object&, const py::object&, const py::object&, const std::string&, int, double, std::size_t, int,
                      const py::object&>(),
             py::arg("path"), py::arg("tool") = py::none(), py::arg("tool_files") = py::none(), py::arg("mode") = "full",
             py::arg("level") = 0, py::arg("budget_us") = 1000.0, py::arg("budget_tests") = 0, py::arg("threads") = 1,
             py::arg("cfm") = py::none(),
             "mode: full, brute, segmented or time-critical; cfm (time-critical): True for each tool part's closest feature "
             "map of scene.json, or the outside tool's map file")
        .def_property_readonly("parts", &Scene::parts, "the scene's parts: name, geometry, position, quaternion")
        .def_property_readonly("tool_part", [](const Scene& s) -> py::object {
            const auto t = s.query_object().tool_part();
            return t ? py::cast(*t) : py::none();
        }, "the first tool's part index (None for an outside tool)")
        .def_property_readonly("tools", [](const Scene& s) {
            py::list out;
            for (std::size_t t = 0; t < s.query_object().tool_count(); ++t) out.append(s.query_object().tool_label(t));
            return out;
        }, "the tools in their order (parts of tool=, then files of tool_files=): a part's name or a tree file")
        .def_property_readonly("load_seconds", [](const Scene& s) { return s.query_object().load_seconds(); })
        .def("query", &Scene::query, py::arg("positions"), py::arg("quaternions"),
             "the tool at N world poses (positions (N, 3), quaternions (N, 4) w, x, y, z): a dict of numpy arrays, "
             "contacts (frame, part, position, normal, value; world frame), force and torque per frame (N, 3) and per "
             "part (N, parts, 3), part_contacts (N, parts), candidates and parts_touched (N,). With T tools the poses are "
             "(N, T, 3) and (N, T, 4), the per-part arrays gain the tool axis (N, T, parts[, 3]), and tool (per contact), "
             "tool_force and tool_torque (N, T, 3) are added");
}

}  // namespace hp::python
