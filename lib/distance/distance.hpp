#pragma once
// lib/distance — signed distance fields over a layered voxelmap.
//
// In: the mesh, the voxelmap's grid and layers (lib/voxel, x fastest). Out: per voxel the signed
// distance from its centre to the mesh, inside positive, world units; optionally the unit
// gradient (towards increasing distance, i.e. deeper inside). Sign from the layers; on surface
// voxels from the angle-weighted pseudo-normal at the closest feature.
// Accuracy: exact (the BVH query's closest point, found brick by brick) within 3 voxels of the
// surface (DistanceOptions::exact_layers widens it); beyond, the exact distance to a propagated triangle, an upper bound measured within 0.25
// voxel of the truth on the reference meshes. Cost: one BVH query and a candidate scan per brick for
// the band, a few raster passes beyond it (13 point distances per voxel, and an exact point-triangle
// test where the nearest neighbour holds another triangle; from the third pass only at voxels a
// neighbour of which changed). Memory: 16 bytes per voxel while working (each voxel's triangle and
// its closest point on it; its distance, that triangle's, is computed again where needed), the
// layers' signs and exact band kept in the triangles' words; the values then take the closest
// points' pages (compute_distance_as).
// Threads: TBB, the same result for any thread count. Method and measurements:
// docs/distance-method.md.
#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "core/progress.hpp"
#include "mesh/mesh.hpp"
#include "voxel/brick.hpp"
#include "voxel/grid.hpp"

namespace hp {

struct DistanceOptions {
    int connectivity = 26;  // of the voxelmap's layers (decides the exact band in layers)
    // Exact wherever |layer| <= this: 0 (or less than the default) takes the default, 3 layers (9
    // for 6-connected layers); wider makes more voxels exact and costs their closest-point queries.
    int exact_layers = 0;
    bool gradient = false;
    // The passes visit every voxel beyond the band, also where no neighbour changed (the same
    // field, slower: the reference the skipping is tested against).
    bool visit_every_voxel = false;
};

// What a run did and how long each phase took (prepare: the working arrays allocated and
// initialised, the BVH and the sign tables built; sign: every value and gradient computed from its
// voxel's triangle and written, the voxels no band reached found by a query, after the
// propagation).
struct DistanceRun {
    double min = 0, max = 0;        // of the values (before any rounding to float), and 0
    std::size_t exact_voxels = 0;   // computed by BVH queries
    int propagation_passes = 0;     // raster passes run (closest-triangle propagation)
    std::size_t propagation_visits = 0;  // voxels visited by the passes (beyond the band)
    double seconds_prepare = 0, seconds_exact = 0, seconds_propagate = 0, seconds_sign = 0;
};

struct DistanceField : DistanceRun {
    GridSpec grid;
    std::vector<double> values;     // x fastest, inside positive
    std::vector<float> gradient;    // 3 per voxel when requested
};

// The layers within which the dense field is exact by default: 3, or 9 for 6-connected layers.
inline int default_exact_layers(int connectivity) { return connectivity == 6 ? 9 : 3; }

// `layers`: the voxelmap's values over `grid` (x fastest).
DistanceField compute_distance(const TriMesh& mesh, const GridSpec& grid, const std::vector<std::int32_t>& layers,
                               const DistanceOptions& options, const Progress& progress = {});

// Pages mapped from the system all at once (MAP_POPULATE: one call instead of a page fault per
// page), zero at first, unmapped when destroyed; shrink() unmaps all but the first `bytes`
// (rounded up to a page). Throws std::bad_alloc when the system refuses.
class MappedPages {
public:
    MappedPages() = default;
    explicit MappedPages(std::size_t bytes);
    MappedPages(MappedPages&& o) noexcept : data_(o.data_), bytes_(o.bytes_) { o.data_ = nullptr, o.bytes_ = 0; }
    MappedPages& operator=(MappedPages&& o) noexcept;
    MappedPages(const MappedPages&) = delete;
    MappedPages& operator=(const MappedPages&) = delete;
    ~MappedPages() { reset(); }
    void* data() const { return data_; }
    template <class T>
    T* as() const { return static_cast<T*>(data_); }
    void shrink(std::size_t bytes);
    void reset();

private:
    void* data_ = nullptr;
    std::size_t bytes_ = 0;
};

// The dense field as compute_distance_as returns it: its values (x fastest, inside positive, each
// the double result rounded to V) in the pages that held the propagation's closest points.
template <class V>
struct DenseDistance : DistanceRun {
    MappedPages pages;
    const V* values() const { return static_cast<const V*>(pages.data()); }
};

// The layers within which the dense field is exact for `options` (exact_layers, at least the default).
inline int dense_exact_band(const DistanceOptions& options) {
    return std::max(options.exact_layers, default_exact_layers(options.connectivity));
}

// Each voxel's word while the dense field is computed (4 bytes per voxel): what the field needs of
// its layer in the top three bits (whether |layer| <= the exact band; the layer's sign), the
// triangle it holds in the others. The caller writes every voxel's of(layer, band), e.g. slice by
// slice as it reads the layers, which are then not needed in memory; compute_distance_as fills in
// the triangles. Meshes of up to kNone - 1 triangles.
struct DenseCells {
    static constexpr std::uint32_t kFixed = 1u << 31;    // |layer| <= band: exact, never changes
    static constexpr std::uint32_t kInside = 1u << 30;   // layer > 0
    static constexpr std::uint32_t kOutside = 1u << 29;  // layer < 0 (neither: layer 0, the surface)
    static constexpr std::uint32_t kTriangle = kOutside - 1;  // the bits of the triangle
    static constexpr std::uint32_t kNone = kTriangle;         // holds no triangle (yet)
    static std::uint32_t of(std::int64_t layer, int band) {
        return (layer >= -band && layer <= band ? kFixed : 0u) | (layer > 0 ? kInside : layer < 0 ? kOutside : 0u) | kNone;
    }
    static int layer_sign(std::uint32_t cell) { return (cell & kInside) ? 1 : (cell & kOutside) ? -1 : 0; }

