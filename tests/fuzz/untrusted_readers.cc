#include "tests/fuzz/untrusted_readers.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>

#include "base/run_folder_file.h"
#include "contract/npy.h"
#include "contract/selfcheck_measurements.h"
#include "contract/worker_contract.h"
#include "experiments/arrivals.h"
#include "experiments/serve_load.h"
#include "experiments/trial_requests.h"
#include "metrics/served_requests.h"
#include "metrics/trace_profile.h"
#include "model_zoo/shapes/diffusers_config.h"
#include "model_zoo/shapes/diffusers_files.h"
#include "model_zoo/shapes/safetensors_header.h"

namespace ditbench::fuzz {
namespace {

// A folder of this process's own, made once, where inputs that readers take as files are
// written (removed at exit).
const std::filesystem::path& ScratchDir() {
  static const std::filesystem::path dir = [] {
    auto path =
        std::filesystem::temp_directory_path() / ("ditbench-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(path);
    std::atexit([] { std::filesystem::remove_all(ScratchDir()); });
    return path;
  }();
  return dir;
}

std::filesystem::path Written(const std::string& name, const std::uint8_t* data, std::size_t size) {
  const auto path = ScratchDir() / name;
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return path;
}

// Runs a reader: a result, or one std::exception with a one-line message; nothing else.
template <typename F>
void Checked(F&& read) {
  try {
    read();
  } catch (const std::exception& e) {
    if (std::string(e.what()).find('\n') != std::string::npos) std::abort();
  }
}

void RankFile(const std::uint8_t* data, std::size_t size) {
  Checked([&] { ReadRankResult(Written("rank0.json", data, size)); });
}

void Trace(const std::uint8_t* data, std::size_t size) {
  Checked([&] {
    AnalyzeTrace(std::string_view(reinterpret_cast<const char*>(data), size), "trace.json");
  });
}

void SafetensorsHeader(const std::uint8_t* data, std::size_t size) {
  Checked([&] {
    ParseSafetensorsHeader(std::string_view(reinterpret_cast<const char*>(data), size), 1 << 20,
                           "w.safetensors");
  });
}

void WeightsIndex(const std::uint8_t* data, std::size_t size) {
  Written("diffusion_pytorch_model.safetensors.index.json", data, size);
  Checked([&] { DiffusersWeightFiles(ScratchDir(), ""); });
}

void Npy(const std::uint8_t* data, std::size_t size) {
  Checked([&] { ReadNpy(Written("output.npy", data, size)); });
}

void ConfigJson(const std::uint8_t* data, std::size_t size) {
  Written("config.json", data, size);
  Checked([&] { ReadDiffusersConfig(ScratchDir()); });
}

// A serving trial's rank file (one replica, 3 requests at 4 a second, the first warm-up): read,
// then its requests checked against the load as ingest checks them.
void ServingRankFile(const std::uint8_t* data, std::size_t size) {
  Checked([&] {
    TrialConfig config;
    config.model = "pixart-alpha-tiny";
    config.resolution = 256;
    config.steps = 2;
    config.serve = ServeLoad{};
    config.serve->rate_per_s = 4;
    config.serve->requests = 2;
    config.serve->warmup_requests = 1;
    const std::vector<RankResult> ranks{ReadRankResult(Written("rank0.json", data, size))};
    if (auto problem = ServedRequestsProblem(config, MaterializeRequests(config), ranks))
      if (problem->problem.find('\n') != std::string::npos) std::abort();
  });
}

// A trial file (trial.json), a served trial's requests among its fields: read as the worker and
// ingest read it.
void TrialFileReader(const std::uint8_t* data, std::size_t size) {
  Checked([&] { ReadTrialFile(Written("trial.json", data, size)); });
}

// A serving load's arrival trace (CSV): its requests, or one located line.
void ArrivalTrace(const std::uint8_t* data, std::size_t size) {
  Checked([&] { ReadArrivalTrace(Written("trace.csv", data, size)); });
}

// A selfcheck worker's measurements, then the JSON they would be stored as read back: what one
// reading accepted, a second reading accepts alike.
void SelfcheckFile(const std::uint8_t* data, std::size_t size) {
  Checked([&] {
    const SelfcheckMeasurements m =
        ReadSelfcheckMeasurements(Written("selfcheck.json", data, size));
    SelfcheckFromJson(SelfcheckJson(m), "stored");
  });
}

// The note `report` shows for a missing picture: the input's first line, without its end of
// line, cut to kMaxRunFolderNoteBytes; never an exception. Anything else aborts.
void RunFolderNote(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  Written("note.txt", data, size);
  const std::string note = ReadRunFolderNote(ScratchDir(), "note.txt");
  std::string expected = text.substr(0, kMaxRunFolderNoteBytes);
  expected.resize(std::min(expected.find('\n'), expected.size()));
  if (!expected.empty() && expected.back() == '\r') expected.pop_back();
  if (note != expected) std::abort();
}

}  // namespace

const UntrustedReader kUntrustedReaders[] = {
    {"rank_file", RankFile},
    {"trace", Trace},
    {"safetensors_header", SafetensorsHeader},
    {"weights_index", WeightsIndex},
    {"npy", Npy},
    {"config_json", ConfigJson},
    {"run_folder_note", RunFolderNote},
    {"serving_rank_file", ServingRankFile},
    {"arrival_trace", ArrivalTrace},
    {"selfcheck_measurements", SelfcheckFile},
    {"trial_file", TrialFileReader},
};
const std::size_t kUntrustedReaderCount = std::size(kUntrustedReaders);

const UntrustedReader* FindUntrustedReader(std::string_view name) {
  for (const auto& reader : kUntrustedReaders)
    if (name == reader.name) return &reader;
  return nullptr;
}

}  // namespace ditbench::fuzz
