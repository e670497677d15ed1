#include "verify/bisect.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>

#include "emit/backends.h"
#include "io/file_util.h"
#include "ir/error.h"
#include "ir/names.h"
#include "runtime-lite/interpreter.h"

namespace hybgen {
namespace {

constexpr std::size_t kHeaderBytes = 3 * sizeof(int64_t);

std::string shape_text(const Shape& s) {
  std::string t = "(";
  for (std::size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + (s.size() == 1 ? ",)" : ")");
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

ValueComparison compare_values(const float* actual, const float* reference, int64_t count) {
  ValueComparison c;
  double scale = 0;
  bool found = false;
  for (int64_t i = 0; i < count; ++i) {
    double diff = std::fabs(static_cast<double>(actual[i]) - reference[i]);
    if (std::isnan(diff)) diff = INFINITY;
    if (!found || diff > c.max_abs_error) {
      c.max_abs_error = diff;
      c.worst_index = i;
      found = true;
    }
    scale = std::max(scale, static_cast<double>(std::fabs(reference[i])));
  }
  c.max_rel_error = c.max_abs_error / std::max(scale, 1e-30);
  return c;
}

Shape unflatten_index(int64_t index, const Shape& shape) {
  Shape position(shape.size(), 0);
  for (std::size_t a = shape.size(); a-- > 0;) {
    if (shape[a] <= 0) continue;
    position[a] = index % shape[a];
    index /= shape[a];
  }
  return position;
}

std::map<std::string, std::vector<float>> reference_kernel_values(const CompiledGraph& compiled,
                                                                  const std::map<std::string, Tensor>& inputs) {
  // The optimized graph as it is, each stored value made an output, so the
  // reference interpreter keeps it in bytes of its own.
  Graph graph = compiled.graph;
  std::vector<std::string> values;
  std::set<std::string> seen;
  for (const Kernel& kernel : compiled.kernels)
    for (const auto& out : kernel.outputs)
      if (seen.insert(out).second) values.push_back(out);
  for (const auto& out : graph.outputs)
    if (seen.insert(out).second) values.push_back(out);
  graph.outputs = values;
  Interpreter reference(graph);
  const std::vector<Tensor> results = reference.run(inputs);
  std::map<std::string, std::vector<float>> by_name;
  for (std::size_t i = 0; i < values.size() && i < results.size(); ++i) by_name[values[i]] = results[i].to_vector();
  return by_name;
}

BisectReport bisect_dump(const CompiledGraph& compiled, const std::map<std::string, std::vector<float>>& reference,
                         const std::string& dump_path, double tolerance) {
  const Graph& g = compiled.graph;
  const std::vector<uint8_t> dump = read_file_bytes(dump_path);
  BisectReport report;
  report.ran = true;
  report.kernels = static_cast<int>(compiled.kernels.size());
  report.tolerance = tolerance;
  std::size_t at = 0;
  auto bad = [&](const std::string& what) {
    return Error("the kernel dump " + dump_path + " " + what + " at byte " + std::to_string(at));
  };
  std::vector<float> actual;
  for (std::size_t k = 0; k < compiled.kernels.size(); ++k) {
    const Kernel& kernel = compiled.kernels[k];
    for (std::size_t j = 0; j < kernel.outputs.size(); ++j) {
      const std::string& value = kernel.outputs[j];
      const int64_t count = g.type(value).num_elements();
      const int64_t value_bytes = static_cast<int64_t>(g.type(value).bytes());
      if (dump.size() - at < kHeaderBytes) throw bad("ends before kernel " + std::to_string(k) + "'s output " + std::to_string(j));
      int64_t header[3];
      std::memcpy(header, dump.data() + at, kHeaderBytes);
      if (header[0] != static_cast<int64_t>(k) || header[1] != static_cast<int64_t>(j) || header[2] != value_bytes)
        throw bad("has kernel " + std::to_string(header[0]) + " output " + std::to_string(header[1]) + " (" +
                  std::to_string(header[2]) + " bytes) where kernel " + std::to_string(k) + " output " +
                  std::to_string(j) + " (" + std::to_string(value_bytes) + " bytes) belongs");
      at += kHeaderBytes;
      const std::size_t bytes = static_cast<std::size_t>(count) * sizeof(float);
      if (dump.size() - at < bytes) throw bad("ends inside kernel " + std::to_string(k) + "'s output " + std::to_string(j));
      actual.resize(static_cast<std::size_t>(count));
      if (bytes) std::memcpy(actual.data(), dump.data() + at, bytes);
      at += bytes;
      auto ref = reference.find(value);
      if (ref == reference.end() || ref->second.size() != actual.size())
        throw Error("the reference has no value " + quoted_name(value) + " of " + std::to_string(count) + " floats");
      ++report.values_checked;
      const ValueComparison c = compare_values(actual.data(), ref->second.data(), count);
      if (c.max_rel_error <= tolerance) continue;
      KernelDivergence d;
      d.kernel = static_cast<int>(k);
      d.kind = kernel_kind_name(kernel.kind);
      for (int n : kernel.nodes) {
        d.nodes.push_back(g.nodes[static_cast<std::size_t>(n)].name);
        d.ops.push_back(g.nodes[static_cast<std::size_t>(n)].op);
      }
      d.value = value;
      d.shape = g.type(value).shape;
      d.max_abs_error = c.max_abs_error;
      d.max_rel_error = c.max_rel_error;
      d.worst_index = c.worst_index;
      d.worst_position = unflatten_index(c.worst_index, d.shape);
      d.actual = actual[static_cast<std::size_t>(c.worst_index)];
      d.expected = ref->second[static_cast<std::size_t>(c.worst_index)];
      report.first = d;
      return report;  // the kernels after it read a wrong value
    }
  }
  if (at != dump.size()) throw bad("has more records than the model has kernel outputs");
  return report;
}

BisectReport bisect_kernels(const CompiledGraph& compiled, const std::map<std::string, Tensor>& inputs,
                            const std::string& dump_path, double tolerance) {
  return bisect_dump(compiled, reference_kernel_values(compiled, inputs), dump_path, tolerance);
}

std::string bisect_unsupported(const CompiledGraph& compiled) {
  const Target& t = compiled.target;
  if (!backend_traits(t.backend).kernel_hooks)
    return "--bisect compares the kernels of backends that print hooks after them (the C++ backend's); the " +
           backend_name(t.backend) + " target " + t.name + " is not checked kernel by kernel";
  if (t.runner == Runner::kQemuSystem)
    return "--bisect needs a program that writes files; the microcontroller target " + t.name + " has none";
  for (const auto* list : {&compiled.graph.inputs, &compiled.graph.outputs})
    for (const std::string& v : *list)
      if (compiled.graph.type(v).dtype != DType::kFloat32)
        return "--bisect replays the generated graph on float32 inputs; with --io-precision quantized " +
               quoted_name(v) + " is " + dtype_name(compiled.graph.type(v).dtype);
  return "";
}

std::map<std::string, std::string> bisect_driver_values(const std::string& ns, bool hooks) {
  if (!hooks) return {{"KERNEL_HOOK", ""}, {"KERNEL_HOOK_OPEN", ""}, {"KERNEL_HOOK_CLOSE", ""}};
  const std::string hook =
      "\n// `hybgen verify --bisect`: every value each kernel stores, in DIR/kernels.bin\n"
      "// (int64 kernel, int64 output, int64 bytes, then the bytes).\n"
      "namespace {\n"
      "std::FILE* kernel_dump = 0;\n"
      "bool kernel_dump_failed = false;\n"
      "}  // namespace\n\n"
      "namespace " +
      ns +
      " {\n"
      "namespace kernels {\n"
      "void hg_after_kernel(int kernel, int output, const void* values, std::size_t bytes) {\n"
      "  if (!kernel_dump) return;\n"
      "  const std::int64_t header[3] = {kernel, output, static_cast<std::int64_t>(bytes)};\n"
      "  if (std::fwrite(header, sizeof header, 1, kernel_dump) != 1 ||\n"
      "      (bytes > 0 && std::fwrite(values, 1, bytes, kernel_dump) != bytes))\n"
      "    kernel_dump_failed = true;\n"
      "}\n"
      "}  // namespace kernels\n"
      "}  // namespace " +
      ns + "\n";
  const std::string open =
      "  char dump_path[4096];\n"
      "  std::snprintf(dump_path, sizeof dump_path, \"%s/kernels.bin\", dir);\n"
      "  kernel_dump = std::fopen(dump_path, \"wb\");\n"
      "  if (!kernel_dump) {\n"
      "    std::fprintf(stderr, \"cannot write %s\\n\", dump_path);\n"
      "    return 8;\n"
      "  }\n";
  const std::string close =
      "  if (std::fclose(kernel_dump) != 0 || kernel_dump_failed) {\n"
      "    std::fprintf(stderr, \"writing %s failed\\n\", dump_path);\n"
      "    return 8;\n"
      "  }\n";
  return {{"KERNEL_HOOK", hook}, {"KERNEL_HOOK_OPEN", open}, {"KERNEL_HOOK_CLOSE", close}};
}

std::string bisect_text(const BisectReport& r) {
  if (!r.ran) return r.skipped.empty() ? "" : "bisect: not run: " + r.skipped + "\n";
  if (!r.first)
    return "bisect: no kernel diverges: the " + std::to_string(r.values_checked) + " values the " +
           std::to_string(r.kernels) + " kernels store match the reference within " + number(r.tolerance) + "\n";
  const KernelDivergence& d = *r.first;
  std::string nodes;
  for (std::size_t i = 0; i < d.nodes.size(); ++i)
    nodes += (i ? " + " : "") + quoted_name(d.nodes[i]) + " (" + printable_name(d.ops[i]) + ")";
  std::string text = "bisect: kernel " + std::to_string(d.kernel) + " of " + std::to_string(r.kernels) + " (" + d.kind +
                     ") diverges first: " + nodes + "\n";
  text += "  value " + quoted_name(d.value) + " " + shape_text(d.shape) + ": max abs err " + number(d.max_abs_error) +
          ", max rel err " + number(d.max_rel_error) + " (tolerance " + number(r.tolerance) + ")\n";
  text += "  worst element " + std::to_string(d.worst_index) + " at " + shape_text(d.worst_position) + ": generated " +
          number(d.actual) + ", reference " + number(d.expected) + "\n";
  text += "  the kernels after it read this value and were not checked\n";
  return text;
}

}  // namespace hybgen
