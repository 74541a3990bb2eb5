#include "core/module.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <string_view>
#include <system_error>
#include <vector>

namespace hp {

namespace {

std::vector<std::filesystem::path> candidates(const char* file_name, const char* env) {
    std::vector<std::filesystem::path> out;
    if (const char* given = std::getenv(env); given && *given) out.emplace_back(given);
    // The binary holding this code: a shared object (the Python extension) by dladdr, else the
    // executable (dladdr names the main program by its argv[0], or not at all).
    Dl_info info{};
    std::string binary = "/proc/self/exe";
    if (dladdr(reinterpret_cast<void*>(&load_module), &info) && info.dli_fname &&
        std::string_view(info.dli_fname).find(".so") != std::string_view::npos)
        binary = info.dli_fname;
    std::error_code ec;
    const std::filesystem::path self = std::filesystem::canonical(binary, ec);
    if (!ec) {
        out.push_back(self.parent_path() / file_name);
        out.push_back(self.parent_path().parent_path() / HP_MODULE_LIBDIR / "hapticprep" / file_name);
    }
    out.push_back(std::filesystem::path(HP_MODULE_INSTALL_DIR) / file_name);
    out.push_back(std::filesystem::path(HP_MODULE_BUILD_DIR) / file_name);
    return out;
}

}  // namespace

ModuleHandle load_module(const char* file_name, const char* env, const char* abi_symbol, const std::string& abi_key) {
    ModuleHandle m;
    std::string tried;
    for (const std::filesystem::path& candidate : candidates(file_name, env)) {
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
        const auto abi = reinterpret_cast<const char* (*)()>(dlsym(handle, abi_symbol));
        if (!abi || abi() != abi_key) {
            m.error = candidate.string() + " is from another build of hapticprep (expected " + abi_key + ")";
            return m;  // the handle stays loaded: unloading a C++ library is not worth the risk
        }
        m.path = candidate;
        m.handle = handle;
        return m;
    }
    m.error = "its module " + std::string(file_name) + " is not installed (looked in " + tried + "; set " + env +
              " to its path)";
    return m;
}

void* module_symbol(const ModuleHandle& module, const char* name) {
    return module.handle ? dlsym(module.handle, name) : nullptr;
}

}  // namespace hp
