#include "cuda/overlay/knn_graph_kernels.h"

#include <algorithm>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>

#include "cuda/cuda_check.h"
#include "shaders/shader_params.h"

namespace tvlm {

namespace {

constexpr uint32_t kNearestWarps = 8;  // points per block of the grid path's nearest, a warp each

// Squared distance in float, rounded after each operation (no fused multiply-add), as the
// Vulkan shader computes it: equal to the CPU's double wherever float is exact.
__device__ float distance2(float2 a, float2 b) {
    const float dx = __fsub_rn(b.x, a.x), dy = __fsub_rn(b.y, a.y);
    return __fadd_rn(__fmul_rn(dx, dx), __fmul_rn(dy, dy));
}

__device__ uint32_t mix64(uint64_t x) {  // MurmurHash3's finaliser
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return uint32_t(x);
}

// A point's track id from the launch's array (the one-block path reads a copy in shared
// memory instead: a dependent global load fewer in each hash probe).
struct GlobalTracks {
    const uint64_t* tracks;
    __device__ uint64_t operator()(uint32_t p) const { return tracks[p]; }
};

template <class Track>
__device__ ulonglong2 track_pair(const Track& track, uint32_t a, uint32_t b) {
    const uint64_t ta = track(a), tb = track(b);
    return ta < tb ? make_ulonglong2(ta, tb) : make_ulonglong2(tb, ta);
}
__device__ uint32_t pair_hash(ulonglong2 p) { return mix64(p.x * 0x9e3779b97f4a7c15ull + p.y); }

// Open addressing with linear probing: a slot holds entry + 1, 0 where empty.
__device__ void table_insert(uint32_t* table, uint32_t capacity, uint32_t hash, uint32_t entry) {
    for (uint32_t slot = hash & (capacity - 1);; slot = (slot + 1) & (capacity - 1))
        if (atomicCAS(&table[slot], 0u, entry + 1) == 0u) return;
}

// Whether the last frame linked points a and b (by their track ids).
template <class Track>
__device__ bool linked_before(const KnnLaunch& l, const Track& track, uint32_t a, uint32_t b) {
    const KnnDeviceState& s = *l.state;
    const uint32_t t = s.current;
    if (s.count[t] == 0) return false;
    const ulonglong2 p = track_pair(track, a, b);
    const uint32_t capacity = s.capacity[t];
    for (uint32_t slot = pair_hash(p) & (capacity - 1);; slot = (slot + 1) & (capacity - 1)) {
        const uint32_t entry = l.tables[t][slot];
        if (entry == 0u) return false;
        const ulonglong2 q = l.pairs[t][entry - 1];
        if (q.x == p.x && q.y == p.y) return true;
    }
}

// Point i's coordinates finite and its track id not seen before in the frame (`table`:
// point + 1 by track id); a fault is noted as ~i, so the lowest index wins.
__device__ void check_point(const KnnLaunch& l, uint32_t i, float2 p, uint32_t* table, uint32_t capacity) {
    if (!isfinite(p.x) || !isfinite(p.y)) atomicMax(&l.stats->bad_point, ~i);
    const uint64_t track = l.tracks[i];
    for (uint32_t slot = mix64(track) & (capacity - 1);; slot = (slot + 1) & (capacity - 1)) {
        const uint32_t before = atomicCAS(&table[slot], 0u, i + 1);
        if (before == 0u) return;
        if (l.tracks[before - 1] == track) {
            atomicMax(&l.stats->repeated_track, ~max(i, before - 1));
            return;
        }
    }
}

// (d, i) before (e, j): nearer, or as near with a lower index.
__device__ bool nearer(float d, uint32_t i, float e, uint32_t j) { return d < e || (d == e && i < j); }

// (d, i) into a list sorted by nearer(), dropping its last: from the top down, so every
// index is a constant and the list stays in registers.
template <uint32_t kMax>
__device__ void insert_nearer(float (&best_d)[kMax], uint32_t (&best_i)[kMax], float d, uint32_t i) {
    if (!nearer(d, i, best_d[kMax - 1], best_i[kMax - 1])) return;
#pragma unroll
    for (uint32_t r = kMax - 1; r > 0; --r) {
        const bool shift = nearer(d, i, best_d[r - 1], best_i[r - 1]);
        const bool place = !shift && nearer(d, i, best_d[r], best_i[r]);
        best_i[r] = shift ? best_i[r - 1] : place ? i : best_i[r];
        best_d[r] = shift ? best_d[r - 1] : place ? d : best_d[r];
    }
    if (nearer(d, i, best_d[0], best_i[0])) best_d[0] = d, best_i[0] = i;
}

// Point `me`'s nearest among every `slices`-th candidate of `candidates` from `slice` on
// (index order: a later one as near never displaces an earlier), then merged with the
// other slices' lists, held by the neighbouring lanes (slices divides 32; every lane of the
// warp takes part): a butterfly, after which each of them holds the point's list.
template <uint32_t kMax>
__device__ void nearest_of(const float2* candidates, uint32_t first, uint32_t n, uint32_t self, float2 me, bool live,
                           uint32_t slice, uint32_t slices, float (&best_d)[kMax], uint32_t (&best_i)[kMax]) {
    for (uint32_t t = slice; live && t < n; t += slices) {
        const float d = distance2(me, candidates[t]);
        if (!(d < best_d[kMax - 1]) || first + t == self) continue;
        insert_nearer(best_d, best_i, d, first + t);
    }
}
// Compare-exchange of entries r and q (r < q) into nearer() order.
template <uint32_t kMax>
__device__ void order_pair(float (&d)[kMax], uint32_t (&id)[kMax], uint32_t r, uint32_t q) {
    if (nearer(d[q], id[q], d[r], id[r])) {
        const float td = d[r];
        const uint32_t ti = id[r];
        d[r] = d[q], id[r] = id[q], d[q] = td, id[q] = ti;
    }
}

// The kMax nearest of two sorted lists, sorted: entry r against the partner's entry
// kMax - 1 - r keeps the kMax nearest as a bitonic sequence, which log2(kMax) rounds of
// compare-exchanges sort (a tenth of inserting the partner's entries one by one).
template <uint32_t kMax>
__device__ void merge_slices(uint32_t slices, float (&best_d)[kMax], uint32_t (&best_i)[kMax]) {
    for (uint32_t step = 1; step < slices; step <<= 1) {
        float other_d[kMax];
        uint32_t other_i[kMax];
#pragma unroll
        for (uint32_t r = 0; r < kMax; ++r) {
            other_d[r] = __shfl_xor_sync(0xffffffffu, best_d[r], step);
            other_i[r] = __shfl_xor_sync(0xffffffffu, best_i[r], step);
        }
#pragma unroll
        for (uint32_t r = 0; r < kMax; ++r)
            if (nearer(other_d[kMax - 1 - r], other_i[kMax - 1 - r], best_d[r], best_i[r]))
                best_d[r] = other_d[kMax - 1 - r], best_i[r] = other_i[kMax - 1 - r];
#pragma unroll
        for (uint32_t j = kMax / 2; j > 0; j >>= 1)
#pragma unroll
            for (uint32_t r = 0; r < kMax; ++r)
                if ((r & j) == 0) order_pair(best_d, best_i, r, r | j);
    }
}

// Each point's `keep` nearest, nearest first, ties to the lower index: a warp per point.
// The lanes measure 32 candidates at a time (four batches loaded ahead) and vote on those
// nearer than the point's current rank keep-1; survivors, rare after the first batches
// (about keep * ln(count / keep) of them in all for random points), join the list that
// lanes 0..keep-1 hold, sorted, by one ballot and one shuffle. Per candidate that is a
// distance, a comparison and a vote; the sixteen-thread slices this replaced inserted into
// a register list per thread, and a warp paid for an insertion whenever any of its lanes
// had one (nearly every candidate). The first lane also checks the point and enters its
// track id in the frame's table, where a repeat shows.
__global__ void __launch_bounds__(kNearestWarps * 32) nearest_kernel(KnnLaunch l) {
    const uint32_t lane = threadIdx.x % 32, n = l.count, keep = l.keep;
    const uint32_t i = blockIdx.x * kNearestWarps + threadIdx.x / 32;
    if (i >= n) return;  // whole warps
    const float2* xy = reinterpret_cast<const float2*>(l.xy);
    const float2 me = xy[i];
    if (lane == 0) check_point(l, i, me, l.track_table, l.track_capacity);
    const float kFar = __int_as_float(0x7f800000);
    float list_d = kFar, last_d = kFar;  // lane r < keep: rank r so far; last: rank keep-1
    uint32_t list_i = ~0u, last_i = ~0u;
    constexpr uint32_t kAhead = 4;
    for (uint32_t base = 0; base < n; base += 32 * kAhead) {
        float2 c[kAhead];
#pragma unroll
        for (uint32_t u = 0; u < kAhead; ++u) {
            const uint32_t j = base + 32 * u + lane;
            c[u] = j < n ? xy[j] : me;
        }
#pragma unroll
        for (uint32_t u = 0; u < kAhead; ++u) {
            const uint32_t first = base + 32 * u, j = first + lane;
            const float d = distance2(me, c[u]);
            for (uint32_t votes = __ballot_sync(~0u, j < n && j != i && nearer(d, j, last_d, last_i)); votes;
                 votes &= votes - 1) {
                const uint32_t from = __ffs(votes) - 1, ci = first + from;
                const float cd = __shfl_sync(~0u, d, from);
                if (!nearer(cd, ci, last_d, last_i)) continue;  // beaten by an earlier survivor
                const uint32_t at = __popc(__ballot_sync(~0u, lane < keep && nearer(list_d, list_i, cd, ci)));
                const float up_d = __shfl_up_sync(~0u, list_d, 1);
                const uint32_t up_i = __shfl_up_sync(~0u, list_i, 1);
                if (lane == at) list_d = cd, list_i = ci;
                if (lane > at && lane < keep) list_d = up_d, list_i = up_i;
                last_d = __shfl_sync(~0u, list_d, keep - 1);
                last_i = __shfl_sync(~0u, list_i, keep - 1);
            }
        }
    }
    if (lane < keep) l.nearest[size_t(i) * keep + lane] = list_i;
}

// Whether point a keeps its rank-r neighbour b: rank below k, or below k + h where the
// last frame linked them; and the link no steeper than max_dy (in double, as the CPU).
template <class Track>
__device__ bool keeps(const KnnLaunch& l, const Track& track, uint32_t a, uint32_t r, uint32_t b, float ya, float yb) {
    if (r >= l.k && !linked_before(l, track, a, b)) return false;
    return fabs(double(ya) - double(yb)) <= double(l.max_dy);
}

// Whether a lists its rank-r neighbour (b) as a link of the frame: each kept (a, b) once,
// from a where a < b, else from a only where b does not keep a. `nearest(p, q)`: point p's
// rank-q neighbour; `y(p)`: its y; `track(p)`: its track id. Past the count: a refused
// frame's NaN point.
template <class Nearest, class Y, class Track>
__device__ bool emits(const KnnLaunch& l, const Nearest& nearest, const Y& y, const Track& track, uint32_t a,
                      uint32_t r, uint32_t& b) {
    b = nearest(a, r);
    if (b >= l.count || !keeps(l, track, a, r, b, y(a), y(b))) return false;
    if (a < b) return true;
    for (uint32_t q = 0; q < l.keep; ++q)
        if (nearest(b, q) == a) return !keeps(l, track, b, q, a, y(b), y(a));
    return true;
}

// A thread per (point, rank): counting decides whether the slot lists a link (noting it
// under its lower end, and in `frame_links` for filling), filling writes each noted link
// into its lower end's range of `unsorted_links`. Counting also clears the table this
// frame's links go into.
template <bool kFill>
__global__ void link_kernel(KnnLaunch l) {
    if constexpr (!kFill) {
        uint32_t* next = l.tables[1 - l.state->current];
        for (uint32_t s = blockIdx.x * blockDim.x + threadIdx.x; s < l.table_capacity; s += gridDim.x * blockDim.x)
            next[s] = 0u;
    }
    const size_t q = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (q >= size_t(l.count) * l.keep) return;
    if constexpr (kFill) {
        const uint2 link = l.frame_links[q];
        if (link.x != ~0u) l.unsorted_links[l.offsets[link.x] + atomicAdd(&l.cursor[link.x], 1u)] = link;
    } else {
        const auto nearest = [&](uint32_t p, uint32_t r) { return l.nearest[size_t(p) * l.keep + r]; };
        const auto y = [&](uint32_t p) { return l.xy[2 * p + 1]; };
        uint32_t b = 0;
        const auto a = uint32_t(q / l.keep);
        const bool listed = emits(l, nearest, y, GlobalTracks{l.tracks}, a, uint32_t(q % l.keep), b);
        l.frame_links[q] = listed ? make_uint2(min(a, b), max(a, b)) : make_uint2(~0u, ~0u);
        if (listed) atomicAdd(&l.owned[min(a, b)], 1u);
    }
}

// The link at `e` of the frame's list: its track pair into the next table, and counted where
// the last frame had it.
template <class Track>
__device__ void commit(const KnnLaunch& l, const Track& track, uint32_t e, uint2 link) {
    const uint32_t next = 1 - l.state->current;
    const ulonglong2 p = track_pair(track, link.x, link.y);
    l.pairs[next][e] = p;
    table_insert(l.tables[next], l.table_capacity, pair_hash(p), e);
    if (linked_before(l, track, link.x, link.y)) atomicAdd(&l.stats->kept_both, 1u);
}

// The offsets of each lower end's links (an exclusive sum of `owned`) in one block, for
// frames of up to kScanThreads * kScanItems - 1 points: one launch where CUB's device scan
// takes two (its tile states, then the scan).
constexpr uint32_t kScanThreads = 1024, kScanItems = 8;
__global__ void __launch_bounds__(kScanThreads) scan_kernel(KnnLaunch l) {
    using Scan = cub::BlockScan<uint32_t, kScanThreads>;
    __shared__ typename Scan::TempStorage temp;
    const uint32_t n = l.count + 1, first = threadIdx.x * kScanItems;
    uint32_t v[kScanItems];
#pragma unroll
    for (uint32_t i = 0; i < kScanItems; ++i) v[i] = first + i < n ? l.owned[first + i] : 0u;
    Scan(temp).ExclusiveSum(v, v);
#pragma unroll
    for (uint32_t i = 0; i < kScanItems; ++i)
        if (first + i < n) l.offsets[first + i] = v[i];
}

// Where unsorted link e belongs in (a, b) order: its lower end's range, after the links of
// that range with a lower higher end (links are listed once, so the places differ). A
// thread per link reads its range (a handful) where a thread per lower end sorted it, one
// launch and a chain of dependent reads and writes fewer.
__device__ uint32_t sorted_place(const KnnLaunch& l, uint2 link) {
    const uint32_t first = l.offsets[link.x], end = l.offsets[link.x + 1];
    uint32_t place = first;
    for (uint32_t j = first; j < end; ++j) place += l.unsorted_links[j].y < link.y;
    return place;
}

// Capped: each link put in its sorted place, with its squared length there as the sort key
// (non-negative floats order as their bits) and its place as the value; past the links,
// keys that sort last.
__global__ void length_kernel(KnnLaunch l) {
    const uint32_t e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= l.count * l.keep) return;
    const float2* xy = reinterpret_cast<const float2*>(l.xy);
    uint32_t at = e;
    if (e < l.offsets[l.count]) {
        const uint2 link = l.unsorted_links[e];
        at = sorted_place(l, link);
        l.frame_links[at] = link;
        l.keys[at] = __float_as_uint(distance2(xy[link.x], xy[link.y]));
    } else {
        l.keys[e] = ~0u;
    }
    l.order[at] = at;
}

// Capped: shortest first (ties in (a, b) order: the sort is stable), each link kept while
// both ends have room. Sequential by nature; one thread, a few thousand links (documented).
__global__ void greedy_kernel(KnnLaunch l) {
    const uint32_t links = l.offsets[l.count];
    for (uint32_t i = 0; i < links; ++i) {
        const uint32_t e = l.order_sorted[i];
        const uint2 link = l.frame_links[e];
        if (l.degree[link.x] < l.max_degree && l.degree[link.y] < l.max_degree) {
            ++l.degree[link.x];
            ++l.degree[link.y];
            l.flags[e] = 1u;
        }
    }
}

__device__ void finish(const KnnLaunch& l, uint32_t edges);

// A thread per link of the frame (uncapped: each unsorted link put in its sorted place
// first; capped: those the cap kept), then the frame finished by the block that completes
// last (an atomic ticket): no launch of its own.
__global__ void commit_kernel(KnnLaunch l, bool capped) {
    const uint32_t links = capped ? l.stats->edges : l.offsets[l.count];
    for (uint32_t e = blockIdx.x * blockDim.x + threadIdx.x; e < links; e += gridDim.x * blockDim.x) {
        if (capped) {
            commit(l, GlobalTracks{l.tracks}, e, l.capped[e]);
        } else {
            const uint2 link = l.unsorted_links[e];
            const uint32_t at = sorted_place(l, link);
            l.frame_links[at] = link;
            commit(l, GlobalTracks{l.tracks}, at, link);
        }
    }
    __shared__ bool last;
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();  // this block's commits before its ticket
        last = atomicAdd(&l.stats->blocks_done, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (last && threadIdx.x == 0) {
        __threadfence();
        finish(l, links);
    }
}

// The frame's outcome, from one thread: a refused frame (a bad point, a repeated track) has
// no links and leaves the last frame's table current; else this frame's `edges` links
// become current.
__device__ void finish(const KnnLaunch& l, uint32_t edges) {
    KnnFrameStats& stats = *l.stats;
    KnnDeviceState& state = *l.state;
    // Counted by other blocks' atomics: read from L2, not a stale line.
    const uint32_t kept_both = *static_cast<volatile uint32_t*>(&stats.kept_both);
    if (stats.bad_point || stats.repeated_track) {
        stats.edges = stats.changes = 0;
        return;
    }
    const uint32_t now = state.current, next = 1 - now;
    stats.edges = edges;
    stats.changes = edges + state.count[now] - 2 * kept_both;
    state.count[next] = edges;
    state.capacity[next] = l.table_capacity;
    state.current = next;
}

// The frame's end where there are no neighbours to keep (no links, no commit kernel).
__global__ void finish_kernel(KnnLaunch l) { finish(l, 0u); }

// Frames of up to kBlockPoints points keeping at most 8 neighbours, uncapped: the whole
// graph in one block of kBlockThreads, in shared memory, with no launches between its steps
// (a frame of 100 points was ten latency-bound launches). The steps and their results are
// the grid path's. The points' track ids are read from shared memory, and the links are
// gathered there and each written once at its sorted place (its rank within its lower
// end's links), where sorting them in global memory was a chain of dependent loads that
// kept warps waiting at barriers for nearly half the frame. Past 512
// points the grid path is the faster: one block's 1024 threads walk every candidate.
constexpr uint32_t kBlockThreads = 1024, kBlockPoints = 512, kBlockSlots = kBlockPoints * 8,
                   kBlockTrackSlots = 2 * kBlockPoints;

__global__ void __launch_bounds__(kBlockThreads) block_graph_kernel(KnnLaunch l) {
    constexpr uint32_t kMax = 8;
    __shared__ float2 xy[kBlockPoints];
    __shared__ uint64_t track_ids[kBlockPoints];
    __shared__ uint16_t nearest[kBlockSlots];
    __shared__ uint32_t seen[kBlockTrackSlots];                      // point + 1 by track id
    __shared__ uint32_t owned[kBlockThreads], cursor[kBlockPoints];  // owned: counts, then their offsets
    __shared__ uint32_t emitted[kBlockSlots / 32];
    __shared__ uint32_t gathered[kBlockSlots];  // the links by lower end, unsorted: lower | higher << 16
    __shared__ uint32_t total;
    using Scan = cub::BlockScan<uint32_t, kBlockThreads>;
    __shared__ typename Scan::TempStorage scan;
    const uint32_t t = threadIdx.x, n = l.count, keep = l.keep, slots = n * keep;
    if (t == 0) *l.stats = KnnFrameStats{};
    for (uint32_t i = t; i < kBlockTrackSlots; i += kBlockThreads) seen[i] = 0u;
    for (uint32_t i = t; i < kBlockSlots / 32; i += kBlockThreads) emitted[i] = 0u;
    owned[t] = 0u;
    if (t < kBlockPoints) cursor[t] = 0u;
    if (t < n) {
        xy[t] = reinterpret_cast<const float2*>(l.xy)[t];
        track_ids[t] = l.tracks[t];
    }
    uint32_t* next_table = l.tables[1 - l.state->current];
    for (uint32_t i = t; i < l.table_capacity; i += kBlockThreads) next_table[i] = 0u;
    __syncthreads();
    const auto track = [&](uint32_t p) { return track_ids[p]; };
    if (t < n) check_point(l, t, xy[t], seen, kBlockTrackSlots);
    // Nearest: as many slices per point as the block has threads for (at most 8).
    const uint32_t slices = n <= 128 ? 8 : n <= 256 ? 4 : 2;
    const uint32_t i = t / slices, slice = t % slices;
    const bool live = i < n;
    float best_d[kMax];
    uint32_t best_i[kMax];
#pragma unroll
    for (uint32_t r = 0; r < kMax; ++r) best_d[r] = __int_as_float(0x7f800000), best_i[r] = ~0u;
    nearest_of(xy, 0, n, i, live ? xy[i] : make_float2(0.0f, 0.0f), live, slice, slices, best_d, best_i);
    merge_slices(slices, best_d, best_i);
    if (live && slice == 0) {
#pragma unroll
        for (uint32_t r = 0; r < kMax; ++r)
            if (r < keep) nearest[i * keep + r] = uint16_t(min(best_i[r], 0xffffu));
    }
    __syncthreads();
    const auto near = [&](uint32_t p, uint32_t r) -> uint32_t { return nearest[p * keep + r]; };
    const auto y = [&](uint32_t p) { return xy[p].y; };
    for (uint32_t q = t; q < slots; q += kBlockThreads) {
        uint32_t b = 0;
        if (emits(l, near, y, track, q / keep, q % keep, b)) {
            atomicOr(&emitted[q / 32], 1u << (q % 32));
            atomicAdd(&owned[min(q / keep, b)], 1u);
        }
    }
    __syncthreads();
    uint32_t first = 0, sum = 0;
    Scan(scan).ExclusiveSum(owned[t], first, sum);
    owned[t] = first;
    if (t == 0) total = sum;
    __syncthreads();
    for (uint32_t q = t; q < slots; q += kBlockThreads)
        if (emitted[q / 32] >> (q % 32) & 1u) {
            const uint32_t a = q / keep, b = near(a, q % keep), lo = min(a, b);
            gathered[owned[lo] + atomicAdd(&cursor[lo], 1u)] = lo | max(a, b) << 16;
        }
    __syncthreads();
    for (uint32_t e = t; e < total; e += kBlockThreads) {
        const uint32_t link = gathered[e], lo = link & 0xffffu, hi = link >> 16, from = owned[lo];
        uint32_t at = from;
        for (uint32_t j = from; j < from + cursor[lo]; ++j) at += (gathered[j] >> 16) < hi;
        l.frame_links[at] = make_uint2(lo, hi);
        commit(l, track, at, make_uint2(lo, hi));
    }
    __syncthreads();
    if (t == 0) finish(l, total);
}

uint32_t blocks_of(size_t threads, uint32_t per_block) {
    return uint32_t(std::max<size_t>(1, (threads + per_block - 1) / per_block));
}

}  // namespace

size_t knn_scratch_bytes(uint32_t count, uint32_t keep) {
    const int items = int(std::max<size_t>(1, size_t(count) * keep));
    size_t scan = 0, sort = 0, select = 0;
    TVLM_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, scan, static_cast<uint32_t*>(nullptr),
                                                  static_cast<uint32_t*>(nullptr), int(count + 1)));
    TVLM_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, sort, static_cast<uint32_t*>(nullptr),
                                                    static_cast<uint32_t*>(nullptr), static_cast<uint32_t*>(nullptr),
                                                    static_cast<uint32_t*>(nullptr), items));
    TVLM_CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, select, static_cast<uint2*>(nullptr),
                                               static_cast<uint32_t*>(nullptr), static_cast<uint2*>(nullptr),
                                               static_cast<uint32_t*>(nullptr), items));
    return std::max({scan, sort, select});
}

