#pragma once
// The blocks per multiprocessor a kernel asks ptxas to fit (__launch_bounds__'s second
// argument), held to what the architecture being compiled holds: a count tuned on sm_90
// (2048 threads an SM) is out of range on sm_86 and sm_89 (1536) and sm_75 (1024), where
// ptxas refuses the kernel. The release wheel compiles every kernel for all of them.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 750
#define TVLM_SM_THREADS 1024
#elif defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 870 || __CUDA_ARCH__ == 890)
#define TVLM_SM_THREADS 1536
#else
#define TVLM_SM_THREADS 2048
#endif
#define TVLM_MIN_BLOCKS(threads, blocks) \
    ((blocks) * (threads) > TVLM_SM_THREADS ? TVLM_SM_THREADS / (threads) : (blocks))
