// The hybrid fill's lattice (voxel/hybrid.hpp): positions along each axis, cells, f_a at a point,
// and the part of the lattice that a set of cells needs (SparseHybridLattice).
#include "voxel/hybrid.hpp"

#include <array>
#include <span>
#include <utility>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_sort.h>

namespace hp::voxel_detail {

HybridAxis::HybridAxis(std::size_t n) {
    for (std::size_t i = 0; i < n; i += kLatticeStride) pos.push_back(static_cast<int>(i));
    if (pos.back() != static_cast<int>(n) - 1 || pos.size() == 1) pos.push_back(static_cast<int>(n) - 1);
    cell.resize(n);
    t.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t c = std::min(i / kLatticeStride, pos.size() - 2);
        cell[i] = static_cast<std::uint32_t>(c);
        const int span = pos[c + 1] - pos[c];
        t[i] = span > 0 ? static_cast<double>(static_cast<int>(i) - pos[c]) / span : 0.0;
    }
}

HybridLattice::HybridLattice(const GridSpec& g)
    : axis{HybridAxis(static_cast<std::size_t>(g.dims[0])), HybridAxis(static_cast<std::size_t>(g.dims[1])),
           HybridAxis(static_cast<std::size_t>(g.dims[2]))} {
    for (int d = 0; d < 3; ++d) n[d] = axis[d].pos.size(), cells[d] = n[d] - 1;
}

double HybridLattice::width(std::size_t a, std::size_t b, std::size_t c) const {
    const std::vector<int>&px = axis[0].pos, &py = axis[1].pos, &pz = axis[2].pos;
    return std::max({px[a + 1] - px[a], py[b + 1] - py[b], pz[c + 1] - pz[c]});
}

void lattice_f(const HybridLattice& lattice, const std::vector<CrossingTable>& tables, const GridSpec& g, std::size_t a,
               std::size_t b, std::size_t c, double w, double f[3]) {
    const std::size_t ijk[3] = {static_cast<std::size_t>(lattice.axis[0].pos[a]), static_cast<std::size_t>(lattice.axis[1].pos[b]),
                                static_cast<std::size_t>(lattice.axis[2].pos[c])};
    for (int d = 0; d < 3; ++d) {
        const CrossingTable& t = tables[static_cast<std::size_t>(d)];
        int count = 0;
        const double x = g.origin[d] + (static_cast<double>(ijk[d]) + 0.5) * g.voxel_size;
        f[d] = w - t.signed_before(ijk[(d + 1) % 3], ijk[(d + 2) % 3], x, count);
    }
}

