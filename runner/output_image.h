// The decoded output of a scope `pipeline` trial as pictures in its run folder: the
// coordinator reads output.npy (world rank 0's, runner/output_error.h) and writes
//  * an image: output.png;
//  * a video:  output-frame<F>.png for its first, middle and last frames;
// clamped to the VAE's range [-1, 1] and mapped to 0..255 (metrics/decoded_image.h). The
// report shows them (report/quality_section.h). Torch-free.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "metrics/decoded_image.h"

namespace ditbench {

inline constexpr const char* kOutputImageName = "output.png";

// The file name of `frame` of an output: "output.png" for an image, "output-frame<F>.png" for
// a frame of a video.
std::string OutputImageName(const DecodedFrame& frame, bool video);

// Writes the pictures of `run_dir`'s output.npy into `run_dir`, and returns their names in
// frame order. Throws std::runtime_error (a missing or bad output.npy, naming the file) or
// std::invalid_argument (not an image's or a video's layout).
std::vector<std::string> WriteOutputImages(const std::filesystem::path& run_dir);

// What the coordinator calls after an ok scope pipeline trial: WriteOutputImages when the run
// folder holds an output.npy (a `command` workload leaves none); when that fails, why is
// written to kOutputImageErrorName instead (a picture is never a reason to fail a trial).
// Never throws.
inline constexpr const char* kOutputImageErrorName = "output-png-error.txt";
void KeepOutputImages(const std::filesystem::path& run_dir) noexcept;

}  // namespace ditbench