    explicit DenseCells(std::size_t count = 0) : pages(count * sizeof(std::uint32_t)) {}
    std::uint32_t* data() const { return pages.as<std::uint32_t>(); }
    MappedPages pages;
};

// The same field as compute_distance, from each voxel's DenseCells::of(layer, dense_exact_band(options))
// in `cells` (grid.count() of them; consumed: unmapped on return), with its values as V (float or
// double) and, when options.gradient, the gradients written into `gradient` (3 * grid.count()
// floats of the caller's). Every output value is written once, after the propagation, into the
// pages of the closest points: nothing of the grid's size is allocated besides them and the cells
// (16 bytes per voxel in all).
template <class V>
DenseDistance<V> compute_distance_as(const TriMesh& mesh, const GridSpec& grid, DenseCells&& cells, float* gradient,
                                     const DistanceOptions& options, const Progress& progress = {});
// The same from layers of type L (int16 or int32; only |layer| <= the exact band, the sign and 0
// matter), whose cells it makes first.
template <class V, class L>
DenseDistance<V> compute_distance_as(const TriMesh& mesh, const GridSpec& grid, const L* layers, float* gradient,
                                     const DistanceOptions& options, const Progress& progress = {});

// Narrow band: `layers` a band voxelmap (voxel/band.hpp; or any voxelmap whose layers are exact up
// to +-band). Voxels with |layer| < band get the exact distance (the minimum over the mesh's
// triangles of the same point-triangle distances compute_distance's BVH queries take, so the same
// value wherever both are exact); every other voxel reads sign * band * voxel_size, and blocks
// that hold no such voxel are tiles. Work and memory scale with the bricks of `layers`; no dense
// array. Method: brick by brick, candidate triangles per brick (distance/band_distance.cpp).
// V: double, or float where the field is stored as float anyway (half the memory; each value the
// double result rounded).
template <class V>
struct BandDistanceFieldOf {
    BrickField<V> values;    // inside positive
    double min = 0, max = 0;  // of the values before rounding to V, and 0
    std::size_t exact_voxels = 0;
    double seconds_exact = 0;
};
using BandDistanceField = BandDistanceFieldOf<double>;
template <class V, class L>
BandDistanceFieldOf<V> compute_distance_band_as(const TriMesh& mesh, const BrickField<L>& layers, int band,
                                                const Progress& progress = {});
// The same, consuming the layers: their bricks' memory goes back to the system as the blocks are
// done (brick by brick where the bricks are numbered in block order, as the VDB reader gives them), while the values' pages are
// faulted in as they are written, so that the layers and the values are never both whole in
// memory. `layers` is empty afterwards.
template <class V, class L>
BandDistanceFieldOf<V> compute_distance_band_as(const TriMesh& mesh, BrickField<L>&& layers, int band,
                                                const Progress& progress = {});
BandDistanceField compute_distance_band(const TriMesh& mesh, const BrickField<std::int32_t>& layers, int band,
                                        const Progress& progress = {});

// Narrow-band gradients: for every voxel with |layer| < band (those compute_distance_band makes
// exact) the unit gradient compute_distance gives there (towards increasing distance), by the same
// formula from the same closest point, so the same floats; every other voxel (beyond the band, where
// the field is the constant +-band voxel sizes) reads zero, and blocks without band voxels are tiles
// of zero. Work: one BVH query and a candidate scan per brick (distance/brick_nearest.hpp); memory: 12
// bytes per voxel of `layers`' bricks (distance/band_gradient.cpp).
using Vec3f = std::array<float, 3>;
struct BandGradientField {
    BrickField<Vec3f> values;
    std::size_t exact_voxels = 0;
    double seconds = 0;
};
template <class L>
BandGradientField compute_gradient_band(const TriMesh& mesh, const BrickField<L>& layers, int band,
                                        const Progress& progress = {});

}  // namespace hp
