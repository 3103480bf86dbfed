// One `engine` trial, run by its client process (`ditbench engine-trial --trial FILE`, which the
// coordinator starts as the trial's only rank, runner/scheduler_adoption.cc): start the sweep's
// server on a free loopback port in its own process group (or attach to its `url`), wait until
// every ready path answers 2xx, send the warm-up requests and then the timed ones one at a time
// (the trial's repeats, metrics/measurement.h), and write rank0.json as the `command`
// workload's programs do (contract/worker_contract.h), so that ingest, storage and report read
// an engine trial like any other. The server is stopped (and its group killed) before it
// returns, however the trial ends.
//
// In the run folder: server.log (the server's output), request.json (the body sent, verbatim),
// engine-files/ (engine.files, when any), the last output as the server sent it (output.png,
// .jpg, .mp4 or .bin; runner/engine_session.h), rank0.json. Metrics: ready_s,
// first_request_ms; samples: every request's latency (warm-up ones flagged). The requests go
// to the images API or, as video jobs, to the videos API (engine.api).
#pragma once

#include <filesystem>
#include <iosfwd>

#include <nlohmann/json.hpp>

namespace ditbench {

// What of an engine trial's rank environment describes the campaign (its `worker` environment,
// which `compare` lists where two campaigns differ): the engine's version only. The rest is the
// trial's own (the command line with its port, the server's pid, the output's hash) and would
// make every two campaigns differ. An object, empty when the trial stored no version.
nlohmann::json EngineCampaignEnvironment(const nlohmann::json& rank_environment);

// Runs the trial of `trial_file` (its run folder is the file's). Returns the worker exit code
// (kWorkerOk, kWorkerFailed with the reason in rank0.json, kWorkerInvalidConfig); a line on
// `err` says why a trial failed.
int RunEngineTrial(const std::filesystem::path& trial_file, std::ostream& err);

}  // namespace ditbench
