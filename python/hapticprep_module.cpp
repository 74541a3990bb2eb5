// The Python package hapticprep (module hapticprep._hapticprep): the toolchain's files as numpy
// arrays (files_binding.cpp), the VPS query (query_binding.cpp) and scenes (scene_binding.cpp),
// through the library's own readers (formats/*, lib/query, lib/inspect). Every hp::Error becomes
// hapticprep.Error with the same one-line message and its exit code; the readers validate a file
// completely before anything is returned, so a damaged file raises and never crashes. Arrays are
// copies owned by Python. The API in Python terms: docs/python.md.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <filesystem>

#include "common.hpp"
#include "core/error.hpp"
#include "core/version.hpp"
#include "inspect/check.hpp"
#include "inspect/inspect.hpp"

namespace py = pybind11;
namespace fs = std::filesystem;
using hp::python::to_path;
using hp::python::to_python;

PYBIND11_MODULE(_hapticprep, m) {
    m.doc() = "hapticprep's files as numpy arrays and the VPS query (docs/python.md)";
    m.attr("__version__") = hp::kVersion;
    hp::python::bind_scene(m);

    static py::exception<hp::Error> error(m, "Error", PyExc_RuntimeError);
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const hp::Error& e) {
            py::object instance = py::reinterpret_borrow<py::object>(error.ptr())(e.what());
            instance.attr("exit_code") = e.exit_code();
            PyErr_SetObject(error.ptr(), instance.ptr());
        }
    });

    hp::python::bind_files(m);
    hp::python::bind_query(m);

    m.def(
        "describe",
        [](const py::object& p) {
            const fs::path path = to_path(p);
            nlohmann::json j;
            {
                py::gil_scoped_release release;
                j = hp::inspect::describe(path).json;
            }
            return to_python(j);
        },
        py::arg("path"), "what haptic-dump --json prints about a file");
    m.def(
        "check",
        [](const py::object& p) {
            const fs::path path = to_path(p);
            nlohmann::json j;
            {
                py::gil_scoped_release release;
                j = hp::inspect::check(path).summary(std::size_t(-1)).json;
            }
            return to_python(j);
        },
        py::arg("path"), "what haptic-dump --check --json prints about a file");
}
