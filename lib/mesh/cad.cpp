// STEP and IGES files (mesh/cad.hpp): recognised here; read by the module hapticprep_cad.so
// (cad_occt.cpp, OpenCASCADE), loaded on the first such file.
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
#include <dlfcn.h>
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

using AbiFn = const char* (*)();
using ReadFn = void (*)(const std::filesystem::path&, const MeshLoadOptions&, Assembly&);
constexpr const char* kModuleName = "hapticprep_cad.so";

// Where the module may be, in order: HP_CAD_MODULE; next to the binary that holds this code (an
// executable, or the Python extension); its ../<libdir>/hapticprep/ (the install layout: bin/ and
// lib/hapticprep/); the install directory and the build directory this library was built for.
std::vector<std::filesystem::path> module_candidates() {
    std::vector<std::filesystem::path> out;
    if (const char* env = std::getenv("HP_CAD_MODULE"); env && *env) out.emplace_back(env);
    // The binary holding this code: a shared object (the Python extension) by dladdr, else the
    // executable (dladdr names the main program by its argv[0], or not at all).
    Dl_info info{};
    std::string binary = "/proc/self/exe";
    if (dladdr(reinterpret_cast<void*>(&cad_module_path), &info) && info.dli_fname &&
        std::string_view(info.dli_fname).find(".so") != std::string_view::npos)
        binary = info.dli_fname;
    {
        std::error_code ec;
        const std::filesystem::path self = std::filesystem::canonical(binary, ec);
        if (!ec) {
            out.push_back(self.parent_path() / kModuleName);
            out.push_back(self.parent_path().parent_path() / HP_CAD_MODULE_LIBDIR / "hapticprep" / kModuleName);
        }
    }
    out.push_back(std::filesystem::path(HP_CAD_MODULE_INSTALL_DIR) / kModuleName);
    out.push_back(std::filesystem::path(HP_CAD_MODULE_BUILD_DIR) / kModuleName);
    return out;
}

struct Module {
    std::filesystem::path path;
    ReadFn read = nullptr;
    std::string error;  // why it could not be loaded
};

const Module& module() {
    static const Module loaded = [] {
        Module m;
        std::string tried;
        for (const std::filesystem::path& candidate : module_candidates()) {
            std::error_code ec;
            if (!std::filesystem::is_regular_file(candidate, ec)) {
                tried += (tried.empty() ? "" : ", ") + candidate.string();
                continue;
            }
            void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
            if (!handle) {
                const char* why = dlerror();
                m.error = candidate.string() + " cannot be loaded (" + (why ? why : "unknown") + ")";
                return m;
            }
            const auto abi = reinterpret_cast<AbiFn>(dlsym(handle, "hp_cad_abi_v1"));
            const auto read = reinterpret_cast<ReadFn>(dlsym(handle, "hp_cad_read_v1"));
            if (!abi || !read || abi() != cad_abi_key()) {
                m.error = candidate.string() + " is from another build of hapticprep (expected " + cad_abi_key() + ")";
                return m;  // the handle stays loaded: unloading a C++ library is not worth the risk
            }
            m.path = candidate;
            m.read = read;
            return m;
        }
        m.error = "its OpenCASCADE module " + std::string(kModuleName) + " is not installed (looked in " + tried +
                  "; set HP_CAD_MODULE to its path)";
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
