#pragma once
// Whether video can run here: FFmpeg's libraries are loaded at run time (ffmpeg_library.h),
// so a build with video support may still lack them. Needs none of FFmpeg's headers.
#include <string>

namespace tvlm::ffmpeg {

// "" where FFmpeg's libraries load, else why not and what to install (the text the first
// video call would throw).
std::string unavailable_reason();

}  // namespace tvlm::ffmpeg
