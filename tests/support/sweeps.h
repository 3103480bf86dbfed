// Parsing a sweep in a test: the spec of valid YAML, with the first diagnostic as the failure.
#pragma once

#include <string>

#include <gtest/gtest.h>

#include "experiments/sweep_spec.h"

namespace ditbench::test {

inline SweepSpec ParseValidSweep(const std::string& yaml) {
  ParseResult r = ParseSweep(yaml, "test.yaml");
  EXPECT_TRUE(r.ok()) << (r.errors.empty() ? "" : r.errors[0].ToString());
  return r.spec;
}

}  // namespace ditbench::test
