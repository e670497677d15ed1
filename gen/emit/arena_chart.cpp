// Layout: a fixed 960x420 canvas; steps share the plot's width equally and
// bytes its height linearly from 0 (bottom) to the arena size (top). Colours
// and styles are SVG attributes rather than page CSS, so the chart also
// renders when cut out of the page on its own.
#include "emit/arena_chart.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "emit/report_text.h"

namespace hybgen {
namespace {

constexpr double kWidth = 960, kHeight = 420;
constexpr double kLeft = 76, kRight = 16, kTop = 24, kBottom = 44;
constexpr double kPlotWidth = kWidth - kLeft - kRight, kPlotHeight = kHeight - kTop - kBottom;
constexpr double kMaxStepTicks = 12, kMaxByteTicks = 8;
// Blocks of a few bytes in a megabyte arena would be invisible and could not
// be hovered: they are drawn at least this tall.
constexpr double kMinBlockHeight = 1;

// Light, distinct fills; neighbouring blocks usually have neighbouring indices.
const char* const kPalette[] = {"#8ecae6", "#ffb703", "#a7c957", "#f4978e", "#b8b8ff",
                                "#90e0ef", "#f9c74f", "#cdb4db", "#84a59d", "#ffafcc"};

// Coordinates to a tenth of a pixel: finer is invisible and only grows the file.
std::string coord(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", value);
  return text;
}

// The smallest of 1, 2, 5, 10, 20, 50, ... steps that cuts `count` steps
// into at most kMaxStepTicks intervals.
std::size_t step_tick_interval(std::size_t count) {
  for (std::size_t scale = 1;; scale *= 10)
    for (std::size_t multiple : {1, 2, 5})
      if (static_cast<double>(count) / static_cast<double>(multiple * scale) <= kMaxStepTicks) return multiple * scale;
}

// Byte ticks at a round number of one binary unit (0.5 MiB, 20 KiB), every
// label in that unit, so the axis reads "0.5 MiB, 1 MiB, 1.5 MiB".
struct ByteTicks {
  double interval = 1;
  double unit = 1;
  const char* unit_name = "B";
  int decimals = 0;
  // Every tick above 0 up to `top`; counted, not summed, so 0.1 steps do not drift.
  std::vector<double> values(double top) const {
    std::vector<double> v;
    for (int i = 1; i * interval <= top; ++i) v.push_back(i * interval);
    return v;
  }
  std::string label(double bytes) const {
    char text[48];
    std::snprintf(text, sizeof text, "%.*f %s", decimals, bytes / unit, unit_name);
    return text;
  }
};

ByteTicks byte_ticks(double range) {
  static const char* const names[] = {"B", "KiB", "MiB", "GiB"};
  ByteTicks t;
  for (int i = 1; i < 4 && range >= t.unit * 1024; ++i) {
    t.unit *= 1024;
    t.unit_name = names[i];
  }
  for (double multiple : {0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0}) {
    if (t.unit == 1 && multiple < 1) continue;  // no fractional bytes
    t.interval = multiple * t.unit;
    t.decimals = multiple < 1 ? 1 : 0;
    if (range / t.interval <= kMaxByteTicks) break;
  }
  return t;
}

std::string block_tooltip(const ArenaBlock& block, const std::vector<const BufferPlacement*>& values) {
  std::string text = "block " + block.name + "\noffset " + grouped_count(block.offset) + ", " +
                     grouped_count(block.bytes) + " bytes (" + human_bytes(block.bytes) + "), steps " +
                     std::to_string(block.first_step) + "-" + std::to_string(block.last_step) + "\nvalues:";
  for (const BufferPlacement* v : values)
    text += "\n  " + v->value + ": offset " + grouped_count(v->offset) + ", " + grouped_count(v->bytes) +
            " bytes, steps " + std::to_string(v->first_step) + "-" + std::to_string(v->last_step);
  return html_escape(text);
}

}  // namespace

std::string arena_chart_svg(const MemoryPlan& plan, std::size_t step_count) {
  for (const ArenaBlock& b : plan.blocks)
    step_count = std::max(step_count, static_cast<std::size_t>(b.last_step) + 1);
  const double steps = static_cast<double>(std::max<std::size_t>(step_count, 1));
  const double top_bytes = static_cast<double>(std::max<std::size_t>({plan.arena_bytes, plan.lower_bound_bytes, 1}));
  auto x_at = [&](double step) { return kLeft + step * kPlotWidth / steps; };
  auto y_at = [&](double bytes) { return kTop + kPlotHeight - bytes * kPlotHeight / top_bytes; };
  const double bottom = y_at(0), right = x_at(steps);

  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"arena-chart\" width=\"" + coord(kWidth) +
                    "\" height=\"" + coord(kHeight) + "\" viewBox=\"0 0 " + coord(kWidth) + " " + coord(kHeight) +
                    "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  svg += "<title>arena: " + grouped_count(plan.arena_bytes) + " bytes in " + std::to_string(plan.blocks.size()) +
         " blocks over " + std::to_string(step_count) + " kernel steps</title>\n";

  // Grid and tick labels.
  svg += "<g class=\"grid\" stroke=\"#e3e3e3\">\n";
  const std::size_t step_interval = step_tick_interval(step_count);
  for (std::size_t s = 0; s < step_count; s += step_interval)
    svg += "<line x1=\"" + coord(x_at(s + 0.5)) + "\" y1=\"" + coord(kTop) + "\" x2=\"" + coord(x_at(s + 0.5)) +
           "\" y2=\"" + coord(bottom) + "\"/>\n";
  const ByteTicks ticks = byte_ticks(top_bytes);
  const bool arena_empty = plan.arena_bytes == 0;
  if (!arena_empty)
    for (double b : ticks.values(top_bytes))
      svg += "<line x1=\"" + coord(kLeft) + "\" y1=\"" + coord(y_at(b)) + "\" x2=\"" + coord(right) + "\" y2=\"" +
             coord(y_at(b)) + "\"/>\n";
  svg += "</g>\n<g class=\"ticks\" fill=\"#444\">\n";
  for (std::size_t s = 0; s < step_count; s += step_interval)
    svg += "<text x=\"" + coord(x_at(s + 0.5)) + "\" y=\"" + coord(bottom + 14) + "\" text-anchor=\"middle\">" +
           std::to_string(s) + "</text>\n";
  svg += "<text x=\"" + coord(kLeft - 6) + "\" y=\"" + coord(bottom + 4) + "\" text-anchor=\"end\">0</text>\n";
  if (!arena_empty)
    for (double b : ticks.values(top_bytes))
      svg += "<text x=\"" + coord(kLeft - 6) + "\" y=\"" + coord(y_at(b) + 4) + "\" text-anchor=\"end\">" +
             ticks.label(b) + "</text>\n";
  svg += "<text x=\"" + coord(kLeft + kPlotWidth / 2) + "\" y=\"" + coord(kHeight - 6) +
         "\" text-anchor=\"middle\">kernel step</text>\n";
  svg += "<text transform=\"translate(14 " + coord(kTop + kPlotHeight / 2) +
         ") rotate(-90)\" text-anchor=\"middle\">byte offset</text>\n</g>\n";

  // Blocks, each with the values that live in it.
  std::vector<std::vector<const BufferPlacement*>> values_of(plan.blocks.size());
  for (const BufferPlacement& v : plan.buffers)
    if (v.block >= 0 && v.block < static_cast<int>(plan.blocks.size())) values_of[v.block].push_back(&v);
  svg += "<g class=\"blocks\" stroke=\"#333\" stroke-width=\"0.5\">\n";
  for (std::size_t i = 0; i < plan.blocks.size(); ++i) {
    const ArenaBlock& b = plan.blocks[i];
    const double y_top = y_at(static_cast<double>(b.offset + b.bytes));
    const double height = std::max(y_at(static_cast<double>(b.offset)) - y_top, kMinBlockHeight);
    svg += "<rect class=\"block\" x=\"" + coord(x_at(b.first_step)) + "\" y=\"" + coord(y_top) + "\" width=\"" +
           coord(x_at(b.last_step + 1) - x_at(b.first_step)) + "\" height=\"" + coord(height) + "\" fill=\"" +
           kPalette[i % (sizeof kPalette / sizeof kPalette[0])] + "\"><title>" + block_tooltip(b, values_of[i]) +
           "</title></rect>\n";
  }
  svg += "</g>\n";

  // Frame, arena size and lower bound on top of the blocks.
  svg += "<g class=\"frame\" fill=\"none\" stroke=\"#444\">\n<line x1=\"" + coord(kLeft) + "\" y1=\"" + coord(kTop) +
         "\" x2=\"" + coord(kLeft) + "\" y2=\"" + coord(bottom) + "\"/>\n<line x1=\"" + coord(kLeft) + "\" y1=\"" +
         coord(bottom) + "\" x2=\"" + coord(right) + "\" y2=\"" + coord(bottom) + "\"/>\n</g>\n";
  if (arena_empty) {
    svg += "<text x=\"" + coord(kLeft + kPlotWidth / 2) + "\" y=\"" + coord(kTop + kPlotHeight / 2) +
           "\" text-anchor=\"middle\" fill=\"#444\">no intermediate values: the arena is empty</text>\n";
    return svg + "</svg>\n";
  }
  const double arena_y = y_at(static_cast<double>(plan.arena_bytes));
  svg += "<line class=\"arena-size\" x1=\"" + coord(kLeft) + "\" y1=\"" + coord(arena_y) + "\" x2=\"" + coord(right) +
         "\" y2=\"" + coord(arena_y) + "\" stroke=\"#444\"><title>arena: " + grouped_count(plan.arena_bytes) +
         " bytes</title></line>\n";
  svg += "<text x=\"" + coord(right) + "\" y=\"" + coord(arena_y - 5) + "\" text-anchor=\"end\" fill=\"#444\">arena " +
         human_bytes(plan.arena_bytes) + "</text>\n";
  const double bound_y = y_at(static_cast<double>(plan.lower_bound_bytes));
  svg += "<line class=\"lower-bound\" x1=\"" + coord(kLeft) + "\" y1=\"" + coord(bound_y) + "\" x2=\"" + coord(right) +
         "\" y2=\"" + coord(bound_y) + "\" stroke=\"#c0392b\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"><title>" +
         "lower bound: " + grouped_count(plan.lower_bound_bytes) +
         " bytes, the most block bytes live at one step</title></line>\n";
  svg += "<text x=\"" + coord(kLeft + 4) + "\" y=\"" + coord(bound_y - 5) +
         "\" fill=\"#c0392b\" stroke=\"#fff\" stroke-width=\"3\" paint-order=\"stroke\">lower bound " +
         human_bytes(plan.lower_bound_bytes) + "</text>\n";
  return svg + "</svg>\n";
}

}  // namespace hybgen