void launch_knn_graph(const KnnLaunch& l, cudaStream_t stream) {
    const bool capped = l.max_degree != 0;
    if (!capped && l.count <= kBlockPoints && l.keep <= 8) {
        block_graph_kernel<<<1, kBlockThreads, 0, stream>>>(l);
        TVLM_CUDA_CHECK(cudaGetLastError());
        return;
    }
    TVLM_CUDA_CHECK(cudaMemsetAsync(l.zeroed, 0, l.zeroed_words * sizeof(uint32_t), stream));
    if (l.count) {
        static_assert(TVLM_KNN_MAX <= 32, "a warp's lanes hold a point's list");
        nearest_kernel<<<blocks_of(l.count, kNearestWarps), kNearestWarps * 32, 0, stream>>>(l);
    }
    if (l.keep) {
        const uint32_t slot_blocks = blocks_of(size_t(l.count) * l.keep, 128);
        link_kernel<false><<<std::max(slot_blocks, blocks_of(l.table_capacity, 128 * 8)), 128, 0, stream>>>(l);
        size_t bytes = l.scratch_bytes;
        if (l.count < kScanThreads * kScanItems) scan_kernel<<<1, kScanThreads, 0, stream>>>(l);
        else
            TVLM_CUDA_CHECK(
                cub::DeviceScan::ExclusiveSum(l.scratch, bytes, l.owned, l.offsets, int(l.count + 1), stream));
        link_kernel<true><<<slot_blocks, 128, 0, stream>>>(l);
        if (!capped) {
            commit_kernel<<<slot_blocks, 128, 0, stream>>>(l, false);
        } else {
            const int items = int(size_t(l.count) * l.keep);
            length_kernel<<<blocks_of(size_t(items), 256), 256, 0, stream>>>(l);
            bytes = l.scratch_bytes;
            TVLM_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(l.scratch, bytes, l.keys, l.keys_sorted, l.order,
                                                            l.order_sorted, items, 0, 32, stream));
            greedy_kernel<<<1, 1, 0, stream>>>(l);
            bytes = l.scratch_bytes;
            TVLM_CUDA_CHECK(cub::DeviceSelect::Flagged(l.scratch, bytes, l.frame_links, l.flags, l.capped,
                                                       &l.stats->edges, items, stream));
            commit_kernel<<<blocks_of(size_t(items), 256), 256, 0, stream>>>(l, true);
        }
    }
    if (!l.keep) finish_kernel<<<1, 1, 0, stream>>>(l);
    TVLM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace tvlm
