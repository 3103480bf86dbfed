// What turns a serving load (experiments/serve_load.h) into its requests: GenerateArrivals,
// deterministically (the same load and seed give the same requests on every machine and standard
// library, so a trial is repeatable), or a trace file replaying recorded arrivals exactly
// (ReadArrivalTrace, in arrival_trace.cc). Pure, torch-free; the trace reader is the only I/O.
// Run before a trial's file exists (sweep parsing, validity, the plan, the coordinator that
// materializes a trial's requests: experiments/trial_requests.h); never by a worker or ingest.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "experiments/serve_load.h"

namespace ditbench {

// The requests of a generated load (not kTrace), warmup_requests + requests of them (or up to
// duration_s), the first at time 0. In a closed loop every arrival_s is 0: the runner issues
// each when a slot frees and records that moment as its arrival.
//
// Determinism: gaps and shapes come from two std::mt19937_64 streams seeded from `seed` (the
// engine's output is fixed by the C++ standard), turned into draws here rather than by
// <random>'s distributions, whose output differs between standard libraries: uniforms of 53
// bits, exponential gaps by the inverse CDF, normals by Box-Muller, gamma gaps by
// Marsaglia-Tsang. (std::log and friends may differ in the last bit between C libraries.)
// Gaps scale as 1 / rate_per_s, so one seed at several rates gives the same pattern
// compressed, and the same shapes: rates compare on common random numbers.
// Throws std::invalid_argument with ServeLoadProblem's line, or for kTrace; std::runtime_error
// should a gamma draw not be accepted in a bounded number of proposals (the sampler never
// loops without end, whatever the shape).
std::vector<Request> GenerateArrivals(const ServeLoad& load);

// A trace file's requests, in file order, and the distinct shapes they use (in order of first
// use, weight = the count of requests of that shape).
struct ArrivalTrace {
  std::vector<RequestShape> shapes;
  std::vector<Request> requests;
  std::string sha256;  // of the file's bytes, as ArrivalTraceSha256
};

// The most bytes of a trace file: 64 MiB (about 20 bytes a line at kMaxServeRequests).
inline constexpr std::uint64_t kMaxArrivalTraceBytes = 64ull << 20;

// Reads a CSV trace, untrusted: a regular file of at most kMaxArrivalTraceBytes (a symbolic link
// is refused, never followed), the header line `arrival_s,width,height,frames,steps` (after a
// UTF-8 byte-order mark, if any), then one request a line (blank lines skipped, "\r\n"
// accepted), at most kMaxServeRequests: arrival_s seconds from 0 to 10^6, not before the line
// above; width and height 16 to 16384; frames 0 to 100000; steps 1 to 10000. Throws UserError,
// one line: "<path>:<line>: column 'steps' is 'abc'; expected an integer from 1 to 10000". A
// file that does not start with the header is not a trace: its content is never quoted.
ArrivalTrace ReadArrivalTrace(const std::filesystem::path& path);

// The SHA-256 of a trace file's bytes (64 hex digits), read as ReadArrivalTrace reads them (a
// regular file, no link followed, at most kMaxArrivalTraceBytes). Throws UserError naming the
// file; never quotes its content.
std::string ArrivalTraceSha256(const std::filesystem::path& path);

// A sweep's `serve.trace` as written, for the sweep file's folder `sweep_folder`: a relative
// path is taken from that folder and must resolve inside it (through any link); an absolute one
// may be anywhere. Either must be a regular file, not a link (ArrivalTraceSha256). Sets `*path`
// to the trace's path and `*sha256` to its digest, or returns what is wrong, one line that never
// quotes the file.
std::optional<std::string> LocateArrivalTrace(const std::filesystem::path& written,
                                              const std::filesystem::path& sweep_folder,
                                              std::filesystem::path* path, std::string* sha256);

}  // namespace ditbench
