// A small served trial for tests: pixart-alpha-tiny at 256 px and 4 steps, serving `requests`
// Poisson requests at `rate_per_s` (experiments/serve_load.h).
#pragma once

#include "experiments/trial.h"

namespace ditbench::test {

inline TrialConfig TinyServedTrial(double rate_per_s, int requests) {
  TrialConfig c;
  c.model = "pixart-alpha-tiny";
  c.resolution = 256;
  c.steps = 4;
  c.serve = ServeLoad{};
  c.serve->rate_per_s = rate_per_s;
  c.serve->requests = requests;
  return c;
}

}  // namespace ditbench::test
