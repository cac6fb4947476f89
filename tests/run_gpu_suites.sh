#!/usr/bin/env bash
# Runs every GPU suite and the benchmarks on a bare NVIDIA machine (../shared/gpu/README.md).
# Binaries come from $1 (default .device: tvlm and the test programs, built elsewhere with
# -DCMAKE_CUDA_ARCHITECTURES=90); loader and validation-layer .debs from .gl; logs and JSON
# go to $OUT. The summary (one line per suite, then the benchmark table) is printed last,
# then a verdict: "GPU suites: PASS", or "GPU suites: FAIL" with each failed suite (a failed
# case, a sanitizer report, objects leaked at exit, a non-zero exit or a timeout) and exit
# status 1. Split runs: PYTHON_ONLY=1 (the Python package and its benchmarks), SKIP_BENCH=1,
# SANITIZERS_ONLY=1 (TOOLS picks some; TOOLS=none runs the suites without them).
set -u
bin=${1:-.device}
out=${OUT:-gpu_out}
mkdir -p "$out"
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
# FFmpeg's libraries for the video binaries, where packed beside them (tests/pack_ffmpeg_libs.sh).
if [ -f "$bin/ffl.tar.xz" ]; then
  mkdir -p /opt/ffl && tar -xJf "$bin/ffl.tar.xz" -C /opt/ffl
  export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/opt/ffl
