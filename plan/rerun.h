// --rerun: which trials that already have a result a resumed run starts again
// (plan/resume.h decides it per trial).
#pragma once

#include <array>

#include "base/choices.h"

namespace ditbench {

enum class Rerun {
  kNone,    // --rerun not given: none
  kFailed,  // the failures
  kBusy,    // those measured while other work ran on the machine
  kAll,     // every one
};
inline constexpr std::array<Choice<Rerun>, 3> kRerunChoices{{
    {Rerun::kFailed, "failed", "the failures"},
    {Rerun::kBusy, "busy", "those measured while other work ran on the machine"},
    {Rerun::kAll, "all", "every one"},
}};

}  // namespace ditbench
