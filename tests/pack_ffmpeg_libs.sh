#!/usr/bin/env bash
# Packs the shared libraries that BINARY... load from FFmpeg's Debian packages (their whole
# closure, less glibc and the C++ runtime, which every machine has) into OUT.tar.xz, for a
# GPU machine without FFmpeg (../shared/gpu/README.md: no network there). tests/run_gpu_suites.sh
# unpacks it into /opt/ffl and puts that folder on LD_LIBRARY_PATH. About 50 MB.
set -euo pipefail
out=$1; shift
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# FFmpeg's own libraries are loaded at run time (dlopen, engine/video_files/ffmpeg_library.h),
# so ldd of the binaries does not list them: they are found where pkg-config finds the ones the
# build compiled against, and packed with their own dependencies.
ffmpeg=$(pkg-config --variable=libdir libavformat)
ffmpeg_libs=$(for name in libavformat libavcodec libswscale libavutil; do
  ls "$ffmpeg/$name".so.* | grep -E '\.so\.[0-9]+$'  # by soname, the name dlopen asks for
done)
for binary in "$@" $ffmpeg_libs; do
  echo "$binary" | grep -q '\.so' && echo "$binary"
  ldd "$binary" | awk '$3 ~ /^\// {print $3}'
done | sort -u | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so*|libm.so*|libstdc++*|libgcc_s*|ld-linux*|libpthread*|libdl.so*|librt.so*) ;;
    *) cp -L "$lib" "$dir/" ;;
  esac
done
tar -cJf "$out" -C "$dir" .
echo "packed $(ls "$dir" | wc -l) libraries into $out ($(du -h "$out" | cut -f1))"
