// Chart axes (plot.hpp): tick positions on linear and log axes, tick labels, histogram bins.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "plot/plot.hpp"

namespace hp::plot {

namespace {
bool finite(double v) { return std::isfinite(v); }
}  // namespace

std::vector<double> linear_ticks(double lo, double hi, int max_ticks) {
    std::vector<double> ticks;
    if (!(hi > lo) || max_ticks < 1 || !finite(lo) || !finite(hi)) return ticks;
    const double raw = (hi - lo) / max_ticks;
    const double p = std::pow(10.0, std::floor(std::log10(raw)));
    double step = 10 * p;
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (m * p >= raw) {
            step = m * p;
            break;
        }
    const double first = std::ceil(lo / step - 1e-9);
    for (double k = first;; k += 1) {
        double v = k * step;
        if (v > hi + step * 1e-9) break;
        if (std::abs(v) < step * 1e-9) v = 0;
        ticks.push_back(v);
        if (ticks.size() > static_cast<std::size_t>(max_ticks) + 1) break;
    }
    return ticks;
}

std::vector<double> log_ticks(double lo, double hi) {
    std::vector<double> ticks;
    if (!(lo > 0) || !(hi > lo) || !finite(hi)) return ticks;
    const int a = static_cast<int>(std::floor(std::log10(lo) + 1e-9)), b = static_cast<int>(std::ceil(std::log10(hi) - 1e-9));
    const bool minor = b - a < 3;
    for (int e = a; e <= b; ++e)
        for (double m : {1.0, 2.0, 5.0}) {
            if (m != 1.0 && !minor) continue;
            const double v = m * std::pow(10.0, e);
            if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) ticks.push_back(v);
        }
    return ticks;
}

std::string tick_label(double value) {
    if (value == 0) return "0";
    const double a = std::abs(value);
    char buf[32];
    if (a >= 1e5 || a < 1e-3) {
        const int e = static_cast<int>(std::floor(std::log10(a) + 1e-9));
        const double m = value / std::pow(10.0, e);
        if (std::abs(std::abs(m) - 1) < 1e-9)
            std::snprintf(buf, sizeof buf, "%se%d", m < 0 ? "-1" : "1", e);
        else
            std::snprintf(buf, sizeof buf, "%.3ge%d", m, e);
        return buf;
    }
    if (a >= 1e4)
        std::snprintf(buf, sizeof buf, "%.0f", value);
    else
        std::snprintf(buf, sizeof buf, "%.4g", value);
    return buf;
}

Bins histogram_bins(const std::vector<double>& values, int bins, bool log, std::optional<double> lo,
                    std::optional<double> hi) {
    Bins out;
    bins = std::max(bins, 1);
    double a = std::numeric_limits<double>::infinity(), b = -a;
    for (double v : values)
        if (finite(v) && (!log || v > 0)) {
            a = std::min(a, v);
            b = std::max(b, v);
        }
    if (lo && (!log || *lo > 0)) a = *lo;
    if (hi) b = *hi;
    if (!(a <= b)) {
        a = log ? 1 : 0;
        b = log ? 10 : 1;
    }
    if (a == b) b = log ? a * 10 : a + 1;
    const double ta = log ? std::log10(a) : a, tb = log ? std::log10(b) : b;
    out.edges.resize(static_cast<std::size_t>(bins) + 1);
    for (int i = 0; i <= bins; ++i) {
        const double t = ta + (tb - ta) * i / bins;
        out.edges[static_cast<std::size_t>(i)] = log ? std::pow(10.0, t) : t;
    }
    out.edges.front() = a;
    out.edges.back() = b;
    out.counts.assign(static_cast<std::size_t>(bins), 0);
    for (double v : values) {
        if (!finite(v) || (log && v <= 0) || v < a || v > b) continue;
        // The bin from the edges themselves, so that a value on an edge goes to the bin above it.
        auto it = std::upper_bound(out.edges.begin(), out.edges.end(), v);
        std::size_t i = static_cast<std::size_t>(it - out.edges.begin());
        i = i == 0 ? 0 : i - 1;
        if (i >= out.counts.size()) i = out.counts.size() - 1;
        ++out.counts[i];
    }
    return out;
}

}  // namespace hp::plot
