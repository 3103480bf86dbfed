#pragma once
// The sweep file as untrusted text, before its meaning is read (experiments/sweep_spec.cc reads
// the meaning): values that are not UTF-8, where a byte stands, and keys given twice anywhere in
// the YAML document.

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

namespace ditbench {

// Records one located problem: where, the key it is about (may be empty), what is wrong.
using SpecErrorSink =
    std::function<void(const YAML::Mark& mark, std::string key, std::string message)>;

// Whether the strings of one setting's value (a scalar, or a list or map of scalars) are
// valid UTF-8: a value is stored in the trial key and printed, so bytes that are not are
// refused where they stand. Nested deeper than that, the setting's own check refuses it.
bool Utf8Text(const nlohmann::json& value);

// The 0-based line and column (in characters, not bytes) of byte `offset` of `text`.
YAML::Mark MarkOfByte(std::string_view text, std::size_t offset);

// Every map in the document, nested ones included: a key given twice is reported at its second
// occurrence (YAML leaves it to the reader; yaml-cpp would let the last one win where a key is
// looked up, and the first where the map is walked). A budget of nodes keeps an alias bomb from
// making this walk explode; the reader reports the bomb itself.
void ReportDuplicateKeys(const YAML::Node& root, const SpecErrorSink& error);

}  // namespace ditbench