SparseHybridLattice::SparseHybridLattice(const HybridLattice& lattice, const std::vector<CrossingTable>& tables, const GridSpec& g,
                                         const FastWinding& fast, std::vector<std::size_t> cell_ids)
    : ids(std::move(cell_ids)) {
    tbb::parallel_sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    const std::size_t lx = lattice.n[0], ly = lattice.n[1], lz = lattice.n[2];
    const std::size_t cx = lattice.cells[0], cy = lattice.cells[1];
    auto coords = [&](std::size_t p, std::size_t at[3]) { at[0] = p % lx, at[1] = (p / lx) % ly, at[2] = p / (lx * ly); };
    const std::size_t step[3] = {1, lx, lx * ly};
    // Per lattice point (a table as large as the grid's 8^3 blocks, like the band's brick index):
    // first whether the cells' corners (kCorner) or the corners' lattice neighbours (kNeighbour)
    // need it, then its number among the needed points in lattice order.
    constexpr std::uint32_t kNone = UINT32_MAX, kCorner = UINT32_MAX - 1, kNeighbour = UINT32_MAX - 2;
    std::vector<std::uint32_t> slot_of(lx * ly * lz, kNone);
    for (std::size_t id : ids) {
        const std::size_t a = id % cx, b = (id / cx) % cy, c = id / (cx * cy);
        for (int q = 0; q < 8; ++q)
            slot_of[lattice.point(a + static_cast<std::size_t>(q & 1), b + static_cast<std::size_t>(q >> 1 & 1),
                                  c + static_cast<std::size_t>(q >> 2 & 1))] = kCorner;
    }
    std::vector<std::size_t> points;  // the needed points in lattice order
    std::vector<std::uint8_t> corner;  // parallel to points
    for (std::size_t p = 0; p < slot_of.size(); ++p) {
        if (slot_of[p] != kCorner) continue;
        std::size_t at[3];
        coords(p, at);
        for (int d = 0; d < 3; ++d)
            if (at[d] > 0 && at[d] + 1 < lattice.n[d])
                for (std::size_t nb : {p - step[d], p + step[d]})
                    if (slot_of[nb] == kNone) slot_of[nb] = kNeighbour;
    }
    for (std::size_t p = 0; p < slot_of.size(); ++p) {
        if (slot_of[p] == kNone) continue;
        corner.push_back(slot_of[p] == kCorner ? 1 : 0);
        slot_of[p] = static_cast<std::uint32_t>(points.size());
        points.push_back(p);
    }

    // f_a at the points, as the dense fill: the fast winding number at the centre, minus c_a.
    // In packets of up to 64 points of a 4^3 block of the lattice (at_packet: at()'s values),
    // taken block after block.
    std::vector<std::uint32_t> order;
    order.reserve(points.size());
    for (std::size_t bz = 0; bz < lz; bz += 4)
        for (std::size_t by = 0; by < ly; by += 4)
            for (std::size_t bx = 0; bx < lx; bx += 4)
                for (std::size_t z = bz; z < std::min(lz, bz + 4); ++z)
                    for (std::size_t y = by; y < std::min(ly, by + 4); ++y)
                        for (std::size_t x = bx; x < std::min(lx, bx + 4); ++x) {
                            const std::uint32_t e = slot_of[lattice.point(x, y, z)];
                            if (e != kNone) order.push_back(e);
                        }
    std::vector<double> wl(points.size());
    const std::size_t packets = (points.size() + FastWinding::kPacket - 1) / FastWinding::kPacket;
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, packets, 4), [&](const tbb::blocked_range<std::size_t>& r) {
        std::array<Vec3d, FastWinding::kPacket> q;
        std::array<double, FastWinding::kPacket> v;
        for (std::size_t k = r.begin(); k != r.end(); ++k) {
            const std::size_t p0 = k * FastWinding::kPacket, m = std::min(FastWinding::kPacket, points.size() - p0);
            for (std::size_t i = 0; i < m; ++i) {
                std::size_t at[3];
                coords(points[order[p0 + i]], at);
                q[i] = g.center(lattice.axis[0].pos[at[0]], lattice.axis[1].pos[at[1]], lattice.axis[2].pos[at[2]]);
            }
            fast.at_packet(std::span<const Vec3d>(q.data(), m), std::span<double>(v.data(), m));
            for (std::size_t i = 0; i < m; ++i) wl[order[p0 + i]] = v[i];
        }
    });
    std::vector<std::uint32_t>().swap(order);
    std::vector<double> f(3 * points.size());
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, points.size(), 1024), [&](const tbb::blocked_range<std::size_t>& r) {
        for (std::size_t e = r.begin(); e != r.end(); ++e) {
            std::size_t at[3];
            coords(points[e], at);
            lattice_f(lattice, tables, g, at[0], at[1], at[2], wl[e], &f[3 * e]);
        }
    });
    // The curvature of each f_a at the corners.
    std::vector<double> curv(3 * points.size(), 0.0);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, points.size(), 1024), [&](const tbb::blocked_range<std::size_t>& r) {
        for (std::size_t e = r.begin(); e != r.end(); ++e) {
            if (!corner[e]) continue;
            const std::size_t p = points[e];
            std::size_t at[3];
            coords(p, at);
            for (std::size_t fa = 0; fa < 3; ++fa)
                curv[3 * e + fa] = lattice_curvature(lattice, at, [&](int d, int sgn) {
                    const std::size_t q = sgn == 0 ? p : sgn > 0 ? p + step[d] : p - step[d];
                    return f[3 * slot_of[q] + fa];
                });
        }
    });
    // The cells.
    cells.resize(ids.size());
    corner_f.resize(24 * ids.size());
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, ids.size(), 256), [&](const tbb::blocked_range<std::size_t>& r) {
        for (std::size_t s = r.begin(); s != r.end(); ++s) {
            const std::size_t id = ids[s], a = id % cx, b = (id / cx) % cy, c = id / (cx * cy);
            std::size_t in_points[8];
            for (int q = 0; q < 8; ++q) {
                in_points[q] = slot_of[lattice.point(a + static_cast<std::size_t>(q & 1), b + static_cast<std::size_t>(q >> 1 & 1),
                                                     c + static_cast<std::size_t>(q >> 2 & 1))];
                for (std::size_t fa = 0; fa < 3; ++fa) corner_f[24 * s + 8 * fa + static_cast<std::size_t>(q)] = f[3 * in_points[q] + fa];
            }
            cells[s] = hybrid_cell(
                lattice.width(a, b, c), [&](int fa, int q) { return f[3 * in_points[q] + static_cast<std::size_t>(fa)]; },
                [&](int fa, int q) { return curv[3 * in_points[q] + static_cast<std::size_t>(fa)]; });
        }
    });
}

}  // namespace hp::voxel_detail
