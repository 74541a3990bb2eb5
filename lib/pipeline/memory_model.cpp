#include "pipeline/memory_model.hpp"

#include <algorithm>
#include <cmath>

#include <unistd.h>

#include "core/error.hpp"
#include "core/text.hpp"
#include "pipeline/stage_common.hpp"
#include "voxel/band.hpp"
#include "voxel/voxelize.hpp"

namespace hp::pipeline {

namespace {

constexpr double kDenseBytesPerVoxel = 40;
constexpr double kDenseGradientBytesPerVoxel = 16;
constexpr double kBandBytesPerVoxel = 16;
constexpr double kBandGradientBytesPerVoxel = 4;

std::string gb(double bytes) { return strf("%.1f GB", bytes / 1e9); }

// The smallest voxel size (from s up, 1 % steps) for which `fits` holds.
template <class F>
double smallest_fitting(double s, F&& fits) {
    double t = s;
    for (int n = 0; n < 100000 && !fits(t); ++n) t *= 1.01;
    return t;
}

double count(const std::array<double, 3>& d) { return d[0] * d[1] * d[2]; }

// " with the gradient" when there is one (the messages' wording).
const char* with_gradient(bool gradient) { return gradient ? " with the gradient" : ""; }

}  // namespace

double physical_memory() {
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 8e9;
}

double mesh_area(const TriMesh& mesh) {
    double a = 0;
    for (const auto& t : mesh.triangles)
        a += 0.5 * length(cross(mesh.vertices[t[1]] - mesh.vertices[t[0]], mesh.vertices[t[2]] - mesh.vertices[t[0]]));
    return a;
}

std::array<double, 3> dims_for(const Aabb& box, double s, int pad) {
    const Vec3d size = box.size();
    std::array<double, 3> d{};
    for (int a = 0; a < 3; ++a) d[static_cast<std::size_t>(a)] = std::max(1.0, std::ceil(size[a] / s - 1e-9)) + 2.0 * pad;
    return d;
}

double dense_bytes(const std::array<double, 3>& dims, bool gradient) {
    return count(dims) * (kDenseBytesPerVoxel + (gradient ? kDenseGradientBytesPerVoxel : 0));
}

double band_bytes(const std::array<double, 3>& dims, double area, double s, int band, bool gradient) {
    double blocks = 1;
    for (double n : dims) blocks *= std::ceil(n / 8);
    const double rows = dims[1] * dims[2];
    return band_voxel_estimate(area, s, band) * (kBandBytesPerVoxel + (gradient ? kBandGradientBytesPerVoxel : 0)) +
           blocks * 16 + rows * 12;
}

FieldMode choose_field_mode(const Aabb& box, double area, double s, int pad, std::optional<int> requested, bool gradient,
                            double memory) {
    const double longest = std::max({box.size().x, box.size().y, box.size().z});
    if (longest / s + 2 * pad > kMaxGridDim) {
        const double t = smallest_fitting(s, [&](double v) { return longest / v + 2 * pad <= kMaxGridDim; });
        fail_usage(strf("voxel size %.6g gives more than %d voxels along the longest side (the limit of the exact "
                        "crossing arithmetic); the smallest voxel size that fits is about %.6g",
                        s, kMaxGridDim, t));
    }
    const auto dims = dims_for(box, s, pad);
    const double voxels = count(dims);
    const double dense = dense_bytes(dims, gradient);
    auto dense_fits = [&](double v, double share) {
        return count(dims_for(box, v, pad)) <= kMaxDenseVoxels && dense_bytes(dims_for(box, v, pad), gradient) <= share * memory;
    };
    auto band_need = [&](double v, int b) { return band_bytes(dims_for(box, v, pad), area, v, b, gradient); };
    const char* with = with_gradient(gradient);
    FieldMode m;
    if (!requested) {
        if (dense_fits(s, 0.5)) {
            m.reason = strf("dense: %.3g voxels need about %s%s, within half of the %s of memory (--band B for a narrow band)",
                            voxels, gb(dense).c_str(), with, gb(memory).c_str());
            return m;
        }
        requested = kAutoBand;
        m.reason = strf("band %d: a dense grid of %.3g voxels would need about %s%s, more than half of the %s of memory "
                        "(--band 0 forces dense)",
                        kAutoBand, voxels, gb(dense).c_str(), with, gb(memory).c_str());
    }
    m.band = *requested;
    if (m.band == 0) {
        if (!dense_fits(s, 0.9)) {
            const double t = smallest_fitting(s, [&](double v) { return dense_fits(v, 0.9); });
            const double need = band_need(s, kAutoBand);
            const std::string band_hint =
                need <= 0.9 * memory ? strf("--band %d (about %s) or ", kAutoBand, gb(need).c_str()) : std::string();
            fail_usage(strf("voxel size %.6g gives a dense grid of %.3g voxels needing about %s%s (%s of memory here, at "
                            "most 2^31 voxels); use %sa voxel size of at least %.6g",
                            s, voxels, gb(dense).c_str(), with, gb(memory).c_str(), band_hint.c_str(), t));
        }
        if (m.reason.empty()) m.reason = strf("dense (--band 0): %.3g voxels, about %s%s", voxels, gb(dense).c_str(), with);
        return m;
    }
    const double need = band_need(s, m.band);
    if (need > 0.9 * memory) {
        int fit = m.band;
        while (fit > 1 && band_need(s, fit) > 0.9 * memory) --fit;
        const int b = m.band;
        const double t = smallest_fitting(s, [&](double v) { return band_need(v, b) <= 0.9 * memory; });
        std::string hint = band_need(s, fit) <= 0.9 * memory ? strf("--band %d or ", fit) : std::string();
        fail_usage(strf("voxel size %.6g with --band %d needs about %s%s (%s of memory here); use %sa voxel size of at least %.6g",
                        s, b, gb(need).c_str(), with, gb(memory).c_str(), hint.c_str(), t));
    }
    if (m.reason.empty())
        m.reason = strf("band %d (--band): about %s%s instead of %s dense", m.band, gb(need).c_str(), with, gb(dense).c_str());
    return m;
}

void check_distance_fits(const Aabb& box, double area, double s, int pad, int band, bool gradient, double memory,
                         const std::string& band_option, const std::string& gradient_option) {
    auto need = [&](double v, int b, bool g) {
        const auto dims = dims_for(box, v, pad);
        return b > 0 ? band_bytes(dims, area, v, b, g) : dense_bytes(dims, g);
    };
    const double limit = 0.9 * memory;
    const double here = need(s, band, gradient);
    if (here <= limit) return;
    std::string hints;
    if (band == 0 && need(s, kAutoBand, gradient) <= limit)
        hints += strf("%s %d (about %s) or ", band_option.c_str(), kAutoBand, gb(need(s, kAutoBand, gradient)).c_str());
    if (band > 1) {
        int fit = band;
        while (fit > 1 && need(s, fit, gradient) > limit) --fit;
        if (need(s, fit, gradient) <= limit) hints += strf("%s %d or ", band_option.c_str(), fit);
    }
    if (gradient && need(s, band, false) <= limit)
        hints += strf("no %s (about %s) or ", gradient_option.c_str(), gb(need(s, band, false)).c_str());
    const double t = smallest_fitting(s, [&](double v) { return need(v, band, gradient) <= limit; });
    const std::string field = band > 0 ? strf("a band-%d distance field", band) : std::string("a dense distance field");
    fail_usage(strf("voxel size %.6g: %s of %.3g voxels needs about %s%s (%s of memory here); use %sa voxelmap with a "
                    "voxel size of at least %.6g",
                    s, field.c_str(), count(dims_for(box, s, pad)), gb(here).c_str(), with_gradient(gradient),
                    gb(memory).c_str(), hints.c_str(), t));
}

}  // namespace hp::pipeline
