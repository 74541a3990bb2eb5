#pragma once
// lib/report/query_report — a query check (haptic-query, the pipeline's query stage) as a JUnit
// test suite and as PNG charts (haptic-query --junit, --plot). docs/ci.md shows both.
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "plot/plot.hpp"
#include "query/check_run.hpp"
#include "report/junit.hpp"
#include "scene/scene_check.hpp"

namespace hp::report {

// The suite of one check from its report (QueryCheck::report, the keys of docs/query.md): the
// test case "latency: p99 <= budget" (or "latency: over-budget fraction <= F" when
// max_over_budget >= 0), its time the queries' measured time, failing with the measured figure
// and the budget in its message; the case "tree covers its points". Properties: the report's
// figures; the check's warnings in <system-err>.
junit::Suite query_suite(const nlohmann::json& report, double max_over_budget, const std::vector<std::string>& warnings = {});

// The latency test case of a check: "latency: p99 <= budget" (or "latency: over-budget fraction
// <= F" when max_over_budget >= 0), failing with the measured figure and the budget in its
// message; `noun` counts what was timed ("queries", "frames"). Name, outcome and message only.
struct LatencyFigures {
    double p99 = 0, budget = 0;
    std::size_t over = 0, count = 0;
    double fraction = 0;
};
junit::Case latency_case(const LatencyFigures& figures, double max_over_budget, const std::string& noun);

// One line with the figures a person reads first: "p50 8.10 us, p99 25.3 us, max 41 us; budget
// 1000 us; 0 of 2000 queries over budget (0.00 %)".
std::string latency_line(const nlohmann::json& report);

// Writes haptic-query's JUnit file: one suite, query_suite(check.report, ...). Throws
// hp::Error(cannot_write).
void write_query_junit(const std::filesystem::path& path, const QueryCheck& check, double max_over_budget);

// The two charts of a run: the latency histogram (logarithmic bins) with p50, p99 and the
// budget marked, and the latency of each pose against its index (logarithmic), the queries over
// budget in red. A budget more than 100 times the slowest query is named in the titles instead
// of drawn (it would squeeze the data into a corner).
std::vector<plot::Chart> query_charts(const QueryCheck& check);
// The same two charts of any latencies (one per query or frame, `over` of them over `budget`),
// `what` naming the run in the titles and `nouns` what was timed.
struct LatencyNouns {
    std::string plural, singular, index;  // "queries", "query", "pose"
};
std::vector<plot::Chart> latency_charts(const std::vector<double>& latency_us, double budget, std::size_t over,
                                        const std::string& what, const LatencyNouns& nouns);
// Both charts in one PNG, one above the other. Throws hp::Error(cannot_write).
void write_query_plot(const std::filesystem::path& path, const QueryCheck& check);

// haptic-query --scene: the suite of a scene check: the case "frame latency: p99 <= budget" (or the
// over-budget fraction), then one case per tool and part that met in the broad phase ("part P",
// or "tool T, part P" with several tools), its output the frames it was a candidate in, the
// frames it touched, its contacts and deepest penetration. Properties: the scene, the tools and
// the frame figures; the warnings in <system-err>.
junit::Suite scene_suite(const scene::SceneCheck& check, double max_over_budget);
void write_scene_junit(const std::filesystem::path& path, const scene::SceneCheck& check, double max_over_budget);
// The frame latency histogram (p50, p99, budget) and the latency of each frame.
std::vector<plot::Chart> scene_charts(const scene::SceneCheck& check);
void write_scene_plot(const std::filesystem::path& path, const scene::SceneCheck& check);

}  // namespace hp::report
