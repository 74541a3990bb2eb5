#pragma once
// lib/report/query_report — a query check (haptic-query, the pipeline's query stage) as a JUnit
// test suite and as PNG charts (haptic-query --junit, --plot). docs/ci.md shows both.
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "plot/plot.hpp"
#include "query/check_run.hpp"
#include "report/junit.hpp"

namespace hp::report {

// The suite of one check from its report (QueryCheck::report, the keys of docs/query.md): the
// test case "latency: p99 <= budget" (or "latency: over-budget fraction <= F" when
// max_over_budget >= 0), its time the queries' measured time, failing with the measured figure
// and the budget in its message; the case "tree covers its points". Properties: the report's
// figures; the check's warnings in <system-err>.
junit::Suite query_suite(const nlohmann::json& report, double max_over_budget, const std::vector<std::string>& warnings = {});

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
// Both charts in one PNG, one above the other. Throws hp::Error(cannot_write).
void write_query_plot(const std::filesystem::path& path, const QueryCheck& check);

}  // namespace hp::report
