#!/usr/bin/env bash
# Runs every GPU suite and the benchmarks on a bare NVIDIA machine (../shared/gpu/README.md).
# Binaries come from $1 (default .device: tvlm and the test programs, built elsewhere with
# -DCMAKE_CUDA_ARCHITECTURES=90); loader and validation-layer .debs from .gl; logs and JSON
# go to $OUT. The summary (one line per suite, then the benchmark table) is printed last.
set -u
bin=${1:-.device}
out=${OUT:-gpu_out}
mkdir -p "$out"
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
if [ ! -e /usr/share/vulkan/icd.d/nvidia_icd.json ] && [ -e /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ]; then
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$out/gpu.txt" 2>&1
summary=()
suite() {  # name, command...: runs it, keeps the log, records its last summary line
  local name=$1; shift
  local start=$SECONDS
  timeout 240 "$@" 2>&1 | head -c 4000000 > "$out/$name.log"
  local rc=${PIPESTATUS[0]}
  local line
  line=$(grep -E '^\[doctest\] (test cases|assertions)|tests passed|ERROR SUMMARY|SKIPPED' "$out/$name.log" | tr '\n' ' ')
  summary+=("$name: exit $rc in $((SECONDS - start)) s; $line")
}
export TVLM_VALIDATION=1
suite info "$bin/tvlm" info
suite test_cuda "$bin/test_cuda"
suite test_vulkan "$bin/test_vulkan"
suite test_vulkan_leaks "$bin/test_vulkan_leaks"
[ -x "$bin/test_gl" ] && suite test_gl "$bin/test_gl"
suite mips_chart "$bin/tvlm" mips --out "$out/mips"
suite sample_chart "$bin/tvlm" sample --out "$out/patches.npy" --meta "$out/meta.json" --viz "$out/viz.png"
if command -v compute-sanitizer >/dev/null || [ -x /usr/local/cuda/bin/compute-sanitizer ]; then
  sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  suite memcheck "$sanitizer" --tool memcheck --error-exitcode 9 "$bin/test_cuda" \
        --test-case-exclude='*5000 times*,*2000 frames*,*2000 times*,*8192*'
else
  summary+=("memcheck: compute-sanitizer not found on this machine")
fi
unset TVLM_VALIDATION
suite bench_interop "$bin/tvlm" bench interop --json "$out/bench_interop.json"
suite bench_sample "$bin/tvlm" bench sample --json "$out/bench_sample.json" --plot "$out/bench_sample.png"
suite bench_mips "$bin/tvlm" bench mips --json "$out/bench_mips.json" --plot "$out/bench_mips.png"
cat "$out/gpu.txt"
grep -A3 "Vulkan -> CUDA" "$out/info.log" | head -4
grep -B2 -A12 "^tvlm bench interop" "$out/bench_interop.log"
grep -A3 "^backend\|layout:" "$out/sample_chart.log" | head -4
grep -A20 "^tvlm bench sample" "$out/bench_sample.log"
grep -A20 "^tvlm bench mips" "$out/bench_mips.log"
for log in "$out"/test_*.log "$out"/memcheck.log; do  # the first distinct failures of each suite
  [ -e "$log" ] && grep -E 'ERROR|TEST CASE|texels differ|values differ|:=' "$log" | awk '!seen[$0]++' | head -25 | cut -c1-300
done
printf '%s\n' "${summary[@]}"
