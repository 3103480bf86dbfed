#include "runner/output_image.h"

#include <fmt/format.h>

#include "base/atomic_file.h"
#include "contract/npy.h"
#include "contract/worker_contract.h"
#include "metrics/png_image.h"

namespace ditbench {

std::string OutputImageName(const DecodedFrame& frame, bool video) {
  return video ? fmt::format("output-frame{}.png", frame.frame) : kOutputImageName;
}

std::vector<std::string> WriteOutputImages(const std::filesystem::path& run_dir) {
  const NpyArray output = ReadNpy(run_dir / kOutputFileName);
  const bool video = output.shape.size() == 5;
  std::vector<std::string> names;
  for (const DecodedFrame& frame : DecodedFrames(output)) {
    names.push_back(OutputImageName(frame, video));
    WritePng(run_dir / names.back(), frame.image);
  }
  return names;
}

void KeepOutputImages(const std::filesystem::path& run_dir) noexcept {
  try {
    std::error_code absent;
    if (!std::filesystem::exists(run_dir / kOutputFileName, absent)) return;
    WriteOutputImages(run_dir);
  } catch (const std::exception& e) {
    try {
      WriteFileAtomically(run_dir / kOutputImageErrorName, std::string(e.what()) + "\n",
                          /*durable=*/false);
    } catch (...) {  // a run folder that cannot be written: the report says the image is missing
    }
  } catch (...) {
  }
}

}  // namespace ditbench
