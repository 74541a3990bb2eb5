#include "common/tool.hpp"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <new>
#include <optional>
#include <unistd.h>

#include <tbb/global_control.h>

#include "common/declared.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/version.hpp"
#include "pipeline/stage_common.hpp"

namespace hp::app {

namespace {
// SIGTERM, SIGINT, SIGHUP: remove the temporary files of the writes in progress, then die of the
// signal as before (exit status 128 + N), so an interrupted tool leaves no half-written file.
extern "C" void on_terminating_signal(int sig) {
    remove_pending_temporaries();
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}

void install_signal_cleanup() {
    for (int sig : {SIGTERM, SIGINT, SIGHUP}) {
        struct sigaction action {};
        action.sa_handler = on_terminating_signal;
        sigemptyset(&action.sa_mask);
        struct sigaction previous {};
        // A signal the caller chose to ignore (nohup, a shell's background job) stays ignored.
        if (::sigaction(sig, nullptr, &previous) == 0 && previous.sa_handler == SIG_IGN) continue;
        ::sigaction(sig, &action, nullptr);
    }
}
}  // namespace

struct Tool::Impl {
    std::optional<tbb::global_control> thread_limit;
    std::unique_ptr<DeclaredOptions> mesh_options;  // add_mesh_options: the declared options...
    MeshLoadOptions* mesh_target = nullptr;          // ...and where they go after parsing
    std::vector<Mode> modes;
    std::function<std::string()> current_mode;
    struct Applies {
        std::string option;
        std::vector<std::string> modes;
        std::map<std::string, std::string> why_not;  // per mode it does not serve: what that mode lacks for it
    };
    std::vector<Applies> applies;
    // "" or what is wrong: the first option given outside its modes.
    std::string mode_error(const CLI::App& cli) const {
        if (!current_mode) return {};
        const std::string now = current_mode();
        for (const auto& [option, list, why_not] : applies) {
            if (cli.get_option(option)->count() == 0 || std::find(list.begin(), list.end(), now) != list.end()) continue;
            std::string names;
            for (std::size_t i = 0; i < list.size(); ++i) names += (i == 0 ? "" : i + 1 == list.size() ? " and " : ", ") + list[i];
            const auto why = why_not.find(now);
            return option + " applies only to " + names + ", not " + now + (why == why_not.end() ? "" : ": " + why->second);
        }
        return {};
    }
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
    bool bar_drawn = false;
};

Tool::Tool(std::string name, const std::string& description, const std::string& examples)
    : cli(description, name), name_(std::move(name)), impl_(std::make_unique<Impl>()) {
    cli.footer(examples);
    cli.set_version_flag("--version", std::string(name_) + " (hapticprep) " + kVersion);
    cli.add_flag("--json", json, "print a machine-readable JSON summary on stdout");
    cli.add_flag("-q,--quiet", quiet, "no progress bar, warnings or text summary");
    cli.add_option("--threads", threads, "worker threads (default: all cores)")
        ->check(CLI::Range(0, 1024));
}

Tool::~Tool() = default;

void Tool::set_modes(std::vector<Mode> modes, std::function<std::string()> current) {
    impl_->modes = std::move(modes);
    impl_->current_mode = std::move(current);
}

void Tool::applies(const std::string& option, std::vector<std::string> modes, std::map<std::string, std::string> why_not) {
    cli.get_option(option);  // throws for an option the App does not have
    impl_->applies.push_back({option, std::move(modes), std::move(why_not)});
}

void Tool::add_mesh_options(MeshLoadOptions& options) {
    impl_->mesh_options = std::make_unique<DeclaredOptions>(cli, pipeline::mesh_params());
    impl_->mesh_target = &options;
}

nlohmann::json Tool::options_json() {
    nlohmann::json list = nlohmann::json::array();
    for (CLI::Option* opt : cli.get_options()) {
        std::string checks;
        for (int i = 0;; ++i) {
            try {
                const std::string d = opt->get_validator(i)->get_description();
                checks += (checks.empty() || d.empty() ? "" : "; ") + d;
            } catch (const CLI::OptionNotFound&) {
                break;
            }
        }
        nlohmann::json excludes = nlohmann::json::array();
        for (const CLI::Option* x : opt->get_excludes()) excludes.push_back(x->get_name());
        nlohmann::json o = {{"name", opt->get_name()}, {"flag", opt->get_expected_max() == 0}, {"type", opt->get_type_name()},
                            {"default", opt->get_default_str()}, {"check", checks}, {"excludes", excludes},
                            {"required", opt->get_required()}};
        for (const auto& a : impl_->applies)
            if (cli.get_option(a.option) == opt) o["modes"] = a.modes;
        list.push_back(o);
    }
    nlohmann::json modes = nlohmann::json::array();
    for (const Mode& m : impl_->modes) modes.push_back({{"name", m.name}, {"args", m.args}});
    return {{"tool", name_}, {"options", list}, {"modes", modes}};
}

int Tool::run(int argc, char** argv, const std::function<int()>& body) {
    // --help-json (not in --help): the options as this App declares them, for the test that
    // compares them with the stage's declaration.
    for (int i = 1; i < argc; ++i)
        if (std::string_view(argv[i]) == "--help-json") {
            std::cout << options_json().dump(1) << std::endl;
            return 0;
        }
    try {
        cli.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return cli.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return cli.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return cli.exit(e);
    } catch (const CLI::ParseError& e) {
        std::cerr << name_ << ": " << e.what() << " (see " << name_ << " --help)\n";
        return static_cast<int>(ExitCode::usage);
    }
    if (const std::string what = impl_->mode_error(cli); !what.empty()) {
        std::cerr << name_ << ": " << what << "\n";
        return static_cast<int>(ExitCode::usage);
    }
    if (impl_->mesh_target)
        pipeline::apply(pipeline::read_params<pipeline::MeshParams>(pipeline::mesh_params(), impl_->mesh_options->values()),
                        *impl_->mesh_target);
    install_signal_cleanup();
    // -o - : the file goes to the standard output, so everything the tool prints there (the text
    // summary, --json) goes to the standard error instead.
    const CLI::Option* out = cli.get_option_no_throw("--output");
    if (output_is_file && out && out->count() && out->as<std::string>() == "-") {
        std::fflush(stdout);
        std::cout.flush();
        const int data = ::dup(STDOUT_FILENO);
        if (data < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
            std::cerr << name_ << ": -: cannot set up the standard output for the file\n";
            return static_cast<int>(ExitCode::cannot_write);
        }
        set_standard_output_fd(data);
    }
    if (threads > 0)
        impl_->thread_limit.emplace(tbb::global_control::max_allowed_parallelism,
                                    static_cast<std::size_t>(threads));
    try {
        int code = body();
        if (impl_->bar_drawn) std::cerr << "\r\033[K" << std::flush;
#if !defined(__SANITIZE_ADDRESS__)
        if (exit_without_freeing && code == 0) {
            std::cout.flush();
            std::cerr.flush();
            std::fflush(nullptr);
            std::_Exit(code);
        }
#endif
        return code;
    } catch (const Error& e) {
        if (impl_->bar_drawn) std::cerr << "\r\033[K";
        std::cerr << name_ << ": " << e.what() << "\n";
        return e.exit_code();
    } catch (const std::bad_alloc&) {
        if (impl_->bar_drawn) std::cerr << "\r\033[K";
        std::cerr << name_ << ": out of memory (try a coarser voxel size or fewer threads)\n";
        return static_cast<int>(ExitCode::bad_input);
    } catch (const std::exception& e) {
        if (impl_->bar_drawn) std::cerr << "\r\033[K";
        std::cerr << name_ << ": internal error: " << e.what() << "\n";
        return static_cast<int>(ExitCode::bad_input);
    }
}

void Tool::warn(const std::string& message) const {
    if (!quiet) std::cerr << name_ << ": warning: " << message << "\n";
}

Progress Tool::progress() {
    if (quiet || json || !::isatty(STDERR_FILENO)) return {};
    Impl* impl = impl_.get();
    return Progress{[impl](std::string_view phase, double fraction) {
        using namespace std::chrono;
        auto now = steady_clock::now();
        if (now - impl->start < seconds(1)) return;
        static thread_local steady_clock::time_point last{};
        if (now - last < milliseconds(100) && fraction < 1.0) return;
        last = now;
        const int width = 30;
        int filled = static_cast<int>(std::clamp(fraction, 0.0, 1.0) * width + 0.5);
        std::string bar(static_cast<std::size_t>(filled), '#');
        bar.resize(width, '.');
        std::fprintf(stderr, "\r\033[K%-10.*s [%s] %3d%%", static_cast<int>(phase.size()), phase.data(),
                     bar.c_str(), static_cast<int>(fraction * 100 + 0.5));
        std::fflush(stderr);
        impl->bar_drawn = true;
    }};
}

void Tool::print_json(const nlohmann::json& j) const {
    if (json) std::cout << j.dump(2) << std::endl;
}

}  // namespace hp::app
