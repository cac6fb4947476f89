#!/usr/bin/env bash
# Every failure of `tvlm mips`, `tvlm sample` and `tvlm overlay` leaves the file system as it was, and a
# success replaces outputs whole (issue 14): each case snapshots the work folder (names,
# sizes, checksums), runs a failing command, checks the exit status, the message and the
# snapshot. Usage: cli_outputs_check.sh TVLM SOURCE_DIR WORK_DIR
set -uo pipefail
tvlm=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
failures=0
snapshot() { find . -type f -exec md5sum {} + | sort; find . | sort; }
fails() {  # expected message, command...: must exit non-zero, say it, and change nothing
  local want=$1; shift
  local before after out
  before=$(snapshot)
  out=$("$@" 2>&1); local rc=$?
  after=$(snapshot)
  if [ $rc -eq 0 ]; then echo "FAIL (exit 0): $*"; failures=$((failures + 1)); fi
  if ! grep -qE -- "$want" <<<"$out"; then echo "FAIL (message): $* said: $out"; failures=$((failures + 1)); fi
  if [ "$(grep -c 'error:' <<<"$out")" -ne 1 ] || tail -n 1 <<<"$out" | grep -qv 'error:'; then
    echo "FAIL (one error line, last): $*: $out"; failures=$((failures + 1)); fi
  if [ "$before" != "$after" ]; then echo "FAIL (files changed): $*"; diff <(echo "$before") <(echo "$after"); failures=$((failures + 1)); fi
}
# A first run's outputs, which every failure below must leave alone.
"$tvlm" sample --backend cpu >/dev/null 2>&1 || { echo "FAIL: tvlm sample"; exit 1; }
"$tvlm" mips --levels 5 --out levels >/dev/null 2>&1 || { echo "FAIL: tvlm mips"; exit 1; }
mkdir folder

fails "--out 'folder' exists and is not a regular file \(a folder\)" "$tvlm" sample --backend cpu --out folder
fails "--out is an empty path" "$tvlm" sample --backend cpu --out ""
fails "is not a regular file \(a device" "$tvlm" sample --backend cpu --out /dev/null
fails "--meta 'patches.npy' is also where another output goes" "$tvlm" sample --backend cpu --meta patches.npy
fails "--meta './meta.json' is also where another output goes" "$tvlm" sample --backend cpu --out meta.json --meta ./meta.json
fails "the folder of --viz 'nowhere/v.png' does not exist" "$tvlm" sample --backend cpu --viz nowhere/v.png
fails "is a directory, not an image" "$tvlm" sample --backend cpu folder
fails "is a directory, not an image" "$tvlm" mips folder --out levels
fails "--validation is a flag and takes no value" "$tvlm" mips --validation=1 --out levels
fails "no Vulkan device fits name containing 'NoSuchGPU'" "$tvlm" sample --device NoSuchGPU --out p2.npy
fails "premature end of data" "$tvlm" mips "$src/tests/fuzz/regressions/jpeg_16384x16384_header.jpg" --out levels
fails "20000x20000: sides must be 1..16384" "$tvlm" sample "$src/tests/fuzz/regressions/png_20000x20000_header.png"
fails "PNG and JPEG only" "$tvlm" mips "$src/tests/fuzz/regressions/gif_not_supported.gif" --out levels
fails "cannot open image '/no/such.png'" "$tvlm" mips /no/such.png --out levels
touch folder/mine.txt
fails "holds 'mine.txt', which tvlm did not write" "$tvlm" mips --out folder
fails "--out 'patches.npy' exists and is not a folder" "$tvlm" mips --out patches.npy

# tvlm overlay: a scene with KNN links drawn by Vulkan compute (validation on) and by the CPU
# reference; malformed scenes fail and change nothing.
cat > scene.json <<'JSON'
{"boxes": [{"x": 400, "y": 300, "width": 300, "height": 200, "radius": 16, "stroke": [255, 80, 80], "fill": [255, 80, 80, 60]}],
 "lines": [{"x0": 100, "y0": 900, "x1": 1400, "y1": 950, "width": 6, "round_caps": false}],
 "points": [{"x": 300, "y": 250, "track": 1}, {"x": 520, "y": 380, "track": 2}, {"x": 1050, "y": 500, "track": 3}]}
