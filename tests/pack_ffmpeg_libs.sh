#!/usr/bin/env bash
# Packs the shared libraries that BINARY... load from FFmpeg's Debian packages (their whole
# closure, less glibc and the C++ runtime, which every machine has) into OUT.tar.xz, for a
# GPU machine without FFmpeg (../shared/gpu/README.md: no network there). tests/run_gpu_suites.sh
# unpacks it into /opt/ffl and puts that folder on LD_LIBRARY_PATH. About 50 MB.
set -euo pipefail
out=$1; shift
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for binary in "$@"; do
  ldd "$binary" | awk '$3 ~ /^\// {print $3}'
done | sort -u | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so*|libm.so*|libstdc++*|libgcc_s*|ld-linux*|libpthread*|libdl.so*|librt.so*) ;;
    *) cp -L "$lib" "$dir/" ;;
  esac
done
tar -cJf "$out" -C "$dir" .
echo "packed $(ls "$dir" | wc -l) libraries into $out ($(du -h "$out" | cut -f1))"
