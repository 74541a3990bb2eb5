#pragma once
// lib/report/batch_report — a haptic-pipeline batch (its manifest) as a JUnit report and as a
// PNG chart of the time per stage per mesh (haptic-pipeline --junit, --plot). docs/ci.md.
#include <filesystem>

#include "pipeline/manifest.hpp"
#include "plot/plot.hpp"
#include "report/junit.hpp"

namespace hp::report {

// One suite per mesh, one test case per stage of the pipeline (classname
// "haptic-pipeline.<pipeline>.<mesh>", name the stage, time its seconds). The stage a failed
// mesh failed in is a <failure> when it failed a check (exit 1: the query stage over budget,
// with the measured p99 and the budget in the message) and an <error> otherwise (exit 3, 4);
// the stages after it are skipped, and so is every stage of a planned mesh. A passing query
// stage's case shows its latency figures (latency_line) in <system-out>.
junit::Report batch_junit(const pipeline::Manifest& manifest);
// Writes it atomically. Throws hp::Error(cannot_write).
void write_batch_junit(const std::filesystem::path& path, const pipeline::Manifest& manifest);

// Stacked bars: a bar per mesh (in the manifest's order), a part per stage, in seconds. A failed
// mesh's name is flagged (drawn in red); its bar holds the stages it finished and, as the part of
// the stage it failed in, the rest of its time.
plot::BarChart batch_chart(const pipeline::Manifest& manifest);
// The chart as a PNG. Throws hp::Error(cannot_write).
void write_batch_plot(const std::filesystem::path& path, const pipeline::Manifest& manifest);

}  // namespace hp::report
