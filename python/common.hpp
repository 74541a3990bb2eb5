#pragma once
// Conversions shared by the Python module's files (hapticprep_module.cpp, *_binding.cpp).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "contact/query.hpp"
#include "core/error.hpp"
#include "math/vec.hpp"

namespace hp::python {

namespace py = pybind11;

// A str, a pathlib.Path, or a loaded file object (its .path).
inline std::filesystem::path to_path(const py::handle& h) {
    py::object o = py::reinterpret_borrow<py::object>(h);
    if (py::hasattr(o, "path") && !py::isinstance<py::str>(o)) o = o.attr("path");
    return std::filesystem::path(py::str(py::module_::import("os").attr("fspath")(o)).cast<std::string>());
}

template <class T>
py::array_t<T> vector_array(const std::vector<T>& v) {
    py::array_t<T> a(static_cast<py::ssize_t>(v.size()));
    if (!v.empty()) std::memcpy(a.mutable_data(), v.data(), v.size() * sizeof(T));
    return a;
}

inline py::array_t<double> vec3_array(const std::vector<hp::Vec3d>& v) {
    py::array_t<double> a({static_cast<py::ssize_t>(v.size()), py::ssize_t{3}});
    auto m = a.mutable_unchecked<2>();
    for (std::size_t i = 0; i < v.size(); ++i)
        for (int c = 0; c < 3; ++c) m(static_cast<py::ssize_t>(i), c) = v[i][c];
    return a;
}

inline py::array_t<double> vec3(const hp::Vec3d& v) {
    py::array_t<double> a(3);
    auto m = a.mutable_unchecked<1>();
    for (int c = 0; c < 3; ++c) m(c) = v[c];
    return a;
}

inline hp::QueryMode parse_mode(const std::string& name) {
    if (name == "full") return hp::QueryMode::full;
    if (name == "brute") return hp::QueryMode::brute;
    if (name == "segmented") return hp::QueryMode::segmented;
    if (name == "time-critical" || name == "time_critical") return hp::QueryMode::time_critical;
    hp::fail_usage("unknown query mode '" + name + "' (full, brute, segmented or time-critical)");
}

// A JSON value as the Python object json.loads makes of it: the same numbers and strings as the
// tools' --json (nlohmann's shortest round-trip doubles).
inline py::object to_python(const nlohmann::json& j) { return py::module_::import("json").attr("loads")(j.dump()); }

// The module's classes and functions by concern: the files (files_binding.cpp), the query
// (query_binding.cpp), scenes (scene_binding.cpp).
void bind_files(py::module_& m);
void bind_query(py::module_& m);
void bind_scene(py::module_& m);

}  // namespace hp::python