JSON
"$tvlm" overlay --scene scene.json --knn 1 --validation --out ov.png >overlay.log 2>&1 || { echo "FAIL: tvlm overlay"; cat overlay.log; failures=$((failures + 1)); }
grep -q "7 shapes drawn (1 boxes, 1 lines, 2 curves incl. 2 KNN links, 3 points) by Vulkan compute" overlay.log ||
  { echo "FAIL: tvlm overlay said: $(cat overlay.log)"; failures=$((failures + 1)); }
"$tvlm" overlay --scene scene.json --knn 1 --backend cpu --out ov_cpu.png >/dev/null 2>&1 || { echo "FAIL: tvlm overlay cpu"; failures=$((failures + 1)); }
python3 - <<'PY' || failures=$((failures + 1))
import struct
for name in ("ov.png", "ov_cpu.png"):
    data = open(name, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", data[16:24]) == (1536, 1024), name
PY
echo '{"boxes": [{"x": 1}]}' > missing.json
echo '{"boxes": [' > truncated.json
echo '{"boxs": []}' > unknown.json
echo '{"lines": [{"x0": 0, "y0": 0, "x1": 5, "y1": 5, "width": -2}]}' > negative.json
echo '{"points": [{"x": 1, "y": 2, "color": [1, 2]}]}' > colour.json
fails '"y" is missing' "$tvlm" overlay --scene missing.json --out ov.png
fails "is not valid JSON" "$tvlm" overlay --scene truncated.json --out ov.png
fails 'unknown key "boxs"' "$tvlm" overlay --scene unknown.json --out ov.png
fails "line 0 has a negative width" "$tvlm" overlay --scene negative.json --out ov.png
fails "points\[0\].color: expected \[r, g, b\]" "$tvlm" overlay --scene colour.json --out ov.png
fails "k >= 1" "$tvlm" overlay --scene scene.json --knn 0 --out ov.png
echo '{"labels": [{"x": 1, "y": 2}]}' > label.json
fails "labels\[0\].text: expected a string" "$tvlm" overlay --scene label.json --out ov.png
fails "cannot read the scene file" "$tvlm" overlay --scene /no/scene.json --out ov.png
fails "needs --scene" "$tvlm" overlay --out ov.png
# Numbers past a float's range, and inputs that are not regular files (a FIFO with no
# writer would block for ever, /dev/zero would grow without end): refused up front.
echo '{"boxes": [{"x": 1e999, "y": 0, "width": 1, "height": 1}]}' > huge.json
fails "huge.json holds a number out of range" "$tvlm" overlay --scene huge.json --out ov.png
echo '{"boxes": [{"x": 1e308, "y": 0, "width": 1, "height": 1}]}' > big.json
fails "boxes\[0\].x: expected a number of pixels within a float's range" "$tvlm" overlay --scene big.json --out ov.png
echo '{"boxes": [{"x": 3.41e38, "y": 0, "width": 1, "height": 1}]}' > past.json
fails "boxes\[0\].x: expected a number of pixels within a float's range" "$tvlm" overlay --scene past.json --out ov.png
echo '{"boxes": [{"x": 3.4e38, "y": 0, "width": 1, "height": 1}]}' > edge.json  # the largest float rounds to this
"$tvlm" overlay --scene edge.json --backend cpu --out ov_edge.png >/dev/null 2>&1 ||
  { echo "FAIL: a coordinate of 3.4e38 (within a float's range) was refused"; failures=$((failures + 1)); }
rm -f ov_edge.png
fails "the scene file /dev/zero is not a regular file" timeout 20 "$tvlm" overlay --scene /dev/zero --out ov.png
fails "the scene file folder is not a regular file" "$tvlm" overlay --scene folder --out ov.png
mkfifo fifo.png fifo.json
fails "'fifo.png' is not a regular file \(a FIFO" timeout 20 "$tvlm" mips fifo.png --out levels
fails "'fifo.png' is not a regular file \(a FIFO" timeout 20 "$tvlm" sample --backend cpu fifo.png
fails "the scene file fifo.json is not a regular file" timeout 20 "$tvlm" overlay --scene fifo.json --out ov.png
rm -f fifo.png fifo.json

# An interrupted run removes its temporaries and ends as the signal would: a mip chain of
# an 8192^2 image (seconds of work on lavapipe) interrupted once its staging folder exists.
python3 - <<'PY'
import struct, zlib
w = h = 8192
rows = b"".join(b"\x00" + bytes([(y * 7) % 256]) * (w * 3) for y in range(h))
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
open("big.png", "wb").write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                            + chunk(b"IDAT", zlib.compress(rows, 1)) + chunk(b"IEND", b""))
PY
# (SIGINT is handled alike, but a script's background job starts with it ignored, and an
# ignored signal stays ignored.)
for sig in TERM HUP; do
  "$tvlm" mips big.png --out interrupted >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 1 2000); do ls -a | grep -q '^\.interrupted\..*\.partial$' && break; sleep 0.01; done
  sleep 0.2
  kill -s $sig $pid
  wait $pid
  rc=$?
  want=$((128 + $(kill -l $sig)))
  [ $rc -eq $want ] || { echo "FAIL: tvlm mips interrupted by SIG$sig exited $rc, not $want"; failures=$((failures + 1)); }
  if ls -a | grep -q 'partial\|^interrupted$'; then
    echo "FAIL: SIG$sig left: $(ls -a | grep 'partial\|^interrupted$')"; failures=$((failures + 1)); rm -rf .*.partial interrupted
  fi
