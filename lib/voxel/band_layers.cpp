// Step 4 of the narrow-band voxelizer (band.cpp): layers by a breadth-first search of depth B from
// the surface voxels through the bricks, under the dense sweeps' side rule (a step may leave a
// surface voxel to either side, never cross inside/outside), which gives the same distances as the
// sweeps of layers.cpp up to B; run level by level on bit masks (8 words of 64 bits per brick).
#include <atomic>
#include <array>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "voxel/band_work.hpp"

namespace hp::voxel_detail {
namespace {

// 4. The layers' bit masks: a brick is 8 words of 64 bits (one per z slice, bit x + 8 y).
using Mask = std::array<std::uint64_t, 8>;
constexpr std::uint32_t kNoBrick = UINT32_MAX;

struct LayerMasks {
    std::vector<std::array<std::uint32_t, 6>> nbr;  // neighbour brick across each face (-x, +x, -y, +y, -z, +z), or kNoBrick
    std::vector<Mask> unknown, inside, front_in, front_out;
    explicit LayerMasks(std::size_t nb) : nbr(nb), unknown(nb), inside(nb), front_in(nb), front_out(nb) {}
};

// 4a. Per brick: its face neighbours, its unknown and inside voxels; both fronts start at the surface voxels.
LayerMasks layer_masks(const BandCells& w) {
    const GridSpec& g = w.g;
    const int nx = g.dims[0], ny = g.dims[1], nz = g.dims[2];
    const std::size_t nb = w.cells.brick_count();
    const auto& bl = w.cells.blocks;
    std::vector<std::size_t> block_of_brick(nb);
    for (std::size_t b = 0; b < w.cells.block_count(); ++b)
        if (w.cells.index[b] != BrickField<std::uint16_t>::kTile) block_of_brick[w.cells.index[b]] = b;
    LayerMasks m(nb);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, nb, 256), [&](const tbb::blocked_range<std::size_t>& r) {
        for (std::size_t n = r.begin(); n != r.end(); ++n) {
            const std::size_t b = block_of_brick[n];
            const auto c = w.cells.block_coords(b);
            for (int a = 0; a < 3; ++a)
                for (int sgn = 0; sgn < 2; ++sgn) {
                    auto cc = c;
                    cc[static_cast<std::size_t>(a)] += sgn ? 1 : -1;
                    std::uint32_t nn = kNoBrick;
                    if (cc[static_cast<std::size_t>(a)] >= 0 && cc[static_cast<std::size_t>(a)] < bl[static_cast<std::size_t>(a)])
                        nn = w.cells.index[block_index(bl, cc[0], cc[1], cc[2])];
                    m.nbr[n][static_cast<std::size_t>(2 * a + sgn)] = nn;
                }
            const int x0 = c[0] * kBrickDim, y0 = c[1] * kBrickDim, z0 = c[2] * kBrickDim;
            const std::uint16_t* cell = w.cells.bricks.data() + n * kBrickVoxels;
            Mask un{}, in{}, surf{};
            if (x0 + kBrickDim <= nx && y0 + kBrickDim <= ny && z0 + kBrickDim <= nz) {
                // A brick inside the grid: the masks word by word, without bounds tests.
                for (std::size_t z = 0; z < 8; ++z) {
                    std::uint64_t sf = 0, ib = 0;
                    for (std::size_t bit = 0; bit < 64; ++bit) {
                        const std::uint16_t v = cell[z * 64 + bit];
                        sf |= static_cast<std::uint64_t>(v == 0) << bit;
                        ib |= static_cast<std::uint64_t>(v & 1) << bit;
                    }
                    surf[z] = sf, un[z] = ~sf, in[z] = ib;
                }
                m.unknown[n] = un, m.inside[n] = in, m.front_in[n] = surf, m.front_out[n] = surf;
                continue;
            }
            for (int o = 0; o < kBrickVoxels; ++o) {
                const int dx = o & 7, dy = (o >> 3) & 7, dz = o >> 6;
                const std::uint64_t bit = std::uint64_t{1} << (o & 63);
                if (x0 + dx >= nx || y0 + dy >= ny || z0 + dz >= nz) continue;  // beyond the grid: never reached
                if (cell[o] == 0) surf[static_cast<std::size_t>(dz)] |= bit;
                else un[static_cast<std::size_t>(dz)] |= bit;
                if (cell[o] & 1) in[static_cast<std::size_t>(dz)] |= bit;
            }
            m.unknown[n] = un, m.inside[n] = in, m.front_in[n] = surf, m.front_out[n] = surf;
        }
    });
    return m;
}

// Dilations of brick n's mask by one voxel along an axis, with the neighbours' boundary bits.
constexpr std::uint64_t kX0 = 0x0101010101010101ull, kX7 = 0x8080808080808080ull;
constexpr Mask kEmpty{};
inline const Mask& mask_at(const std::vector<Mask>& v, std::uint32_t m) { return m == kNoBrick ? kEmpty : v[m]; }

