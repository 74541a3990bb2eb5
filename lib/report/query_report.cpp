#include "report/query_report.hpp"

#include <algorithm>
#include <cstdio>

namespace hp::report {

namespace {

std::string fmt(const char* format, double a) {
    char buf[64];
    std::snprintf(buf, sizeof buf, format, a);
    return buf;
}

// Latencies: three significant digits ("8.13", "41.2", "1230").
std::string us(double v) { return fmt(v >= 1000 ? "%.0f" : "%.3g", v); }

std::string file_stem_for_class(const std::string& file) {
    std::string s = std::filesystem::path(file).filename().string();
    const auto dot = s.find('.');
    if (dot != std::string::npos && dot > 0) s = s.substr(0, dot);
    for (char& c : s)
        if (c == '.' || c == ' ') c = '_';
    return s;
}

}  // namespace

std::string latency_line(const nlohmann::json& r) {
    const auto& l = r.at("latency_us");
    const std::size_t n = r.at("queries").get<std::size_t>(), over = r.at("over_budget").get<std::size_t>();
    return "p50 " + us(l.at("p50").get<double>()) + " us, p99 " + us(l.at("p99").get<double>()) + " us, max " +
           us(l.at("max").get<double>()) + " us; budget " + us(r.at("budget_us").get<double>()) + " us; " +
           std::to_string(over) + " of " + std::to_string(n) + " queries over budget (" +
           fmt("%.2f", 100.0 * r.at("over_budget_fraction").get<double>()) + " %)";
}

junit::Suite query_suite(const nlohmann::json& r, double max_over_budget, const std::vector<std::string>& warnings) {
    const std::string static_file = r.at("static").at("file").get<std::string>();
    const std::string moving_file = r.at("moving").at("file").get<std::string>();
    const auto& l = r.at("latency_us");
    const double budget = r.at("budget_us").get<double>(), p99 = l.at("p99").get<double>();
    const double fraction = r.at("over_budget_fraction").get<double>();
    const std::size_t n = r.at("queries").get<std::size_t>(), over = r.at("over_budget").get<std::size_t>();
    const double seconds = l.at("mean").get<double>() * static_cast<double>(n) * 1e-6;

    junit::Suite s;
    s.name = "haptic-query " + moving_file + " against " + static_file;
    s.seconds = seconds;
    const std::string classname = "haptic-query." + file_stem_for_class(static_file) + "." + file_stem_for_class(moving_file);
    auto text = [](const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); };
    s.properties = {{"static", static_file},
                    {"moving", moving_file},
                    {"mode", text(r.at("mode"))},
                    {"queries", std::to_string(n)},
                    {"budget_us", text(r.at("budget_us"))},
                    {"criterion", text(r.at("criterion"))}};
    for (const char* k : {"min", "p50", "p90", "p99", "p999", "max", "mean"})
        s.properties.emplace_back(std::string("latency_us.") + k, text(l.at(k)));
    for (const char* k : {"over_budget", "over_budget_fraction", "queries_per_second", "interrupted", "mean_spheres_tested"})
        if (r.contains(k)) s.properties.emplace_back(k, text(r.at(k)));
    if (r.contains("cfm") && !r.at("cfm").is_null()) s.properties.emplace_back("cfm", text(r.at("cfm").at("file")));

    junit::Case timing;
    timing.classname = classname;
    timing.seconds = seconds;
    timing.output = latency_line(r);
    if (max_over_budget >= 0) {
        timing.name = "latency: over-budget fraction <= " + fmt("%g", max_over_budget);
        if (fraction > max_over_budget) {
            timing.outcome = junit::Outcome::failed;
            timing.type = "over budget";
            timing.message = std::to_string(over) + " of " + std::to_string(n) + " queries over the budget of " + us(budget) +
                             " us: fraction " + fmt("%.4g", fraction) + " > allowed " + fmt("%g", max_over_budget) +
                             " (p99 " + us(p99) + " us)";
        }
    } else {
        timing.name = "latency: p99 <= budget";
        if (p99 > budget) {
            timing.outcome = junit::Outcome::failed;
            timing.type = "over budget";
            timing.message = "p99 " + us(p99) + " us > budget " + us(budget) + " us (" + std::to_string(over) + " of " +
                             std::to_string(n) + " queries over budget)";
        }
    }
    if (timing.outcome == junit::Outcome::failed) timing.details = timing.output;
    s.cases.push_back(std::move(timing));

