#include "cuda_pipelines/cuda_image_resizer.h"

#include <algorithm>
#include <bit>
#include <string>

#include "cuda_pipelines/cuda_tensor_mips.h"
#include "cuda/pooled_buffer.h"
#include "cuda/stream_capture.h"
#include "engine/error.h"
#include "engine/textures/texture_desc.h"

namespace tvlm {

namespace {

// The most scratch the software filters' row pass keeps (images beyond it run in turn).
constexpr size_t kMaxSoftwareScratch = size_t{256} << 20;

// The images [first, first + count) of a launch as a list.
ImageList list_of(std::span<const void* const> images, size_t first, size_t count) {
    ImageList list;
    for (size_t i = 0; i < count; ++i) list.images[i] = images[first + i];
    list.count = static_cast<uint32_t>(count);
    return list;
}

// `view` moved on by `images` images of its batch.
TensorView advanced(TensorView view, size_t images) {
    view.data = static_cast<unsigned char*>(view.data) +
                static_cast<int64_t>(images * element_bytes(view.dtype)) * view.stride_b;
    return view;
}

}  // namespace

CudaImageResizer::CudaImageResizer(const ResizerShape& shape) : shape_(shape) {
    TVLM_CUDA_CHECK(cudaGetDevice(&device_));
    const ResizerShape& s = shape_;
    const bool any_size = s.filter != ResizeFilter::texture && s.width == 0 && s.height == 0;
    if ((!any_size && (s.width == 0 || s.height == 0)) || s.images == 0)
        throw Error(
            "a resizer needs images of a positive size (or, bicubic and bilinear, 0 x 0 for any size) and a "
            "positive count");
    if (s.channels != 3 && s.channels != 4) throw Error("a resizer takes images of 3 or 4 channels");
    if (s.filter != ResizeFilter::texture) return;
    const uint32_t chain = std::bit_width(std::max(s.width, s.height));
    if (s.texture_levels == 0 || s.skipped_levels + s.texture_levels > chain)
        throw Error("levels " + std::to_string(s.skipped_levels) + " + " + std::to_string(s.texture_levels) +
                    " exceed the " + std::to_string(chain) + " of a " + std::to_string(s.width) + "x" +
                    std::to_string(s.height) + " image");
    if (s.skipped_levels && s.dtype == TensorDtype::bf16)
        throw Error("bfloat16 images have no box format of their own: skip no levels");
    const Extent2D base = level_extent(s.width, s.height, s.skipped_levels);
    texture_.emplace(
        TextureDesc{base.width, base.height, s.images, s.texture_levels, dtype_texture_format(s.dtype), false});
    const uint32_t levels = s.skipped_levels + s.texture_levels;
    // With levels skipped, the tensor chain writes the texture's levels in its own launch;
    // otherwise level 0 is copied in (write_texels) and the texture builds its mips.
    chain_fills_texture_ = s.skipped_levels > 0;
    if (!chain_fills_texture_) {
        // A two-level chain (a mild shrink, Qwen2-VL's usual case) gets level 1 from the
        // level-0 copy's own loads, saving the texture's mip pass.
        TensorView bytes;
        bytes.channels = s.channels;
        writes_level_1_ = s.texture_levels == 2 &&
                          writes_with_next_level(bytes, SurfaceTexel::uchar4, {0, 0, s.width, s.height, 0, 1}) &&
                          s.dtype == TensorDtype::u8;
        return;
    }
    // Tensors only for the levels a later pass reads; the rest go to the texture or nowhere.
    const std::vector<uint32_t> read = tensor_mips_pass_sources(s.width, s.height, levels);
    std::vector<size_t> offsets(levels, SIZE_MAX);
    size_t bytes = 0;
    for (uint32_t l : read) {
        const Extent2D e = level_extent(s.width, s.height, l);
        offsets[l] = bytes;
        bytes += size_t{s.images} * s.channels * e.width * e.height * element_bytes(s.dtype);
        bytes = (bytes + 255) / 256 * 256;  // each level aligned like an allocation
    }
    if (bytes) scratch_ = DeviceBuffer<unsigned char>(bytes);
    surfaces_.assign(levels, 0);
    for (uint32_t l = 0; l < s.texture_levels; ++l) surfaces_[s.skipped_levels + l] = texture_->level_surface(l);
    for (uint32_t l = 1; l < levels; ++l) {
        const Extent2D e = level_extent(s.width, s.height, l);
        TensorView v;
        v.dtype = s.dtype;
        v.channels = s.channels;
        v.stride_x = 1;
        v.stride_y = e.width;
        v.stride_c = int64_t{e.width} * e.height;
        v.stride_b = v.stride_c * s.channels;
        v.data = offsets[l] == SIZE_MAX ? nullptr : scratch_.data() + offsets[l];
        levels_.push_back(v);
    }
}

void CudaImageResizer::check(const TensorView& view, Extent2D size, std::span<const void* const> images,
                             const ResizeTarget& target) const {
    check_resize_target(target);
    if (images.size() != target.images || images.size() > shape_.images)
        throw Error("a resizer run of " + std::to_string(images.size()) + " images for a target of " +
                    std::to_string(target.images) + " (the resizer takes at most " + std::to_string(shape_.images) +
                    ")");
    if (target.first_layer != 0) throw Error("a resizer run writes from its first image: first_layer 0");
    if (std::find(images.begin(), images.end(), nullptr) != images.end())
        throw Error("an image has no data (a null pointer)");
    if (view.dtype != shape_.dtype || view.channels != shape_.channels)
        throw Error("the images' dtype or channels are not the resizer's");
    if (any_size() ? size.width == 0 || size.height == 0 : size != Extent2D{shape_.width, shape_.height})
        throw Error("images of " + std::to_string(size.width) + "x" + std::to_string(size.height) +
                    " for a resizer of " +
                    (any_size() ? std::string("any positive size")
                                : std::to_string(shape_.width) + "x" + std::to_string(shape_.height)));
}

void CudaImageResizer::run(const TensorView& view, Extent2D size, std::span<const void* const> images,
                           const ResizeTarget& target, cudaStream_t stream, Replay replay) const {
    check(view, size, images, target);
    launch(view, size, images, target, stream, replay);
}

void CudaImageResizer::launch(const TensorView& view, Extent2D size, std::span<const void* const> images,
                              const ResizeTarget& target, cudaStream_t stream, Replay replay) const {
    order_after_last_run(stream);
    // The key is built only for runs that may be replayed: a direct run has no use for it.
    const bool keyed = replay == Replay::repeated;
    ReplayedLaunches::Key key = keyed ? call_key(view, size, images, target) : ReplayedLaunches::Key{};
    const auto launched = [&](const auto& launches) {
        if (keyed) replayed_->run(key, stream, launches);
        else launches(stream);
    };
    if (shape_.filter == ResizeFilter::texture) {
        launched([&](cudaStream_t s) {
            fill_texture(view, images, s);
            texture_->resize(target, s);
        });
        mark_done(stream);
        return;
    }
    const size_t out_size = element_bytes(target.out_dtype);
    const SoftwareFilter software_filter = shape_.filter == ResizeFilter::bilinear ? SoftwareFilter::bilinear
                                                                                   : SoftwareFilter::bicubic;
    // Per image, as the whole target's kernels need them (which kernel takes a resize may depend
    // on the batch; a chunk of fewer images needs no more rows per image).
    const size_t per_image = software_rows_bytes(size.width, size.height, target, software_filter, shape_.dtype) /
                             target.images;
    const size_t chunk = std::clamp<size_t>(kMaxSoftwareScratch / std::max<size_t>(per_image, 1), 1, kMaxListedImages);
    const size_t wanted = (std::min(chunk, images.size()) * per_image + sizeof(float) - 1) / sizeof(float) *
                          sizeof(float);
    // Grown once per larger target; the old buffer is freed behind the runs using it (they
    // are queued on this stream, or ordered before it: order_after_last_run).
    if (software_rows_.bytes() < wanted) regrow(software_rows_, wanted, stream);
    // The spans and weights depend on the source size and window alone: a run of a recent
    // run's (a processor's usual call) reuses those already computed. A replayed run that
    // reuses them is keyed by their buffer and rewrite: rewritten tables make a new one.
    const std::array<uint32_t, 8> window{size.width,
                                         size.height,
                                         target.resized_width,
                                         target.resized_height,
                                         uint32_t(target.crop_x),
                                         uint32_t(target.crop_y),
                                         target.width,
                                         target.height};
    bool tables_written = false;
    SpanTables& tables = tables_for(window, software_tables_bytes(size.width, size.height, target, software_filter),
                                    tables_written, stream);
    if (keyed)
        key.insert(key.end(),
                   {reinterpret_cast<uint64_t>(software_rows_.data()), reinterpret_cast<uint64_t>(tables.buffer.data()),
                    tables_written, tables_written ? tables.generation : 0});
    launched([&](cudaStream_t s) {
        for (size_t first = 0; first < images.size(); first += chunk) {
            const size_t count = std::min(chunk, images.size() - first);
            ResizeTarget part = target;
            part.images = static_cast<uint32_t>(count);
            part.out = static_cast<unsigned char*>(target.out) + first * target.image_stride * out_size;
            const SoftwareScratch scratch{static_cast<unsigned char*>(tables.buffer.data()),
                                          tables_written || first > 0, static_cast<float*>(software_rows_.data()),
                                          software_rows_.bytes()};
            resize_software(view, size.width, size.height, part, software_filter, scratch, s,
                            list_of(images, first, count));
        }
    });
    if (!tables_written) {
        tables.window = window;
        tables.generation = ++tables_written_;
    }
    mark_done(stream);
}

void CudaImageResizer::regrow(PooledBuffer& buffer, size_t bytes, cudaStream_t stream) const {
    if (stream_capturing(stream)) {
        // The old buffer was last read by runs before the capture (a captured run reads the
        // new one): it is freed on the release stream, behind them.
        if (ran_) TVLM_CUDA_CHECK(cudaStreamWaitEvent(release_stream(device_), done_.get(), 0));
    } else {
        buffer.release(stream);  // behind the runs that read it: queued on this stream or before it
    }
    buffer = PooledBuffer(bytes, stream);
}

void CudaImageResizer::mark_done(cudaStream_t stream) const {
    // A run inside a capture is launched by its graph, later: the graph's owner keeps the
    // resizer alive while it may launch.
    if (stream_capturing(stream)) return;
    TVLM_CUDA_CHECK(cudaEventRecord(done_.get(), stream));
    ran_ = true;
}

CudaImageResizer::~CudaImageResizer() {
    // The buffers are freed on the release stream: behind this resizer's last run.
    if (ran_ && done_.get()) (void)cudaStreamWaitEvent(release_stream(device_), done_.get(), 0);
}

CudaImageResizer::SpanTables& CudaImageResizer::tables_for(const std::array<uint32_t, 8>& window, size_t bytes,
                                                           bool& written, cudaStream_t stream) const {
    ++runs_;
    for (SpanTables& t : tables_)
        if (t.generation && t.window == window) {
            t.used = runs_;
            written = true;
            return t;
        }
    SpanTables& t = *std::min_element(tables_.begin(), tables_.end(),
                                      [](const SpanTables& a, const SpanTables& b) { return a.used < b.used; });
    if (t.buffer.bytes() < bytes) regrow(t.buffer, bytes, stream);
    t.generation = 0;  // until this run has written them (run() sets it)
    t.used = runs_;
    written = false;
    return t;
}

ReplayedLaunches::Key CudaImageResizer::call_key(const TensorView& view, Extent2D size,
                                                 std::span<const void* const> images, const ResizeTarget& t) {
    const auto bits = [](float v) { return uint64_t{std::bit_cast<uint32_t>(v)}; };
    ReplayedLaunches::Key key{2,
                              size.width,
                              size.height,
                              uint64_t(view.dtype),
                              uint64_t(view.stride_b),
                              uint64_t(view.stride_c),
                              uint64_t(view.stride_y),
                              uint64_t(view.stride_x),
                              view.channels,
                              images.size()};
    for (const void* image : images) key.push_back(reinterpret_cast<uint64_t>(image));
    key.insert(key.end(), {t.images,
                           t.first_layer,
                           t.resized_width,
                           t.resized_height,
                           uint64_t(uint32_t(t.crop_x)),
                           uint64_t(uint32_t(t.crop_y)),
                           t.width,
                           t.height,
                           uint64_t(t.layout),
                           t.patch_size,
                           t.merge_size,
                           t.temporal_patch_size,
                           t.first_time,
                           t.times,
                           t.tile_width,
                           t.tile_height,
                           t.image_stride,
                           bits(t.multiply),
                           bits(t.subtract[0]),
                           bits(t.subtract[1]),
                           bits(t.subtract[2]),
                           bits(t.divide[0]),
                           bits(t.divide[1]),
                           bits(t.divide[2]),
                           t.round_to_byte,
                           uint64_t(t.out_dtype),
                           reinterpret_cast<uint64_t>(t.out)});
    return key;
}

void CudaImageResizer::order_after_last_run(cudaStream_t stream) const {
    if (last_stream_ && *last_stream_ != stream && !stream_capturing(*last_stream_) && !stream_capturing(stream)) {
        TVLM_CUDA_CHECK(cudaEventRecord(handoff_.get(), *last_stream_));
        TVLM_CUDA_CHECK(cudaStreamWaitEvent(stream, handoff_.get(), 0));
    }
    last_stream_ = stream;
}

void CudaImageResizer::fill_texture(const TensorView& view, std::span<const void* const> images,
                                    cudaStream_t stream) const {
    const ResizerShape& s = shape_;
    for (size_t first = 0; first < images.size(); first += kMaxListedImages) {
        const size_t count = std::min<size_t>(kMaxListedImages, images.size() - first);
        const ImageList list = list_of(images, first, count);
        if (!chain_fills_texture_) {
            const TexelBlock block{0, 0, s.width, s.height, static_cast<uint32_t>(first), static_cast<uint32_t>(count)};
            if (writes_level_1_) {
                write_texels_and_next_level(view, texture_->level_surface(0), texture_->level_surface(1), s.images > 1,
                                            SurfaceTexel::uchar4, block, stream, list);
                continue;
            }
            texture_->write(view, {block.x, block.y, block.width, block.height, block.first_layer, block.layers},
                            stream, list);
            continue;
        }
        std::vector<TensorView> levels;
        for (const TensorView& level : levels_) levels.push_back(level.data ? advanced(level, first) : level);
        generate_tensor_mips(view, s.width, s.height, static_cast<uint32_t>(count), levels, stream, list,
                             {surfaces_, static_cast<uint32_t>(first), s.images > 1});
    }
    if (!chain_fills_texture_ && s.texture_levels > 1 && !writes_level_1_) texture_->generate_mips(stream);
}

}  // namespace tvlm
