#include "experiments/sweep_meaning.h"

#include <yaml-cpp/yaml.h>

namespace ditbench {
namespace {

void Write(const YAML::Node& node, std::string& out) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      out += '{';
      for (const auto& entry : node) {
        Write(entry.first, out);
        out += ": ";
        Write(entry.second, out);
        out += ", ";
      }
      out += '}';
      return;
    case YAML::NodeType::Sequence:
      out += '[';
      for (const auto& item : node) {
        Write(item, out);
        out += ", ";
      }
      out += ']';
      return;
    case YAML::NodeType::Scalar:
      // Quoted with its length, so that no value can be mistaken for structure.
      out += std::to_string(node.Scalar().size()) + '"' + node.Scalar() + '"';
      return;
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      out += "~";
      return;
  }
}

}  // namespace

std::string SweepMeaning(const std::string& text) {
  try {
    std::string out;
    for (const YAML::Node& document : YAML::LoadAll(text)) {
      Write(document, out);
      out += "\n---\n";
    }
    return out;
  } catch (const YAML::Exception&) {
    return text;
  }
}

bool SameSweepMeaning(const std::string& a, const std::string& b) {
  return a == b || SweepMeaning(a) == SweepMeaning(b);
}

}  // namespace ditbench