    junit::Case cover;
    cover.name = "tree covers its points";
    cover.classname = classname;
    if (!r.at("validation").at("tree_covers_points").get<bool>()) {
        cover.outcome = junit::Outcome::failed;
        cover.type = "invalid tree";
        cover.message = moving_file + ": the tree's leaves do not hold each point once inside its spheres (rebuild it with haptic-spheretree)";
    }
    s.cases.push_back(std::move(cover));

    for (const std::string& w : warnings) s.errors += "warning: " + w + "\n";
    return s;
}

void write_query_junit(const std::filesystem::path& path, const QueryCheck& check, double max_over_budget) {
    junit::Report report;
    report.name = "haptic-query";
    report.suites.push_back(query_suite(check.report, max_over_budget, check.warnings));
    junit::write(path, report);
}

std::vector<plot::Chart> query_charts(const QueryCheck& check) {
    const nlohmann::json& r = check.report;
    const LatencyStats& st = check.latency;
    const double budget = r.at("budget_us").get<double>();
    const std::size_t n = check.run.latency_us.size(), over = r.at("over_budget").get<std::size_t>();
    const bool budget_drawn = budget <= 100 * std::max(st.max, 1e-3);
    const std::string what = r.at("moving").at("file").get<std::string>() + " against " + r.at("static").at("file").get<std::string>() +
                             ", mode " + r.at("mode").get<std::string>();
    const std::string budget_note = budget_drawn ? "" : ", budget " + us(budget) + " us off the chart";

    const plot::Rgb green{30, 140, 60}, orange{220, 120, 0}, red{200, 30, 30};
    plot::Histogram h;
    h.title = "Latency of " + std::to_string(n) + " queries: " + what + budget_note;
    h.x = {"latency per query (us, log scale)", true, {}, {}};
    h.y_label = "queries";
    h.values = check.run.latency_us;
    h.bins = 50;
    h.x_marks = {{st.p50, "p50 " + us(st.p50) + " us", green, true}, {st.p99, "p99 " + us(st.p99) + " us", orange, true}};
    if (budget_drawn) h.x_marks.push_back({budget, "budget " + us(budget) + " us", red, false});

    plot::LineChart c;
    c.title = "Latency per pose: " + std::to_string(over) + " of " + std::to_string(n) + " over budget" + budget_note;
    c.x = {"pose index", false, {}, {}};
    c.y = {"latency (us, log scale)", true, {}, {}};
    plot::Series within{"within budget", {}, {}, plot::Style::points, plot::Rgb{50, 100, 180}};
    plot::Series beyond{"over budget", {}, {}, plot::Style::points, red};
    for (std::size_t i = 0; i < n; ++i) {
        plot::Series& s = check.run.latency_us[i] > budget ? beyond : within;
        s.x.push_back(static_cast<double>(i));
        s.y.push_back(check.run.latency_us[i]);
    }
    c.series.push_back(std::move(within));
    if (!beyond.x.empty()) c.series.push_back(std::move(beyond));
    c.y_marks = {{st.p99, "p99 " + us(st.p99) + " us", orange, true}};
    if (budget_drawn) c.y_marks.push_back({budget, "budget " + us(budget) + " us", red, false});
    return {h, c};
}

void write_query_plot(const std::filesystem::path& path, const QueryCheck& check) {
    plot::write_png(path, query_charts(check), 1000, 480);
}

}  // namespace hp::report