inline void dilate_x(const std::vector<Mask>& f, const std::array<std::uint32_t, 6>& nbr, std::size_t n, Mask& out) {
    const Mask &m = f[n], &l = mask_at(f, nbr[0]), &h = mask_at(f, nbr[1]);
    for (std::size_t z = 0; z < 8; ++z)
        out[z] = m[z] | ((m[z] << 1) & ~kX0) | ((m[z] >> 1) & ~kX7) | ((l[z] >> 7) & kX0) | ((h[z] << 7) & kX7);
}
inline void dilate_y(const std::vector<Mask>& f, const std::array<std::uint32_t, 6>& nbr, std::size_t n, Mask& out) {
    const Mask &m = f[n], &l = mask_at(f, nbr[2]), &h = mask_at(f, nbr[3]);
    for (std::size_t z = 0; z < 8; ++z) out[z] = m[z] | (m[z] << 8) | (m[z] >> 8) | (l[z] >> 56) | (h[z] << 56);
}
inline void dilate_z(const std::vector<Mask>& f, const std::array<std::uint32_t, 6>& nbr, std::size_t n, Mask& out) {
    const Mask &m = f[n], &l = mask_at(f, nbr[4]), &h = mask_at(f, nbr[5]);
    for (std::size_t z = 0; z < 8; ++z) out[z] = m[z] | (z > 0 ? m[z - 1] : l[7]) | (z < 7 ? m[z + 1] : h[0]);
}

// 4b. Layers: breadth-first, level by level, from the surface voxels, on bit masks. A level
// dilates the previous level's inside and outside fronts (26: the 3x3x3 box, separably along x,
// y, z; 6: the six faces) across bricks, and keeps the unknown voxels of the same side; the
// surface voxels (level 0) reach both sides. The same voxel sets per level as a breadth-first
// search under the side rule, computed brick by brick without atomics.
void grow_layers(BandCells& w, LayerMasks& m, int band, int connectivity, const Progress& progress) {
    const std::size_t nb = w.cells.brick_count();
    const bool diag = connectivity == 26;
    std::vector<Mask> ax_in(nb), ax_out(nb), ay_in(nb), ay_out(nb), next_in(nb), next_out(nb);
    for (int level = 1; level <= band; ++level) {
        if (diag) {
            tbb::parallel_for(tbb::blocked_range<std::size_t>(0, nb, 1024), [&](const tbb::blocked_range<std::size_t>& r) {
                for (std::size_t n = r.begin(); n != r.end(); ++n)
                    dilate_x(m.front_in, m.nbr[n], n, ax_in[n]), dilate_x(m.front_out, m.nbr[n], n, ax_out[n]);
            });
            tbb::parallel_for(tbb::blocked_range<std::size_t>(0, nb, 1024), [&](const tbb::blocked_range<std::size_t>& r) {
                for (std::size_t n = r.begin(); n != r.end(); ++n)
                    dilate_y(ax_in, m.nbr[n], n, ay_in[n]), dilate_y(ax_out, m.nbr[n], n, ay_out[n]);
            });
        }
        std::atomic<bool> any{false};
        tbb::parallel_for(tbb::blocked_range<std::size_t>(0, nb, 1024), [&](const tbb::blocked_range<std::size_t>& r) {
            bool mine = false;
            for (std::size_t n = r.begin(); n != r.end(); ++n) {
                const std::array<std::uint32_t, 6>& nbr = m.nbr[n];
                Mask din, dout;
                if (diag) {
                    dilate_z(ay_in, nbr, n, din), dilate_z(ay_out, nbr, n, dout);
                } else {
                    Mask a, b2;
                    dilate_x(m.front_in, nbr, n, din), dilate_y(m.front_in, nbr, n, a), dilate_z(m.front_in, nbr, n, b2);
                    for (std::size_t z = 0; z < 8; ++z) din[z] |= a[z] | b2[z];
                    dilate_x(m.front_out, nbr, n, dout), dilate_y(m.front_out, nbr, n, a), dilate_z(m.front_out, nbr, n, b2);
                    for (std::size_t z = 0; z < 8; ++z) dout[z] |= a[z] | b2[z];
                }
                std::uint16_t* cell = w.cells.bricks.data() + n * kBrickVoxels;
                Mask& un = m.unknown[n];
                const Mask& in = m.inside[n];
                for (std::size_t z = 0; z < 8; ++z) {
                    const std::uint64_t ni = din[z] & un[z] & in[z], no = dout[z] & un[z] & ~in[z];
                    next_in[n][z] = ni, next_out[n][z] = no;
                    std::uint64_t all = ni | no;
                    if (!all) continue;
                    mine = true;
                    un[z] &= ~all;
                    for (; all; all &= all - 1) {
                        const std::size_t o = z * 64 + static_cast<std::size_t>(__builtin_ctzll(all));
                        cell[o] = static_cast<std::uint16_t>((level << 1) | (cell[o] & 1));
                    }
                }
            }
            if (mine) any.store(true, std::memory_order_relaxed);
        });
        m.front_in.swap(next_in), m.front_out.swap(next_out);
        progress.report("layers", static_cast<double>(level) / band);
        if (!any.load()) break;
    }
}

}  // namespace

void grow_band_layers(BandCells& w, int band, int connectivity, const Progress& progress) {
    LayerMasks masks = layer_masks(w);
    grow_layers(w, masks, band, connectivity, progress);
}

}  // namespace hp::voxel_detail
