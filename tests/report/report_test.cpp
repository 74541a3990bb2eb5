// lib/report: XML escaping, the JUnit document's counts, a query check's suite and a batch's
// report and chart from hand-made reports and manifests (the figures in the messages are the
// ones put in). The CLI tests (tests/cli/junit_*) parse the files with a real JUnit consumer.
#include <gtest/gtest.h>

#include "report/batch_report.hpp"
#include "report/junit.hpp"
#include "report/query_report.hpp"

using namespace hp;

namespace {

std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
    return n;
}

nlohmann::json query_report(double p99, double budget, std::size_t over, std::size_t n, bool covered = true) {
    return {{"queries", n},
            {"budget_us", budget},
            {"mode", "full"},
            {"criterion", "p99 <= budget"},
            {"static", {{"file", "part.dist.vdb"}}},
            {"moving", {{"file", "tool.hps"}}},
            {"cfm", nullptr},
            {"latency_us", {{"min", 1.0}, {"p50", 2.0}, {"p90", 3.0}, {"p99", p99}, {"p999", p99}, {"max", p99 + 1}, {"mean", 4.0}}},
            {"over_budget", over},
            {"over_budget_fraction", static_cast<double>(over) / static_cast<double>(n)},
            {"validation", {{"tree_covers_points", covered}}}};
}

}  // namespace

TEST(Junit, Escape) {
    EXPECT_EQ(junit::escape("a<b & \"c\" 'd'>", true), "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;");
    EXPECT_EQ(junit::escape("a<b & \"c\"", false), "a&lt;b &amp; \"c\"");
    EXPECT_EQ(junit::escape("two\nlines", true), "two&#10;lines");
    EXPECT_EQ(junit::escape("two\nlines", false), "two\nlines");
    EXPECT_EQ(junit::escape("bell\x07", false), "bell?");
    EXPECT_EQ(junit::escape("\xc2\xb5s", false), "\xc2\xb5s");       // U+00B5 stays
    EXPECT_EQ(junit::escape("\xff", false), "?");                    // not UTF-8
    EXPECT_EQ(junit::escape("\xc0\xaf", false), "??");               // overlong '/'
    EXPECT_EQ(junit::escape("\xed\xa0\x80", false), "???");          // a surrogate
    EXPECT_EQ(junit::escape("\xe2\x82", false), "??");               // cut short
}

TEST(Junit, CountsComeFromTheCases) {
    junit::Report r;
    r.name = "x";
    junit::Suite s;
    s.name = "s";
    s.seconds = 1.5;
    for (auto o : {junit::Outcome::passed, junit::Outcome::failed, junit::Outcome::error, junit::Outcome::skipped, junit::Outcome::failed})
        s.cases.push_back({"c", "k", 0.25, o, "m", "t", "", ""});
    r.suites = {s, s};
    const std::string xml = junit::to_xml(r);
    EXPECT_EQ(xml.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"x\" tests=\"10\" failures=\"4\" errors=\"2\" skipped=\"2\" time=\"3.000000\">", 0), 0u) << xml;
    EXPECT_EQ(count(xml, "<testsuite name=\"s\" tests=\"5\" failures=\"2\" errors=\"1\" skipped=\"1\" time=\"1.500000\">"), 2u);
    EXPECT_EQ(count(xml, "<failure message=\"m\" type=\"t\"/>"), 4u);
    EXPECT_EQ(count(xml, "<error message=\"m\" type=\"t\"/>"), 2u);
    EXPECT_EQ(count(xml, "<skipped message=\"m\"/>"), 2u);
    EXPECT_EQ(count(xml, "<testcase "), 10u);
}

