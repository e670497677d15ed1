// The memory plan as a picture: an inline SVG with time (kernel step) across
// and byte offset up. Each arena block is one rectangle, from the step its
// first value is made to the last step one is read, with a tooltip naming the
// values inside; a dashed line marks the lower bound. The size is fixed, so a
// 250-kernel DenseNet reads as well as a 3-kernel MLP.
//
//   std::string svg = arena_chart_svg(compiled.plan, compiled.kernels.size());
//   // "<svg ...>" holding one <rect> per plan.blocks entry and no other <rect>
#pragma once

#include <cstddef>
#include <string>

#include "passes/memory_plan.h"

namespace hybgen {

std::string arena_chart_svg(const MemoryPlan& plan, std::size_t step_count);

}  // namespace hybgen
