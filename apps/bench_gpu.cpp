#include "bench_gpu.h"

#include "cuda_check.h"

namespace tvlm {

namespace {
ContextDesc bench_context(const Args& args) {
    ContextDesc desc;
    desc.device = DeviceSelector::parse(args.option_or("device", ""));
    return desc;
}
}  // namespace

BenchGpu::BenchGpu(const Args& args) : context(bench_context(args)), link(context) {
    TVLM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    TVLM_CUDA_CHECK(cudaGetDeviceProperties(&prop, link.cuda_device()));
}

BenchGpu::~BenchGpu() { cudaStreamDestroy(stream); }

}  // namespace tvlm