done
# A full disk: a file size limit makes writes fail as a full disk does (SIGXFSZ ignored, so
# write() returns the error). One error naming the user's path, nothing left behind, and the
# same command works once there is room.
full_disk() { (trap '' XFSZ; ulimit -f 16; "$@"); }
fails "cannot write PNG 'full_levels/level_00.png': .*\(disk full\?\)" full_disk "$tvlm" mips big.png --out full_levels
fails "writing 'full.npy' failed \(disk full\?\)" full_disk "$tvlm" sample --backend cpu --budget 4000 --out full.npy \
  --meta full.json
if "$tvlm" video --help >/dev/null 2>&1; then
  # 8 MiB a file: room for the embedded clip (written to a temporary file first), not for the
  # 40 MB of patches of its 48 frames.
  (trap '' XFSZ; ulimit -f 16384; "$tvlm" video --out full_video.npy) > video_full.log 2>&1 && {
    echo "FAIL: tvlm video on a full disk exited 0"; failures=$((failures + 1)); }
  grep -q "^tvlm video: error: writing 'full_video.npy' failed (disk full?)" video_full.log ||
    { echo "FAIL: tvlm video on a full disk said: $(tail -n 1 video_full.log)"; failures=$((failures + 1)); }
  ls -a | grep -q 'full_video' && { echo "FAIL: tvlm video on a full disk left $(ls -a | grep full_video)"; failures=$((failures + 1)); }
  rm -f video_full.log
fi
"$tvlm" mips --levels 3 --out full_levels >/dev/null 2>&1 || { echo "FAIL: tvlm mips after a full disk"; failures=$((failures + 1)); }
rm -rf full_levels
# Host memory: a job that would not fit what the process may take is refused at the image's
# header, before anything is decoded (8192^2 x 28 bytes for the CPU reference: 1.75 GiB).
fails "image 'big.png' \(8192x8192\) needs about 1.75 GiB of host memory and 0.50 GiB are available" \
  env TVLM_HOST_MEMORY_LIMIT=512M "$tvlm" sample big.png --backend cpu
fails "image 'big.png' \(8192x8192\) needs about 1.00 GiB of host memory and 0.50 GiB are available" \
  env TVLM_HOST_MEMORY_LIMIT=512M "$tvlm" mips big.png --out levels