TEST(QueryReport, FailingCheckNamesItsFigureAndBudget) {
    const junit::Suite s = report::query_suite(query_report(12.5, 10, 37, 2000), -1);
    ASSERT_EQ(s.cases.size(), 2u);
    EXPECT_EQ(s.cases[0].name, "latency: p99 <= budget");
    EXPECT_EQ(s.cases[0].outcome, junit::Outcome::failed);
    EXPECT_EQ(s.cases[0].message, "p99 12.5 us > budget 10 us (37 of 2000 queries over budget)");
    EXPECT_NEAR(s.cases[0].seconds, 4.0 * 2000 * 1e-6, 1e-15);  // mean x queries
    EXPECT_EQ(s.cases[1].outcome, junit::Outcome::passed);
    EXPECT_EQ(s.cases[0].classname, "haptic-query.part.tool");

    const junit::Suite ok = report::query_suite(query_report(9.5, 10, 3, 2000), -1);
    EXPECT_EQ(ok.cases[0].outcome, junit::Outcome::passed);
    EXPECT_EQ(ok.cases[0].output, "p50 2 us, p99 9.5 us, max 10.5 us; budget 10 us; 3 of 2000 queries over budget (0.15 %)");

    // The fraction criterion: 100 of 2000 = 0.05 is within 0.1, not within 0.01.
    EXPECT_EQ(report::query_suite(query_report(50, 10, 100, 2000), 0.1).cases[0].outcome, junit::Outcome::passed);
    const junit::Suite f = report::query_suite(query_report(50, 10, 100, 2000), 0.01);
    EXPECT_EQ(f.cases[0].name, "latency: over-budget fraction <= 0.01");
    EXPECT_EQ(f.cases[0].message, "100 of 2000 queries over the budget of 10 us: fraction 0.05 > allowed 0.01 (p99 50 us)");

    const junit::Suite bad_tree = report::query_suite(query_report(1, 10, 0, 10, false), -1, {"a warning"});
    EXPECT_EQ(bad_tree.cases[1].outcome, junit::Outcome::failed);
    EXPECT_EQ(bad_tree.errors, "warning: a warning\n");
}

TEST(BatchReport, CasePerMeshAndStage) {
    pipeline::Manifest m;
    m.pipeline.name = "p.v1";
    m.pipeline.stages = {{"voxelize", {}}, {"distance", {}}, {"query", {}}};
    pipeline::MeshEntry ok;
    ok.name = "peg";
    ok.status = pipeline::MeshStatus::ok;
    ok.seconds = 3;
    ok.stages = {{"voxelize", 0.5, 0, {}}, {"distance", 1.0, 0, {}}, {"query", 1.25, 0, query_report(5, 10, 0, 100)}};
    pipeline::MeshEntry over = ok;
    over.name = "gear";
    over.status = pipeline::MeshStatus::failed;
    over.stages.pop_back();
    over.seconds = 4;
    over.exit_code = 1;
    over.error = "stage 'query': gear/query.json: over budget: p99 21.5 us, 7 of 100 queries over 10 us";
    pipeline::MeshEntry unreadable;
    unreadable.name = "broken";
    unreadable.status = pipeline::MeshStatus::failed;
    unreadable.exit_code = 3;
    unreadable.error = "broken.stl: not a mesh";
    pipeline::MeshEntry planned;
    planned.name = "later";
    m.meshes = {ok, over, unreadable, planned};

    const junit::Report r = report::batch_junit(m);
    ASSERT_EQ(r.suites.size(), 4u);
    for (const auto& s : r.suites) ASSERT_EQ(s.cases.size(), 3u);
    const auto outcome = [&](std::size_t suite, std::size_t c) { return r.suites[suite].cases[c].outcome; };
    using O = junit::Outcome;
    EXPECT_EQ(r.suites[0].cases[2].classname, "haptic-pipeline.p_v1.peg");
    EXPECT_EQ(r.suites[0].cases[1].seconds, 1.0);
    EXPECT_EQ(outcome(0, 2), O::passed);
    EXPECT_EQ(r.suites[0].cases[2].output, "p50 2 us, p99 5 us, max 6 us; budget 10 us; 0 of 100 queries over budget (0.00 %)");
    EXPECT_EQ(outcome(1, 0), O::passed);
    EXPECT_EQ(outcome(1, 2), O::failed);
    EXPECT_EQ(r.suites[1].cases[2].message, over.error);
    EXPECT_EQ(r.suites[1].cases[2].seconds, 4 - 1.5);  // the mesh's time less its finished stages
    EXPECT_EQ(outcome(2, 0), O::error);
    EXPECT_EQ(r.suites[2].cases[0].type, "bad input (exit 3)");
    EXPECT_EQ(outcome(2, 1), O::skipped);
    EXPECT_EQ(r.suites[2].cases[1].message, "not run: stage 'voxelize' failed");
    for (std::size_t c = 0; c < 3; ++c) EXPECT_EQ(outcome(3, c), O::skipped);

    const plot::BarChart b = report::batch_chart(m);
    EXPECT_EQ(b.parts, (std::vector<std::string>{"voxelize", "distance", "query"}));
    EXPECT_EQ(b.categories, (std::vector<std::string>{"peg", "gear", "broken", "later"}));
    EXPECT_EQ(b.flagged, (std::vector<bool>{false, true, true, false}));
    EXPECT_EQ(b.values[0], (std::vector<double>{0.5, 0.5, 0, 0}));
    EXPECT_EQ(b.values[2], (std::vector<double>{1.25, 2.5, 0, 0}));  // gear: 4 s less 1.5 s finished
}
