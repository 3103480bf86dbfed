// How the coordinator's readers of untrusted input scale with their input: time and peak memory
// against size for rank files, profiler traces and safetensors headers, each at legitimate and
// hostile shapes, up to their caps. Each measurement runs in a child process (fork), so that its
// peak resident memory is its own (wait4's ru_maxrss, less that of a child that reads nothing).
// A linear reader shows a constant time per MB across sizes. For contrast, nlohmann's callback
// parser (the reader before it, rescanning a container at every closing bracket) is timed on
// the hostile rank file at small sizes.
//
//   build/bench/ingest_bench [--quick]        (--quick: the three smallest sizes of each)
//
// Prints a markdown table: reader, shape, values, MB, seconds, ns per byte, peak MB, peak per
// byte of input. Figures: docs/benchmarks.md, "Untrusted readers against input size".
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/untrusted_input.h"
#include "contract/worker_contract.h"
#include "metrics/trace_profile.h"
#include "model_zoo/shapes/safetensors_header.h"

namespace {

using namespace ditbench;
using Clock = std::chrono::steady_clock;

// A rank file of `n` timed samples (a legitimate file), or of `n` empty objects in a field the
// contract does not know (the file that hung ingest).
std::string RankFile(long n, bool hostile) {
  RankResult r;
  r.samples.push_back({0, 0, "iteration", 10.0, false});
  nlohmann::json j = ToJson(r);
  if (!hostile) j.erase("samples");  // written below, n of them
  std::string text = j.dump();
  text.pop_back();
  text += hostile ? ", \"padding\": [" : ", \"samples\": [";
  for (long i = 0; i < n; ++i) {
    if (i) text += ',';
    text += hostile
                ? "{}"
                : fmt::format(R"({{"iteration":{},"stage":"step:{}","ms":{:.4f},"warmup":false}})",
                              1 + i / 20, i % 20, 1.0 + (i % 97) * 0.01);
  }
  return text + "]}";
}

// A Kineto-like trace of `n` complete events over steps of 100 events, or `n` numbers where
// events belong (refused at the first).
std::string Trace(long n, bool hostile) {
  std::string text = R"({"schemaVersion": 1, "traceEvents": [)";
  for (long i = 0; i < n; ++i) {
    if (i) text += ',';
    if (hostile) {
      text += std::to_string(i);
    } else if (i % 100 == 0) {
      text += fmt::format(R"({{"ph":"X","cat":"user_annotation","name":"ditbench.step {}",)"
                          R"("pid":1,"tid":1,"ts":{},"dur":1000,"args":{{}}}})",
                          i / 100, i * 10);
    } else {
      text += fmt::format(R"({{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,)"
                          R"("ts":{},"dur":5,"args":{{"Input Dims":[[64,64],[64,64]]}}}})",
                          i * 10 + 1);
    }
  }
  return text + "]}";
}

std::string SafetensorsHeader(long n) {
  std::string text = "{";
  for (long i = 0; i < n; ++i)
    text += fmt::format(R"({}"blocks.{}.attn.to_q.weight":{{"dtype":"BF16","shape":[2],)"
                        R"("data_offsets":[{},{}]}})",
                        i ? "," : "", i, 4 * i, 4 * i + 4);
  return text + "}";
}

struct Measured {
  double seconds = 0;
  double peak_mb = 0;
  std::string outcome;  // "ok" or the start of the refusal
};

long MaxRssKb(pid_t pid, int* status) {
  struct rusage usage {};
  ::wait4(pid, status, 0, &usage);
  return usage.ru_maxrss;
}

// Runs `read` on the file's path in a child; its time and peak memory above an idle child's
// (the pages it shares with this process).
Measured InChild(const std::filesystem::path& file,
                 const std::function<std::string(const std::filesystem::path&)>& read) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) std::abort();
  const pid_t idle = ::fork();
  if (idle == 0) ::_exit(0);
  int status = 0;
  const long idle_kb = MaxRssKb(idle, &status);
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(pipe_fds[0]);
    const auto start = Clock::now();
    std::string outcome;
    try {
      outcome = read(file);
    } catch (const std::exception& e) {
      outcome = std::string("refused: ") + e.what();
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    const std::string line = fmt::format("{:.6f} {}", seconds, outcome.substr(0, 90));
    if (::write(pipe_fds[1], line.data(), line.size()) < 0) ::_exit(1);
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  std::string line;
  char buffer[256];
  for (ssize_t n; (n = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0;) line.append(buffer, n);
  ::close(pipe_fds[0]);
  const long child_kb = MaxRssKb(child, &status);
  Measured m;
  m.seconds = std::stod(line);
  m.outcome = line.substr(line.find(' ') + 1);
  m.peak_mb = std::max(0L, child_kb - idle_kb) / 1024.0;
  return m;
}

struct Case {
  std::string reader;
  std::string shape;
  std::function<std::string(long)> text;
  std::function<std::string(const std::filesystem::path&)> read;
  std::vector<long> sizes;
};

std::string ReadText(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const std::filesystem::path file = std::filesystem::temp_directory_path() / "ingest_bench.json";
  const auto read_rank = [](const std::filesystem::path& p) {
    return fmt::format("ok ({} samples)", ReadRankResult(p).samples.size());
  };
  const auto read_trace = [](const std::filesystem::path& p) {
    return fmt::format("ok ({} steps)", ReadTraceProfile(p).steps.size());
  };
  const auto read_header = [](const std::filesystem::path& p) {
    return fmt::format("ok ({} tensors)",
                       ParseSafetensorsHeader(ReadText(p), 1ull << 40, p.string()).size());
  };
  // The reader before this one, for contrast: nlohmann's callback parser with a depth cap.
  const auto callback_parser = [](const std::filesystem::path& p) {
    const std::string text = ReadText(p);
    const auto depth = [](int d, nlohmann::json::parse_event_t, nlohmann::json&) { return d < 32; };
    return fmt::format("ok ({} fields)", nlohmann::json::parse(text, depth).size());
  };
  const std::vector<Case> cases = {
      {"rank file",
       "timed samples",
       [](long n) { return RankFile(n, false); },
       read_rank,
       {10'000, 40'000, 160'000, 640'000, 799'000}},
      {"rank file",
       "empty objects, unknown field",
       [](long n) { return RankFile(n, true); },
       read_rank,
       {250'000, 1'000'000, 3'999'000, 4'000'000}},
      {"rank file (callback parser, before)",
       "empty objects, unknown field",
       [](long n) { return RankFile(n, true); },
       callback_parser,
       {10'000, 20'000, 40'000}},
      {"trace",
       "Kineto-like events",
       [](long n) { return Trace(n, false); },
       read_trace,
       {20'000, 80'000, 320'000, 1'000'000}},
      {"trace",
       "numbers where events belong",
       [](long n) { return Trace(n, true); },
       read_trace,
       {1'000'000, 14'000'000}},
      {"safetensors header",
       "tensor entries",
       [](long n) { return SafetensorsHeader(n); },
       read_header,
       {10'000, 40'000, 160'000, 300'000}},
  };
  std::printf(
      "| reader | shape | count | MB | seconds | ns per byte | peak MB | peak per byte | "
      "outcome |\n|---|---|---:|---:|---:|---:|---:|---:|---|\n");
  for (const Case& c : cases) {
    std::size_t done = 0;
    for (long n : c.sizes) {
      if (quick && done++ == 3) break;
      // Written by a child too: the text's pages never become this process's, which every
      // measuring child would otherwise inherit and reuse.
      if (const pid_t writer = ::fork(); writer == 0) {
        std::ofstream(file, std::ios::binary | std::ios::trunc) << c.text(n);
        ::_exit(0);
      } else {
        int status = 0;
        ::waitpid(writer, &status, 0);
      }
      const std::uint64_t bytes = std::filesystem::file_size(file);
      const Measured m = InChild(file, c.read);
      std::printf("| %s | %s | %ld | %.1f | %.3f | %.1f | %.0f | %.2f | %s |\n", c.reader.c_str(),
                  c.shape.c_str(), n, bytes / 1e6, m.seconds, m.seconds * 1e9 / bytes, m.peak_mb,
                  m.peak_mb * 1e6 / bytes, m.outcome.c_str());
      std::fflush(stdout);
    }
  }
  std::filesystem::remove(file);
  return 0;
}
