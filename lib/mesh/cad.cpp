// STEP and IGES files (mesh/cad.hpp): recognised here; read by the module hapticprep_cad.so
// (cad_occt.cpp, OpenCASCADE), loaded on the first such file (core/module.hpp).
#include "mesh/cad.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "core/error.hpp"

#ifdef HP_HAVE_OCCT
#include "core/module.hpp"
#endif

namespace hp {

std::string_view cad_kind(std::string_view head) {
    std::size_t i = 0;
    while (i < head.size() && std::isspace(static_cast<unsigned char>(head[i]))) ++i;
    if (head.substr(i).starts_with("ISO-10303-21;")) return "step";
    // IGES: fixed 80-column records, the first one of the Start section ('S' in column 73).
    const std::size_t eol = head.find_first_of("\r\n");
    const std::string_view first = head.substr(0, eol);
    if (first.size() >= 73 && first.size() <= 82 && first[72] == 'S') return "iges";
    return "";
}

std::string_view cad_file_kind(const std::filesystem::path& path) {
    char buf[128];
    std::size_t n = 0;
    if (std::FILE* f = std::fopen(path.c_str(), "rb")) {
        n = std::fread(buf, 1, sizeof buf, f);
        std::fclose(f);
    }
    const std::string_view kind = cad_kind(std::string_view(buf, n));
    if (!kind.empty()) return kind;
    std::string ext = path.extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (ext == ".step" || ext == ".stp") return "step";
    if (ext == ".iges" || ext == ".igs") return "iges";
    return "";
}

#ifndef HP_HAVE_OCCT

bool cad_supported() { return false; }

std::filesystem::path cad_module_path() { return {}; }

Assembly read_cad_assembly(const std::filesystem::path& path, const MeshLoadOptions&) {
    fail_input(path.string(), "is a " + std::string(cad_file_kind(path) == "iges" ? "IGES" : "STEP") +
                                  " file, and this build reads STEP and IGES only with OpenCASCADE (run "
                                  "scripts/install-deps.sh and build again), or convert it to a mesh format");
}

#else

bool cad_supported() { return true; }

namespace {

using ReadFn = void (*)(const std::filesystem::path&, const MeshLoadOptions&, Assembly&);

struct Module {
    std::filesystem::path path;
    ReadFn read = nullptr;
    std::string error;  // why it could not be loaded
};

const Module& module() {
    static const Module loaded = [] {
        const ModuleHandle handle = load_module("hapticprep_cad.so", "HP_CAD_MODULE", "hp_cad_abi_v1", cad_abi_key());
        Module m;
        m.path = handle.path;
        m.error = handle.error;
        m.read = reinterpret_cast<ReadFn>(module_symbol(handle, "hp_cad_read_v1"));
        if (handle.handle && !m.read) m.error = handle.path.string() + " lacks its entry hp_cad_read_v1";
        return m;
    }();
    return loaded;
}

}  // namespace

std::filesystem::path cad_module_path() { return module().path; }

Assembly read_cad_assembly(const std::filesystem::path& path, const MeshLoadOptions& options) {
    if (!(options.scale > 0) || !std::isfinite(options.scale)) fail_usage("the scale must be a positive number");
    unit_factor(options.units);  // refuses an unknown unit before any work
    const Module& m = module();
    if (!m.read)
        fail_input(path.string(), "is a " + std::string(cad_file_kind(path) == "iges" ? "IGES" : "STEP") +
                                      " file, and this installation cannot read it: " + m.error);
    Assembly out;
    m.read(path, options, out);
    out.tessellation.module = m.path.string();
    return out;
}

#endif

}  // namespace hp