fi
if [ ! -e /usr/share/vulkan/icd.d/nvidia_icd.json ] && [ -e /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ]; then
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$out/gpu.txt" 2>&1
summary=()
failed=()
suite() {  # name, command...: runs it, keeps the log, records its verdict and summary line
  local name=$1; shift
  local start=$SECONDS
  timeout "${SUITE_TIMEOUT:-240}" "$@" 2>&1 | head -c 4000000 > "$out/$name.log"
  local rc=${PIPESTATUS[0]}
  local line why=""
  line=$(grep -E '^\[doctest\] (test cases|assertions)|tests passed|ERROR SUMMARY|RACECHECK SUMMARY|SKIPPED|^=+ .*(passed|failed)|Successfully installed' "$out/$name.log" | tr '\n' ' ')
  # A failure is any of: a non-zero exit (124: it ran past its time), a failed case, a
  # sanitizer report. A suite that reads like a pass but reported something is a failure.
  [ "$rc" -eq 124 ] && why="timed out after ${SUITE_TIMEOUT:-240} s"
  [ -z "$why" ] && [ "$rc" -ne 0 ] && why="exit $rc"
  grep -qE '^\[doctest\] test cases:.*\| *[1-9][0-9]* failed' "$out/$name.log" && why="${why:+$why, }failed cases"
  grep -qE '(ERROR|RACECHECK) SUMMARY: [1-9]' "$out/$name.log" && why="${why:+$why, }sanitizer reports"
  grep -qE '^=+ .*[0-9]+ failed' "$out/$name.log" && why="${why:+$why, }failed tests"
  # nanobind names engine objects still alive when the extension is torn down: a leak.
  grep -q 'nanobind: leaked' "$out/$name.log" && why="${why:+$why, }objects leaked at exit"
  if [ -n "$why" ]; then
    failed+=("$name ($why)")
    summary+=("FAIL $name: $why, $((SECONDS - start)) s; $line")
  else
    summary+=("PASS $name: $((SECONDS - start)) s; $line")
  fi
}
finish() {  # the summary, then the verdict: exit 1 if anything failed
  printf '%s\n' "${summary[@]}"
  if [ ${#failed[@]} -gt 0 ]; then
    echo "GPU suites: FAIL (${#failed[@]}): ${failed[*]}"
    exit 1
  fi
  echo "GPU suites: PASS (${#summary[@]} runs)"
  exit 0
}
# The Python package: a wheel built on a machine like this one ($bin/wheel/*.whl, e.g. by an
# earlier run: it is copied to $OUT) is installed as it is; otherwise it is built here for this
# machine's Python from the checkout, with the build dependencies the machine lacks unpacked
# from .deps (python/fetch_build_deps.sh; the README's recipe). PYTHON_ONLY=1 runs this part
# and the benchmarks it compares with, nothing else.
python_ready=""
rm -rf /tmp/tvlm_site
if ls "$bin"/wheel/*.whl >/dev/null 2>&1; then
  suite python_install python3 -m pip install --no-deps --target /tmp/tvlm_site "$bin"/wheel/*.whl
elif [ -d .deps ]; then
  eval "$(bash python/fetch_build_deps.sh --unpack)"
  rm -f "$out"/texturevlm-*.whl
  SUITE_TIMEOUT=420 suite python_build python3 -m pip wheel --no-build-isolation --no-deps -w "$out" . \
    -Ccmake.define.CMAKE_CUDA_ARCHITECTURES=90
  suite python_install python3 -m pip install --no-deps --target /tmp/tvlm_site "$out"/texturevlm-*.whl
fi
[ -d /tmp/tvlm_site/texturevlm ] && python_ready=1
if [ -n "$python_ready" ]; then
  export PYTHONPATH=/tmp/tvlm_site${PYTHONPATH:+:$PYTHONPATH}
  # Optional dependencies carried as wheels ($bin/wheels: nvImageCodec and nvJPEG for the GPU
  # JPEG decode), installed beside the package.
  if ls "$bin"/wheels/*.whl >/dev/null 2>&1; then
    suite optional_wheels python3 -m pip install --no-deps --target /tmp/tvlm_site "$bin"/wheels/*.whl
  fi
  # NVIDIA CV-CUDA, the processors benchmark's baseline, packed for this GPU (tests/pack_cvcuda.py).
  [ -f "$bin/cvcuda.tar.xz" ] && suite cvcuda_unpack tar -xJf "$bin/cvcuda.tar.xz" -C /tmp/tvlm_site
fi
if [ -n "$python_ready" ] && [ -z "${SANITIZERS_ONLY:-}" ]; then
  TVLM_VALIDATION=1 SUITE_TIMEOUT=420 suite pytest python3 -X faulthandler -m pytest tests/python -q -ra -p no:cacheprovider
  if [ -z "${SKIP_BENCH:-}" ]; then
    engine_rows=()  # the C++ engine's rows beside Python's, where tvlm is here to time them
    if [ -x "$bin/tvlm" ]; then
      SUITE_TIMEOUT=300 suite bench_video "$bin/tvlm" bench video --json "$out/bench_video.json"
      [ -e "$out/bench_video.json" ] && engine_rows=(--tvlm-json "$out/bench_video.json")
    fi
    SUITE_TIMEOUT=300 suite python_bench python3 -m texturevlm.bench --profile --json "$out/python_bench.json" \
      "${engine_rows[@]}"
    SUITE_TIMEOUT=300 suite processors_bench python3 -m texturevlm.bench processors --json "$out/processors_bench.json"
    SUITE_TIMEOUT=300 suite photos_bench python3 -m texturevlm.bench photos --json "$out/photos_bench.json"
    SUITE_TIMEOUT=300 suite host_bench python3 -m texturevlm.bench host --json "$out/host_bench.json"
    SUITE_TIMEOUT=300 suite encoded_bench python3 -m texturevlm.bench encoded --json "$out/encoded_bench.json"
    SUITE_TIMEOUT=300 suite grad_bench python3 -m texturevlm.bench grad --json "$out/grad_bench.json"
    SUITE_TIMEOUT=300 suite fields_bench python3 -m texturevlm.bench fields --json "$out/fields_bench.json"
  fi
  if [ -n "${PYTHON_ONLY:-}" ]; then
    grep -E "^(FAILED|ERROR)|passed|failed" "$out/pytest.log" | tail -n 30
    for log in python_bench processors_bench photos_bench host_bench encoded_bench grad_bench fields_bench; do
      [ -e "$out/$log.log" ] && cat "$out/$log.log"
    done
    finish
  fi
fi
export TVLM_VALIDATION=1
# One device call may be too short for everything: SANITIZERS_ONLY=1 runs only the sanitizer
# tools (TOOLS, default all four) and the canary.
if [ -z "${SANITIZERS_ONLY:-}" ]; then
# tvlm loads FFmpeg at run time (its video commands need the packed libraries; the rest run
# without them): where it is not beside the test programs, its suites are left out and named so.
if [ -x "$bin/tvlm" ]; then suite info "$bin/tvlm" info; else summary+=("LEFT OUT tvlm suites: no $bin/tvlm"); fi
suite test_cuda "$bin/test_cuda"
suite test_vulkan "$bin/test_vulkan"
suite test_vulkan_leaks "$bin/test_vulkan_leaks"
[ -x "$bin/test_cuda_video" ] && suite test_cuda_video "$bin/test_cuda_video"
[ -x "$bin/test_gl" ] && suite test_gl "$bin/test_gl"
if [ -x "$bin/tvlm" ]; then
  suite mips_chart "$bin/tvlm" mips --out "$out/mips"
  suite sample_chart "$bin/tvlm" sample --out "$out/patches.npy" --meta "$out/meta.json" --viz "$out/viz.png"
fi
# The embedding example: a renderer's frames through Vulkan compute and CUDA (zero-copy and copied).
[ -x "$bin/host_renderer" ] && suite host_renderer "$bin/host_renderer" --frames 2 --out "$out/host_renderer"
fi
if command -v compute-sanitizer >/dev/null || [ -x /usr/local/cuda/bin/compute-sanitizer ]; then
  sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  # Each tool over the suite less its soak and size cases, named "[soak]" (they repeat what
  # the rest covers, thousands of times). racecheck and initcheck run several times slower
  # than memcheck and synccheck: each tool has a time of its own (SANITIZER_TIMEOUT).
  # TOOLS=none runs the suites without them (a split run whose sanitizers ran in another call).
  [ "${TOOLS:-}" = none ] && summary+=("LEFT OUT compute-sanitizer tools: TOOLS=none")
  for tool in ${TOOLS:-memcheck racecheck synccheck initcheck}; do
    [ "$tool" = none ] && continue
    case $tool in racecheck|initcheck) limit=${SANITIZER_TIMEOUT:-600} ;; *) limit=${SANITIZER_TIMEOUT:-300} ;; esac
    SUITE_TIMEOUT=$limit suite "$tool" "$sanitizer" --tool "$tool" --error-exitcode 9 "$bin/test_cuda" \
          --test-case-exclude='*[soak]*'
    # The processors' kernels, through the Python package where it was built (above). Host
    # backtraces off: collecting them keeps the Python frame of every CUDA call alive until
    # the process ends (with its locals: every resizer and target the script made), which
    # nanobind then reports as leaked; device backtraces still come with any error.
    if [ -n "$python_ready" ] && python3 -c "import texturevlm, torch" 2>/dev/null; then
      PYTORCH_NO_CUDA_MEMORY_CACHING=1 SUITE_TIMEOUT=$limit suite "${tool}_processors" "$sanitizer" --tool "$tool" \
        --show-backtrace device --error-exitcode 9 python3 tests/sanitizer/processor_kernels.py
    fi
  done
  # The canary: a planted uninitialised read (tests/test_cuda_sanitizer_canary.cpp) that
  # initcheck must report, so a tool that stopped reporting cannot pass for a clean run.
  timeout 120 "$sanitizer" --tool initcheck --error-exitcode 9 "$bin/test_cuda" --no-skip \
    --test-case='sanitizer canary*' > "$out/canary.log" 2>&1
  canary=$?
  if [ "$canary" -eq 9 ] && grep -qE 'ERROR SUMMARY: [1-9]' "$out/canary.log"; then
    summary+=("PASS canary: initcheck reported the planted uninitialised read")
  else
    failed+=("canary (initcheck did not report the planted uninitialised read: exit $canary)")
    summary+=("FAIL canary: initcheck did not report the planted uninitialised read (exit $canary)")
  fi
else
  failed+=("compute-sanitizer (not found on this machine)")
  summary+=("FAIL compute-sanitizer: not found on this machine")
fi
unset TVLM_VALIDATION
if [ -z "${SKIP_BENCH:-}" ] && [ -z "${SANITIZERS_ONLY:-}" ]; then  # SKIP_BENCH=1: the suites only (kernels unchanged since the last full run)
  SUITE_TIMEOUT=420 suite bench "$bin/tvlm" bench --json "$out/bench.json" --plot "$out/bench.png"
  [ -x "$bin/host_renderer" ] && suite host_renderer_bench "$bin/host_renderer" --frames 1 --size 1024 --bench 1000 \
    --out "$out/host_renderer_bench"
  # The PyTorch way of the same jobs, with the ratios against tvlm's rows (python3 with torch).
  SUITE_TIMEOUT=300 suite torch python3 python/texturevlm/bench/torch_baseline.py --image "$out/mips/level_00.png" --meta "$out/meta.json" \
    --patches "$out/patches.npy" --tvlm-json "$out/bench.json"
fi
cat "$out/gpu.txt"
grep -A3 "Vulkan -> CUDA" "$out/info.log" 2>/dev/null | head -4
grep -A3 "^backend\|layout:" "$out/sample_chart.log" 2>/dev/null | head -4
grep -h "filters like" "$out/test_gl.log" 2>/dev/null
grep -A200 "^tvlm bench on" "$out/bench.log" 2>/dev/null
[ -e "$out/host_renderer_bench.log" ] && grep -A8 "^per frame" "$out/host_renderer_bench.log"
grep -B3 -A80 "^PyTorch" "$out/torch.log" 2>/dev/null
for log in "$out"/test_*.log "$out"/memcheck.log; do  # the first distinct failures of each suite
  [ -e "$log" ] && grep -E 'ERROR|TEST CASE|texels differ|values differ|:=' "$log" | awk '!seen[$0]++' | head -25 | cut -c1-300
done
finish
