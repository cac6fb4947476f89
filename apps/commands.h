#pragma once
// The `tvlm` subcommands; each returns the process exit code.

namespace tvlm {

int run_info(int argc, char** argv);
int run_mips(int argc, char** argv);
int run_bench(int argc, char** argv);
int run_sample(int argc, char** argv);
int run_overlay(int argc, char** argv);
int run_video(int argc, char** argv);  // where FFmpeg's libraries were found

}  // namespace tvlm
