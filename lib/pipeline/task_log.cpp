#include "pipeline/task_log.hpp"

#include <cerrno>
#include <cstring>
#include <ctime>

#include <unistd.h>

#include "core/error.hpp"
#include "core/version.hpp"

namespace hp::pipeline {

namespace fs = std::filesystem;

fs::path log_path(const std::string& pattern, const Shard& shard) {
    std::string out;
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        if (pattern[i] != '%') {
            out += pattern[i];
            continue;
        }
        const char c = i + 1 < pattern.size() ? pattern[i + 1] : '\0';
        if (c == '%') {
            out += '%';
        } else if (c == 'I' || c == 'N') {
            if (!shard.active())
                fail_usage("--log " + pattern + ": %" + std::string(1, c) +
                           " stands for the shard's index or count, and there is no --shard");
            out += std::to_string(c == 'I' ? shard.index : shard.count);
        } else {
            fail_usage("--log " + pattern + ": '%' starts %I (shard index), %N (shard count) or %% (a percent sign)");
        }
        ++i;
    }
    if (out.empty()) fail_usage("--log needs a file name");
    return out;
}

TaskLog::TaskLog(const std::string& pattern, const Shard& shard) : file_(log_path(pattern, shard)) {
    std::error_code ec;
    if (file_.has_parent_path()) fs::create_directories(file_.parent_path(), ec);
    out_ = std::fopen(file_.c_str(), "a");
    if (!out_) fail_write(file_.string(), std::string("cannot open the log to append (") + std::strerror(errno) + ")");
}

TaskLog::~TaskLog() {
    if (out_) std::fclose(out_);
}

void TaskLog::line(const std::string& text) {
    char stamp[32] = "";
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    if (gmtime_r(&now, &utc)) std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &utc);
    const std::string l = std::string(stamp) + " " + text + "\n";
    if (std::fwrite(l.data(), 1, l.size(), out_) != l.size() || std::fflush(out_) != 0) write_failed_ = true;
}

void TaskLog::start(const Pipeline& pipeline, const BatchOptions& options, std::size_t meshes,
                    const std::string& shard_source) {
    char host[256] = "?";
    if (::gethostname(host, sizeof host - 1) != 0) std::strcpy(host, "?");
    std::string shard = "no shard";
    if (options.shard.active())
        shard = "shard " + std::to_string(options.shard.index) + "/" + std::to_string(options.shard.count) + " (" +
                shard_source + ")";
    line("start: haptic-pipeline " + std::string(kVersion) + ", pipeline " + pipeline.name + " (" + pipeline.source +
         ", params_hash " + pipeline.params_hash() + "), " + shard + ", " + std::to_string(meshes) + " of " +
         std::to_string(options.batch_meshes) + " meshes, -j " + std::to_string(options.jobs) +
         (options.resume ? ", --resume" : "") + ", output " + options.outdir.string() + ", host " + host + ", pid " +
         std::to_string(::getpid()));
}

void TaskLog::mesh_started(const MeshJob& job) { line("mesh " + job.name + ": started (" + job.mesh.string() + ")"); }

void TaskLog::mesh_finished(const MeshEntry& entry) {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.2f s", entry.seconds);
    std::string text = "mesh " + entry.name + ": ";
    if (entry.resumed)
        text += "ok, resumed (outputs of an earlier run)";
    else if (entry.status == MeshStatus::ok)
        text += "ok in " + std::string(seconds);
    else
        text += "failed (exit code " + std::to_string(entry.exit_code.value_or(0)) + ") after " + seconds + ": " +
                entry.error.value_or("");
    line(text);
}

void TaskLog::end(const Manifest& m) {
    const Summary& s = m.summary;
    line("end: " + std::to_string(s.meshes) + " meshes, " + std::to_string(s.ok) + " ok (" + std::to_string(s.resumed) +
         " resumed), " + std::to_string(s.failed) + " failed; exit code " + (s.failed ? "1" : "0"));
    if (write_failed_) fail_write(file_.string(), "writing the log failed (is the disk full?); the manifest is complete");
}

void TaskLog::stopped(const std::string& error, int exit_code) {
    line("stopped (exit code " + std::to_string(exit_code) + "): " + error);
}

}  // namespace hp::pipeline