fails "TVLM_HOST_MEMORY_LIMIT=8X: the suffix is K, M or G" env TVLM_HOST_MEMORY_LIMIT=8X "$tvlm" mips big.png --out levels
rm -f big.png
# Peak memory within what that check counts (docs/cli.md, "Memory"): a 2048^2 image's run
# peaks at most its pixels x the bytes per pixel above that of a 16^2 image's run. Not under
# AddressSanitizer (.ci/sanitize), whose shadow memory and quarantine multiply every peak.
if [ -n "${ASAN_OPTIONS:-}" ]; then
  echo "peak memory: not measured under AddressSanitizer"
else
python3 - "$tvlm" <<'PY' || failures=$((failures + 1))
import resource, struct, subprocess, sys, zlib
tvlm = sys.argv[1]
def png(path, side):
    rows = b"".join(b"\x00" + bytes([(y * 7 + x) % 256 for x in range(side * 3)]) for y in range(side))
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    open(path, "wb").write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0))
                           + chunk(b"IDAT", zlib.compress(rows, 1)) + chunk(b"IEND", b""))
def peak(args):  # the peak resident bytes of one tvlm run, measured by a fresh Python
    probe = "import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], capture_output=True); " \
            "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    rc, kib = subprocess.run([sys.executable, "-c", probe, tvlm] + args, capture_output=True, text=True).stdout.split()
    assert rc == "0", f"tvlm {' '.join(args)} failed"
    return int(kib) * 1024
png("small.png", 16)
png("mid.png", 2048)
bad = 0
for name, args, per_pixel in (("tvlm sample --backend cpu", ["sample", "--backend", "cpu", "--out", "m.npy"], 28),
                              ("tvlm mips", ["mips", "--out", "m_levels"], 16)):
    grown = peak(args[:1] + ["mid.png"] + args[1:]) - peak(args[:1] + ["small.png"] + args[1:])
    bound = per_pixel * 2048 * 2048
    print(f"{name}: 2048^2 peaks {grown / 2**20:.0f} MiB over a 16^2 run, at most {bound / 2**20:.0f} MiB")
    if grown > bound:
        print(f"FAIL: {name} took more memory than docs/cli.md says"); bad = 1
sys.exit(bad)
PY
fi
rm -rf small.png mid.png m.npy m_levels patches.npy.partial

# A 16-bit PNG keeps its bits in a float texture: the grid samples of level 0 are its values.
"$tvlm" sample "$src/tests/fuzz/corpus/png/grey16_fine.png" --format rgba32f --level 0 --patch 1 --backend cpu \
  --out fine.npy --meta fine.json >/dev/null 2>&1 || { echo "FAIL: 16-bit sample"; failures=$((failures + 1)); }
python3 - <<'PY' || failures=$((failures + 1))
import struct
data = open("fine.npy", "rb").read()
values = struct.unpack("<%df" % 3, data[-13 * 7 * 3 * 4:][4 * 3 * 3:4 * 3 * 4])  # patch (x=3, y=0): 3 channels
want = (3 * 4099) % 65536 / 65535
assert all(abs(v - want) < 1e-6 for v in values), f"16-bit value lost: {values} != {want}"
PY
# A shorter chain replaces the folder whole: no level of the first run is left behind.
"$tvlm" mips --levels 2 --out levels >/dev/null 2>&1 || { echo "FAIL: tvlm mips --levels 2"; failures=$((failures + 1)); }
got=$(ls -A levels | tr '\n' ' ')
[ "$got" = "level_00.png level_01.png sheet.png " ] || { echo "FAIL: levels holds $got"; failures=$((failures + 1)); }
leftovers=$(find . -name '*.partial*')
[ -z "$leftovers" ] || { echo "FAIL: temporaries left: $leftovers"; failures=$((failures + 1)); }
[ $failures -eq 0 ] && echo "cli outputs: every failure left the files as they were"
exit $((failures > 0))
