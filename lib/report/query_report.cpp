#include "report/query_report.hpp"

#include <algorithm>
#include <cstdio>
#include <map>

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

junit::Case latency_case(const LatencyFigures& l, double max_over_budget, const std::string& noun) {
    junit::Case c;
    const std::string counted = std::to_string(l.over) + " of " + std::to_string(l.count) + " " + noun;
    if (max_over_budget >= 0) {
        c.name = "latency: over-budget fraction <= " + fmt("%g", max_over_budget);
        if (l.fraction > max_over_budget) {
            c.outcome = junit::Outcome::failed;
            c.type = "over budget";
            c.message = counted + " over the budget of " + us(l.budget) + " us: fraction " + fmt("%.4g", l.fraction) +
                        " > allowed " + fmt("%g", max_over_budget) + " (p99 " + us(l.p99) + " us)";
        }
    } else {
        c.name = "latency: p99 <= budget";
        if (l.p99 > l.budget) {
            c.outcome = junit::Outcome::failed;
            c.type = "over budget";
            c.message = "p99 " + us(l.p99) + " us > budget " + us(l.budget) + " us (" + counted + " over budget)";
        }
    }
    return c;
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

    junit::Case timing = latency_case({p99, budget, over, n, fraction}, max_over_budget, "queries");
    timing.classname = classname;
    timing.seconds = seconds;
    timing.output = latency_line(r);
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

std::vector<plot::Chart> latency_charts(const std::vector<double>& latency_us, double budget, std::size_t over,
                                        const std::string& what, const LatencyNouns& nouns) {
    const LatencyStats st = latency_stats(latency_us);
    const std::size_t n = latency_us.size();
    const bool budget_drawn = budget <= 100 * std::max(st.max, 1e-3);
    const std::string budget_note = budget_drawn ? "" : ", budget " + us(budget) + " us off the chart";

    const plot::Rgb green{30, 140, 60}, orange{220, 120, 0}, red{200, 30, 30};
    plot::Histogram h;
    h.title = "Latency of " + std::to_string(n) + " " + nouns.plural + ": " + what + budget_note;
    h.x = {"latency per " + nouns.singular + " (us, log scale)", true, {}, {}};
    h.y_label = nouns.plural;
    h.values = latency_us;
    h.bins = 50;
    h.x_marks = {{st.p50, "p50 " + us(st.p50) + " us", green, true}, {st.p99, "p99 " + us(st.p99) + " us", orange, true}};
    if (budget_drawn) h.x_marks.push_back({budget, "budget " + us(budget) + " us", red, false});

    plot::LineChart c;
    c.title = "Latency per " + nouns.index + ": " + std::to_string(over) + " of " + std::to_string(n) + " over budget" + budget_note;
    c.x = {nouns.index + " index", false, {}, {}};
    c.y = {"latency (us, log scale)", true, {}, {}};
    plot::Series within{"within budget", {}, {}, plot::Style::points, plot::Rgb{50, 100, 180}};
    plot::Series beyond{"over budget", {}, {}, plot::Style::points, red};
    for (std::size_t i = 0; i < n; ++i) {
        plot::Series& s = latency_us[i] > budget ? beyond : within;
        s.x.push_back(static_cast<double>(i));
        s.y.push_back(latency_us[i]);
    }
    c.series.push_back(std::move(within));
    if (!beyond.x.empty()) c.series.push_back(std::move(beyond));
    c.y_marks = {{st.p99, "p99 " + us(st.p99) + " us", orange, true}};
    if (budget_drawn) c.y_marks.push_back({budget, "budget " + us(budget) + " us", red, false});
    return {h, c};
}

std::vector<plot::Chart> query_charts(const QueryCheck& check) {
    const nlohmann::json& r = check.report;
    const std::string what = r.at("moving").at("file").get<std::string>() + " against " + r.at("static").at("file").get<std::string>() +
                             ", mode " + r.at("mode").get<std::string>();
    return latency_charts(check.run.latency_us, r.at("budget_us").get<double>(), r.at("over_budget").get<std::size_t>(), what,
                          {"queries", "query", "pose"});
}

void write_query_plot(const std::filesystem::path& path, const QueryCheck& check) {
    plot::write_png(path, query_charts(check), 1000, 480);
}

namespace {

std::string scene_what(const scene::SceneCheck& check) {
    const std::size_t n = check.tool_names.size();
    const std::string tools = n == 1 ? check.tool_names[0] : std::to_string(n) + " tools";
    return tools + " in " + check.report.at("scene").get<std::string>() + ", mode " + check.report.at("mode").get<std::string>();
}

// One case per tool and part that met in the broad phase, in tool then part order.
std::vector<junit::Case> pair_cases(const scene::SceneCheck& check, const std::string& classname) {
    struct Tally {
        std::size_t frames = 0, touched = 0, contacts = 0, interrupted = 0;
        double max_penetration = 0;
    };
    std::map<std::pair<std::uint32_t, std::uint32_t>, Tally> tally;
    for (const scene::FrameSummary& f : check.frames)
        for (const scene::PairSummary& p : f.pairs) {
            Tally& t = tally[{p.tool, p.part}];
            ++t.frames;
            t.touched += p.contacts > 0;
            t.contacts += p.contacts;
            t.interrupted += p.interrupted;
            t.max_penetration = std::max(t.max_penetration, p.max_penetration);
        }
    const bool several = check.tool_names.size() > 1;
    std::vector<junit::Case> cases;
    for (const auto& [key, t] : tally) {
        junit::Case c;
        const std::string& tool = check.tool_names[key.first];
        c.name = (several ? "tool " + tool + ", part " : "part ") + check.part_names[key.second];
        c.classname = classname + (several ? "." + file_stem_for_class(tool) : "");
        c.output = "in the broad phase in " + std::to_string(t.frames) + " of " + std::to_string(check.frames.size()) +
                   " frames, touched in " + std::to_string(t.touched) + ", " + std::to_string(t.contacts) +
                   " contacts, max penetration " + fmt("%.6g", t.max_penetration) + ", " + std::to_string(t.interrupted) +
                   " interrupted";
        cases.push_back(std::move(c));
    }
    return cases;
}

}  // namespace

junit::Suite scene_suite(const scene::SceneCheck& check, double max_over_budget) {
    const nlohmann::json& r = check.report;
    const auto& l = r.at("frame_us");
    const double budget = r.at("budget_us").get<double>();
    const std::size_t n = r.at("frames").get<std::size_t>(), over = r.at("over_budget").get<std::size_t>();
    const double seconds = l.at("mean").get<double>() * static_cast<double>(n) * 1e-6;
    auto text = [](const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); };
    junit::Suite s;
    s.name = "haptic-query --scene: " + scene_what(check);
    s.seconds = seconds;
    s.properties = {{"scene", text(r.at("scene"))}, {"mode", text(r.at("mode"))}, {"frames", std::to_string(n)},
                    {"budget_us", text(r.at("budget_us"))}, {"criterion", text(r.at("criterion"))}};
    for (std::size_t t = 0; t < check.tool_names.size(); ++t) s.properties.emplace_back("tool", check.tool_names[t]);
    for (const char* k : {"min", "p50", "p90", "p99", "p999", "max", "mean"})
        s.properties.emplace_back(std::string("frame_us.") + k, text(l.at(k)));
    for (const char* k : {"broad_phase_us", "narrow_phase_us"}) s.properties.emplace_back(std::string(k) + ".p99", text(r.at(k).at("p99")));
    for (const char* k : {"over_budget", "over_budget_fraction", "interrupted_pairs", "frames_with_contact"})
        s.properties.emplace_back(k, text(r.at(k)));

    const std::string classname = "haptic-query." + file_stem_for_class(std::filesystem::path(r.at("scene").get<std::string>()).parent_path().string());
    junit::Case timing = latency_case({l.at("p99").get<double>(), budget, over, n, r.at("over_budget_fraction").get<double>()},
                                      max_over_budget, "frames");
    timing.name = "frame " + timing.name;
    timing.classname = classname;
    timing.seconds = seconds;
    timing.output = "frame p50 " + us(l.at("p50").get<double>()) + " us, p99 " + us(l.at("p99").get<double>()) + " us, max " +
                    us(l.at("max").get<double>()) + " us; budget " + us(budget) + " us; " + std::to_string(over) + " of " +
                    std::to_string(n) + " frames over budget";
    if (timing.outcome == junit::Outcome::failed) timing.details = timing.output;
    s.cases.push_back(std::move(timing));
    for (junit::Case& c : pair_cases(check, classname)) s.cases.push_back(std::move(c));
    for (const std::string& w : check.warnings) s.errors += "warning: " + w + "\n";
    return s;
}

void write_scene_junit(const std::filesystem::path& path, const scene::SceneCheck& check, double max_over_budget) {
    junit::Report report;
    report.name = "haptic-query";
    report.suites.push_back(scene_suite(check, max_over_budget));
    junit::write(path, report);
}

std::vector<plot::Chart> scene_charts(const scene::SceneCheck& check) {
    return latency_charts(check.frame_us, check.report.at("budget_us").get<double>(),
                          check.report.at("over_budget").get<std::size_t>(), scene_what(check), {"frames", "frame", "frame"});
}

void write_scene_plot(const std::filesystem::path& path, const scene::SceneCheck& check) {
    plot::write_png(path, scene_charts(check), 1000, 480);
}

}  // namespace hp::report
