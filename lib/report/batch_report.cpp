#include "report/batch_report.hpp"

#include <cstdio>

#include "report/query_report.hpp"

namespace hp::report {

namespace {

using pipeline::MeshEntry;
using pipeline::MeshStatus;

std::string class_part(std::string s) {
    for (char& c : s)
        if (c == '.' || c == ' ') c = '_';
    return s;
}

// The stage a failed mesh failed in: "stage 'NAME': ..." at the start of its error (mesh_run.cpp),
// else the first stage (the mesh could not be read).
std::string failed_stage(const MeshEntry& e, const pipeline::Manifest& m) {
    const std::string prefix = "stage '";
    const std::string& error = e.error.value_or("");
    if (error.rfind(prefix, 0) == 0) {
        const auto end = error.find('\'', prefix.size());
        if (end != std::string::npos) return error.substr(prefix.size(), end - prefix.size());
    }
    return m.pipeline.stages.empty() ? std::string() : m.pipeline.stages.front().stage;
}

std::string exit_kind(int code) {
    switch (code) {
    case 1: return "check failed (exit 1)";
    case 2: return "usage (exit 2)";
    case 3: return "bad input (exit 3)";
    case 4: return "cannot write (exit 4)";
    default: return "exit " + std::to_string(code);
    }
}

}  // namespace

junit::Report batch_junit(const pipeline::Manifest& m) {
    junit::Report report;
    report.name = "haptic-pipeline " + m.pipeline.name;
    for (const MeshEntry& e : m.meshes) {
        junit::Suite s;
        s.name = m.pipeline.name + " " + e.name;
        s.seconds = e.seconds;
        s.properties = {{"mesh", e.mesh}, {"status", e.resumed ? "resumed" : pipeline::status_name(e.status)}};
        if (e.input_hash) s.properties.emplace_back("input_hash", *e.input_hash);
        s.properties.emplace_back("params_hash", e.params_hash);
        const std::string classname = "haptic-pipeline." + class_part(m.pipeline.name) + "." + class_part(e.name);
        const std::string failed = e.status == MeshStatus::failed ? failed_stage(e, m) : std::string();
        double finished_seconds = 0;
        for (const auto& r : e.stages) finished_seconds += r.seconds;
        bool after_failure = false;
        for (const auto& stage : m.pipeline.stages) {
            junit::Case c;
            c.name = stage.stage;
            c.classname = classname;
            const pipeline::StageRecord* record = nullptr;
            for (const auto& r : e.stages)
                if (r.stage == stage.stage) record = &r;
            if (e.status == MeshStatus::planned) {
                c.outcome = junit::Outcome::skipped;
                c.message = "planned, not run (--emit-manifest-only)";
            } else if (after_failure) {
                c.outcome = junit::Outcome::skipped;
                c.message = "not run: stage '" + failed + "' failed";
            } else if (e.status == MeshStatus::failed && stage.stage == failed) {
                const int code = e.exit_code.value_or(3);
                c.outcome = code == 1 ? junit::Outcome::failed : junit::Outcome::error;
                c.type = exit_kind(code);
                c.message = e.error.value_or("failed");
                c.details = c.message;
                c.seconds = std::max(0.0, e.seconds - finished_seconds);
                after_failure = true;
            } else if (record) {
                c.seconds = record->seconds;
                if (record->report.is_object() && record->report.contains("latency_us") && record->report.contains("budget_us"))
                    c.output = latency_line(record->report);
                if (e.resumed) c.output += (c.output.empty() ? "" : "\n") + std::string("resumed: the output of an earlier run with the same input and parameters");
            } else {
                c.outcome = junit::Outcome::skipped;
                c.message = "no record of this stage";
            }
            s.cases.push_back(std::move(c));
        }
        for (const std::string& w : e.warnings) s.errors += "warning: " + w + "\n";
        report.suites.push_back(std::move(s));
    }
    return report;
}

void write_batch_junit(const std::filesystem::path& path, const pipeline::Manifest& manifest) {
    junit::write(path, batch_junit(manifest));
}

plot::BarChart batch_chart(const pipeline::Manifest& m) {
    plot::BarChart b;
    std::size_t failed = 0;
    for (const MeshEntry& e : m.meshes) failed += e.status == MeshStatus::failed;
    b.title = "Time per stage per mesh: " + m.pipeline.name + ", " + std::to_string(m.meshes.size()) + " meshes" +
              (failed ? ", " + std::to_string(failed) + " failed (in red)" : std::string());
    b.y_label = "seconds";
    for (const auto& s : m.pipeline.stages) b.parts.push_back(s.stage);
    b.values.assign(b.parts.size(), std::vector<double>(m.meshes.size(), 0.0));
    for (std::size_t i = 0; i < m.meshes.size(); ++i) {
        const MeshEntry& e = m.meshes[i];
        b.categories.push_back(e.name);
        b.flagged.push_back(e.status == MeshStatus::failed);
        double finished = 0;
        for (const auto& r : e.stages)
            for (std::size_t k = 0; k < b.parts.size(); ++k)
                if (b.parts[k] == r.stage) {
                    b.values[k][i] = r.seconds;
                    finished += r.seconds;
                }
        // A failed mesh: the rest of its time went to the stage that failed.
        if (e.status == MeshStatus::failed) {
            const std::string failed_in = failed_stage(e, m);
            for (std::size_t k = 0; k < b.parts.size(); ++k)
                if (b.parts[k] == failed_in) b.values[k][i] = std::max(0.0, e.seconds - finished);
        }
    }
    return b;
}

void write_batch_plot(const std::filesystem::path& path, const pipeline::Manifest& manifest) {
    plot::write_png(path, {batch_chart(manifest)}, 1000, 560);
}

}  // namespace hp::report
