// The public `results` view (README.md, "The results view") as each schema version defines it:
// the migrations of storage/schema.cc drop the view and create it again at their version.
#pragma once

#include <string>

namespace ditbench {

// The CREATE VIEW statement of the `results` view at schema version `version` (1 or later).
std::string ResultsView(int version);

}  // namespace ditbench
