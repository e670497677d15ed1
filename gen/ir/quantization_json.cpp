#include "ir/quantization_json.h"

#include <charconv>
#include <string>

namespace hybgen {

nlohmann::ordered_json quantization_to_json(const Quantization& quantization) {
  nlohmann::ordered_json j;
  j["scale"] = nlohmann::ordered_json::array();
  for (float s : quantization.scale) {
    char text[32];
    const auto end = std::to_chars(text, text + sizeof text, s).ptr;
    j["scale"].push_back(nlohmann::ordered_json::parse(std::string(text, end)));
  }
  j["zero_point"] = quantization.zero_point;
  if (quantization.axis) j["axis"] = *quantization.axis;
  return j;
}

}  // namespace hybgen
