// The launchers a run may start trials with (--launcher), as one table: each one's name (what
// the user types and what a campaign records as its "launcher") and help.
#pragma once

#include <array>

#include "base/choices.h"

namespace ditbench {

enum class LauncherKind {
  kLocal,  // LocalLauncher (launch/local_launcher.h)
  kSlurm,  // SlurmLauncher or SlurmStepLauncher (launch/slurm/)
};

inline constexpr std::array<Choice<LauncherKind>, 2> kLaunchers{{
    {LauncherKind::kLocal, "local", "ranks are processes on this machine"},
    {LauncherKind::kSlurm, "slurm",
     "each trial is a Slurm job whose ranks srun starts (multi-node trials allowed)"},
}};

}  // namespace ditbench
