#pragma once
namespace hybgen {
constexpr const char* kVersion = "0.1.0";
}
