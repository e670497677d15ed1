// ONNX's backend node tests (Debian's libonnx-testdata: one folder per test,
// model.onnx with test_data_set_0/input_N.pb and output_N.pb) through the
// importer and the generated code, on generic and this machine's target.
//
// Every test whose ops all have a converter (io/onnx/onnx_ops.h) is imported; an
// Error from the import is a refusal, counted and listed, not a failure. The
// imported tests are generated as ONE graph (each test an independent
// subgraph under its own prefix, as the registry test does with op examples),
// so a target costs one compiler run (the reference interpreter runs each
// test first, against the same outputs); the tests a compiler error names
// fail, the rest build again, and a build or run that fails otherwise is
// split in halves until the tests that break it are found. Outputs are compared as ONNX's
// backend runner does (numpy's assert_allclose: rtol 1e-3, atol 1e-7, NaN
// equal to NaN). A test that imports and then differs fails the suite, and
// so does one listed in node_tests_expected.txt that no longer passes.
//
// An int8 or uint8 input (ConvInteger's, MatMulInteger's data) is given at
// run time as float32 through a Cast to its dtype added to the model, where
// the import takes it so. Other inputs of other dtypes than float32 (shapes,
// indices, axes: hybgen compiles for fixed shapes and takes float32 at run
// time), and those 8-bit ones the import refuses so, become initializers holding
// the test's values, so the importer folds them as it folds a model's own
// constants; so does a float32 input the import refuses to take at run time
// (Resize's scales, Pad's constant_value: parameters a real model holds as
// initializers). An int32 output (ConvInteger's, MatMulInteger's) leaves
// through a Cast to FLOAT added to the model, as generated code returns
// float32, and must equal the test's integers exactly; outputs of other
// dtypes than float32 are the importer's to refuse.
//
//   HYBGEN_ONNX_NODE_TESTS=DIR      the node tests' folder (default: Debian's)
//   HYBGEN_ONNX_NODE_ONLY=a,b       only these tests (test_relu,test_conv...)
//   HYBGEN_UPDATE_EXPECTED=1        rewrite node_tests_expected.txt
//   HYBGEN_ONNX_NODE_REPORT=FILE    write the per-op table docs/onnx.md shows
#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "io/file_util.h"
#include "io/npy.h"
#include "io/onnx/onnx_model.h"
#include "io/onnx/onnx_ops.h"
#include "onnx/onnx_builder.h"
#include "ir/error.h"
#include "ir/graph.h"
#include "pipeline.h"
#include "runtime-lite/interpreter.h"
#include "runtime-lite/tensor.h"
#include "targets/target.h"
#include "verify/verify.h"

namespace hybgen {
namespace {

namespace fs = std::filesystem;

// numpy.testing.assert_allclose's defaults in ONNX's backend test runner.
constexpr double kRtol = 1e-3;
constexpr double kAtol = 1e-7;

const char* const kExpectedFile = HYBGEN_SOURCE_DIR "/tests/onnx/node_tests_expected.txt";

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// The node tests' folder: $HYBGEN_ONNX_NODE_TESTS, else where Debian's
// libonnx-testdata puts them; "" when there are none.
std::string node_tests_dir() {
  std::vector<std::string> candidates;
  if (!env("HYBGEN_ONNX_NODE_TESTS").empty()) candidates.push_back(env("HYBGEN_ONNX_NODE_TESTS"));
  candidates.push_back("/usr/share/libonnx-testdata/data/node");
  candidates.push_back("/usr/include/onnx/backend/test/data/node");
  for (const std::string& dir : candidates) {
    std::error_code ec;
    if (fs::is_directory(dir, ec) && fs::exists(fs::path(dir) / "test_abs" / "model.onnx", ec)) return dir;
  }
  return "";
}

std::set<std::string> split_names(const std::string& list) {
  std::set<std::string> names;
  std::istringstream in(list);
  for (std::string name; std::getline(in, name, ',');)
    if (!name.empty()) names.insert(name);
  return names;
}

enum class Status {
  kUnsupported,  // an op without a converter (or of another domain): not counted
  kRefused,      // ops supported, refused by the import (or the runner) up front
  kFailed,       // imported, then generation, the build, the run or the answer failed
  kImported,     // waiting for its run
  kPassed,
};

struct NodeTest {
  std::string name;  // the folder: "test_relu"
  std::string op;    // the op it tests (docs' table)
  std::set<std::string> ops;  // every op type of its model
  std::string dir;
  Status status = Status::kImported;
  std::string reason;  // unsupported ops, the refusal or the failure
  Graph graph;
  std::map<std::string, NpyArray> inputs;  // float32 runtime inputs by graph input name
  std::vector<NpyArray> expected;          // per graph output
  bool folded = false;                     // every input became a constant at import
  std::set<std::size_t> exact;             // int32 outputs (through a Cast): compared without tolerance
  std::vector<std::string> constant_parameters;  // float32 inputs made initializers for the import
};

// The op a test is about (docs' table): the only op type of its model, else
// the op type (of any test's model: `known`) whose name, lower case without
// underscores, the test's name starts with, longest first
// (test_layer_normalization_2d_axis0_expanded: LayerNormalization).
std::string tested_op(const std::string& test, const std::set<std::string>& ops, const std::set<std::string>& known) {
  if (ops.size() == 1) return *ops.begin();
  auto flat = [](const std::string& name) {
    std::string out;
    for (char c : name)
      if (c != '_') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
  };
  const std::string name = flat(test.substr(5));
  std::string best;
  for (const std::string& op : known) {
    const std::string lower = flat(op.substr(op.rfind('.') + 1));
    if (name.compare(0, lower.size(), lower) == 0 && lower.size() > flat(best).size()) best = op;
  }
  return best.empty() ? (ops.empty() ? "?" : *ops.begin()) : best;
}

std::string read_text(const std::string& path) {
  const std::vector<uint8_t> bytes = read_file_bytes(path);
  return std::string(bytes.begin(), bytes.end());
}

// The first element where `actual` is not close to `expected` as numpy's
// assert_allclose sees it (|a - e| <= atol + rtol |e|; NaN equals NaN,
// infinities equal only themselves); "" when all are.
std::string compare(const std::vector<float>& actual, const NpyArray& expected, bool exact = false) {
  if (actual.size() != expected.data.size())
    return std::to_string(actual.size()) + " values, expected " + std::to_string(expected.data.size());
  std::size_t bad = 0, first = 0;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const double a = actual[i], e = expected.data[i];
    bool ok;
    if (std::isnan(e) || std::isnan(a)) ok = std::isnan(e) && std::isnan(a);
    else if (std::isinf(e) || std::isinf(a)) ok = a == e;
    else
      ok = exact ? a == e : std::fabs(a - e) <= kAtol + kRtol * std::fabs(e);
    if (!ok && bad++ == 0) first = i;
  }
  if (bad == 0) return "";
  std::ostringstream s;
  s << bad << " of " << actual.size() << " values differ; first at " << first << ": " << actual[first] << ", expected "
    << expected.data[first];
  return s.str();
}

// Reads, checks and imports one test (status kUnsupported, kRefused, kFailed or kImported).
NodeTest load_test(const std::string& root, const std::string& name) {
  NodeTest t;
  t.name = name;
  t.dir = root + "/" + name;
  const std::string model_path = t.dir + "/model.onnx";
  onnx::ModelProto model;
  std::string bytes;
  try {
    bytes = read_text(model_path);
  } catch (const Error& e) {
    t.status = Status::kRefused;
    t.reason = e.what();
    return t;
  }
  if (!model.ParseFromString(bytes)) {
    t.status = Status::kRefused;
    t.reason = "model.onnx does not parse as a ModelProto";
    return t;
  }
  onnx::GraphProto& g = *model.mutable_graph();
  for (const auto& n : g.node())
    t.ops.insert((n.domain().empty() || n.domain() == "ai.onnx" ? "" : n.domain() + ".") + n.op_type());

  std::set<std::string> missing;
  for (const auto& n : g.node()) {
    const bool default_domain = n.domain().empty() || n.domain() == "ai.onnx";
    if (!default_domain) missing.insert(n.domain() + "." + n.op_type());
    else if (!find_onnx_converter(n.op_type())) missing.insert(n.op_type());
  }
  if (!missing.empty()) {
    t.status = Status::kUnsupported;
    for (const std::string& op : missing) t.reason += (t.reason.empty() ? "" : ", ") + op;
    return t;
  }

  auto refuse = [&](const std::string& why) {
    t.status = Status::kRefused;
    t.reason = why;
    return t;
  };
  std::set<std::string> initializers;
  for (const auto& init : g.initializer()) initializers.insert(init.name());
  std::vector<const onnx::ValueInfoProto*> inputs;
  for (const auto& in : g.input())
    if (!initializers.count(in.name())) inputs.push_back(&in);
  std::vector<std::string> input_names;
  for (const auto* in : inputs) input_names.push_back(in->name());
  const std::string data = t.dir + "/test_data_set_0";

  // Float32 inputs stay runtime inputs (their shapes given, as --shape
  // would); any other becomes an initializer with the test's values.
  OnnxImportOptions options;
  options.name = name;
  options.note = [](const std::string&) {};
  std::vector<onnx::TensorProto> constants;
  std::vector<std::pair<onnx::TensorProto, OnnxTensorFile>> eight_bit;  // int8 and uint8 inputs
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::string path = data + "/input_" + std::to_string(i) + ".pb";
    std::error_code ec;
    if (!fs::exists(path, ec)) return refuse("no data for input " + std::to_string(i) + " (" + inputs[i]->name() + ")");
    OnnxTensorFile values;
    try {
      values = read_onnx_tensor_values(path);
    } catch (const Error& e) {
      return refuse(std::string("input ") + std::to_string(i) + ": " + e.what());
    }
    if (values.dtype == DType::kFloat32) {
      NpyArray a{values.shape, std::vector<float>(values.values.begin(), values.values.end())};
      options.input_shapes[inputs[i]->name()] = values.shape;
      t.inputs[inputs[i]->name()] = std::move(a);
      continue;
    }
    onnx::TensorProto tensor;
    if (!tensor.ParseFromString(read_text(path))) return refuse("input_" + std::to_string(i) + ".pb is not a TensorProto");
    tensor.set_name(inputs[i]->name());
    // ONNX 1.12's data stores BFLOAT16 inputs as UINT16 (the same bits).
    const int32_t declared = inputs[i]->type().tensor_type().elem_type();
    if (declared == onnx::TensorProto::BFLOAT16 && tensor.data_type() == onnx::TensorProto::UINT16)
      tensor.set_data_type(declared);
    if (declared != 0 && tensor.data_type() != declared)
      return refuse("input " + std::to_string(i) + "'s data is " + onnx_dtype_name(tensor.data_type()) +
                    ", the model declares " + onnx_dtype_name(declared));
    if (values.dtype == DType::kInt8 || values.dtype == DType::kUInt8)
      eight_bit.emplace_back(std::move(tensor), std::move(values));
    else
      constants.push_back(std::move(tensor));
  }
  for (auto& c : constants) *g.add_initializer() = std::move(c);

  // An int32 output computed by a node leaves through a Cast to FLOAT.
  for (int i = 0; i < g.output_size(); ++i) {
    auto& type = *g.mutable_output(i)->mutable_type()->mutable_tensor_type();
    const std::string name = g.output(i).name();
    const bool computed = std::any_of(g.node().begin(), g.node().end(), [&](const onnx::NodeProto& n) {
      return std::find(n.output().begin(), n.output().end(), name) != n.output().end();
    });
    if (type.elem_type() != onnx::TensorProto::INT32 || !computed) continue;
    const std::string int32 = name + "/int32";
    for (auto& n : *g.mutable_node()) {
      for (auto& v : *n.mutable_output()) v = v == name ? int32 : v;
      for (auto& v : *n.mutable_input()) v = v == name ? int32 : v;
    }
    auto& cast = *g.add_node();
    cast.set_op_type("Cast");
    cast.set_name(name + "/as_float");
    cast.add_input(int32);
    cast.add_output(name);
    testing_onnx::OnnxBuilder::attr(cast, "to", int64_t{onnx::TensorProto::FLOAT});
    type.set_elem_type(onnx::TensorProto::FLOAT);
    t.exact.insert(static_cast<std::size_t>(i));
  }

  std::vector<DType> output_dtypes;
  for (int i = 0; i < g.output_size(); ++i) {
    const std::string path = data + "/output_" + std::to_string(i) + ".pb";
    OnnxTensorFile values;
    try {
      values = read_onnx_tensor_values(path);
    } catch (const Error& e) {
      return refuse(std::string("output ") + std::to_string(i) + ": " + e.what());
    }
    output_dtypes.push_back(values.dtype);
    t.expected.push_back(NpyArray{values.shape, std::vector<float>(values.values.begin(), values.values.end())});
  }

  // An int8 or uint8 input (ConvInteger's, MatMulInteger's data) is taken
  // at run time where the import takes it so: as float32 values and a Cast
  // to its dtype added to the model. Where the import refuses that, it
  // becomes an initializer as the other integers (below).
  for (const auto& [tensor, values] : eight_bit) {
    const std::string& input = tensor.name();
    const std::string as_integer = input + "/integer";
    for (auto& n : *g.mutable_node())
      for (auto& v : *n.mutable_input()) v = v == input ? as_integer : v;
    for (auto& in : *g.mutable_input())
      if (in.name() == input) in.mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    auto& cast = *g.add_node();
    cast.set_op_type("Cast");
    cast.set_name(input + "/cast");
    cast.add_input(input);
    cast.add_output(as_integer);
    testing_onnx::OnnxBuilder::attr(cast, "to", int64_t{tensor.data_type()});
    for (int k = g.node_size() - 1; k > 0; --k) g.mutable_node()->SwapElements(k, k - 1);  // first: nodes are in order
    options.input_shapes[input] = values.shape;
    t.inputs[input] = NpyArray{values.shape, std::vector<float>(values.values.begin(), values.values.end())};
  }
  // Undoes the runtime form of eight_bit's element `e`: an initializer instead.
  auto eight_bit_as_initializer = [&](std::size_t e) {
    const onnx::TensorProto& tensor = eight_bit[e].first;
    const std::string& name = tensor.name();
    for (int k = 0; k < g.node_size(); ++k)
      if (g.node(k).name() == name + "/cast") g.mutable_node()->DeleteSubrange(k, 1);
    for (auto& n : *g.mutable_node())
      for (auto& v : *n.mutable_input()) v = v == name + "/integer" ? name : v;
    *g.add_initializer() = tensor;
    t.inputs.erase(name);
    options.input_shapes.erase(name);
    eight_bit.erase(eight_bit.begin() + static_cast<std::ptrdiff_t>(e));
  };
  auto eight_bit_as_initializers = [&]() {
    if (eight_bit.empty()) return false;
    while (!eight_bit.empty()) eight_bit_as_initializer(0);
    return true;
  };

  // A float32 input the import wants constant (Resize's scales, Pad's
  // constant_value: parameters a real model holds as initializers) becomes
  // one too, and the import runs again.
  auto make_constant = [&](const std::string& message) {
    const std::string mark = "') must be a constant known at import";
    const std::size_t end = message.find(mark);
    if (end == std::string::npos) return false;
    const std::size_t begin = message.rfind("('", end);
    if (begin == std::string::npos) return false;
    const std::string input = message.substr(begin + 2, end - begin - 2);
    for (std::size_t e = 0; e < eight_bit.size(); ++e) {  // an 8-bit input: an initializer instead
      if (input != eight_bit[e].first.name() + "/integer") continue;
      eight_bit_as_initializer(e);
      return true;
    }
    for (std::size_t i = 0; i < input_names.size(); ++i) {
      if (input_names[i] != input || !t.inputs.count(input)) continue;
      onnx::TensorProto tensor;
      if (!tensor.ParseFromString(read_text(data + "/input_" + std::to_string(i) + ".pb"))) return false;
      tensor.set_name(input);
      *g.add_initializer() = std::move(tensor);
      t.inputs.erase(input);
      options.input_shapes.erase(input);
      t.constant_parameters.push_back(input);
      return true;
    }
    return false;
  };
  try {
    for (;;) {
      std::string modified;
      model.SerializeToString(&modified);
      try {
        t.graph = import_onnx_bytes(modified, model_path, t.dir, options);
        break;
      } catch (const Error& e) {
        if (!make_constant(e.what()) && !eight_bit_as_initializers()) throw;
      }
    }
    t.folded = t.inputs.empty();
  } catch (const Error& e) {
    return refuse(e.what());
  } catch (const std::exception& e) {
    t.status = Status::kFailed;
    t.reason = std::string("the import threw something else than hybgen::Error: ") + e.what();
    return t;
  }

  // From here on a problem is a failure: the import accepted the model.
  auto fail = [&](const std::string& why) {
    t.status = Status::kFailed;
    t.reason = why;
    return t;
  };
  for (std::size_t i = 0; i < output_dtypes.size(); ++i)
    if (output_dtypes[i] != DType::kFloat32 && !(t.exact.count(i) && output_dtypes[i] == DType::kInt32))
      return fail("output " + std::to_string(i) + " is " + onnx_dtype_name(output_dtypes[i]) +
                  ", yet the import took it for float32");
  if (t.graph.outputs.size() != t.expected.size())
    return fail(std::to_string(t.graph.outputs.size()) + " outputs imported, the test has " +
                std::to_string(t.expected.size()));
  try {
    const CompiledGraph compiled = compile_graph(t.graph);
    for (std::size_t i = 0; i < t.expected.size(); ++i) {
      const Shape& shape = compiled.graph.type(compiled.graph.outputs[i]).shape;
      if (shape != t.expected[i].shape)
        return fail("output " + std::to_string(i) + " has shape " + shape_str(shape) + ", the test expects " +
                    shape_str(t.expected[i].shape));
      if (t.expected[i].data.empty()) return fail("output " + std::to_string(i) + " has no elements");
    }
  } catch (const std::exception& e) {
    return fail(std::string("generation failed: ") + e.what());
  }
  // The reference interpreter (what eager code runs) first: cheap, and a
  // test that fails there costs the merged build nothing.
  try {
    Interpreter interpreter(t.graph);
    std::map<std::string, Tensor> inputs;
    for (const auto& [in, array] : t.inputs) inputs[in] = Tensor::from_vector(array.shape, array.data);
    const std::vector<Tensor> outputs = interpreter.run(inputs);
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      const std::string diff = compare(outputs[i].to_vector(), t.expected[i], t.exact.count(i) != 0);
      if (!diff.empty()) return fail("the reference interpreter's output " + std::to_string(i) + ": " + diff);
    }
  } catch (const std::exception& e) {
    return fail(std::string("the reference interpreter failed: ") + e.what());
  }
  return t;
}

// Every test of the folder (those named in `only`, when not empty).
std::vector<NodeTest> load_tests(const std::string& root, const std::set<std::string>& only) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(root))
    if (entry.is_directory()) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  std::vector<NodeTest> loaded;
  for (const std::string& name : names)
    if (only.empty() || only.count(name)) loaded.push_back(load_test(root, name));
  std::set<std::string> known;
  for (const NodeTest& t : loaded) known.insert(t.ops.begin(), t.ops.end());
  for (NodeTest& t : loaded) t.op = tested_op(t.name, t.ops, known);
  return loaded;
}

// The installed tests (HYBGEN_ONNX_NODE_ONLY's when set), loaded once for all targets.
const std::vector<NodeTest>& all_tests(const std::string& root) {
  static const std::vector<NodeTest> tests = load_tests(root, split_names(env("HYBGEN_ONNX_NODE_ONLY")));
  return tests;
}

// `graph`'s values and nodes under `prefix`, added to `into`.
void add_prefixed(const Graph& graph, const std::string& prefix, Graph* into) {
  auto p = [&](const std::string& v) { return v.empty() ? v : prefix + v; };
  for (const std::string& in : graph.inputs) into->add_input(p(in), graph.type(in));
  for (const auto& [name, constant] : graph.constants) into->add_constant(p(name), constant);
  for (const auto& [name, type] : graph.types)
    if (!into->types.count(p(name))) into->types[p(name)] = type;
  for (const Node& node : graph.nodes) {
    Node n = node;
    n.name = p(n.name);
    for (auto& v : n.inputs) v = p(v);
    for (auto& v : n.outputs) v = p(v);
    into->nodes.push_back(std::move(n));
  }
  for (const std::string& out : graph.outputs) into->outputs.push_back(p(out));
}

std::string prefix_of(std::size_t index) { return "t" + std::to_string(index) + "/"; }

std::vector<float> read_floats(const std::string& path) {
  const std::vector<uint8_t> bytes = read_file_bytes(path);
  std::vector<float> v(bytes.size() / sizeof(float));
  std::memcpy(v.data(), bytes.data(), v.size() * sizeof(float));
  return v;
}


// Generates, builds and runs `group` (indices into `tests`) as one graph for
// `target`; on a build or run that fails, the halves again, down to the tests
// that fail alone. Results by test index.
void run_group(const std::vector<NodeTest>& tests, const std::vector<std::size_t>& group, const std::string& target,
               std::map<std::size_t, std::string>* failures, int* builds) {
  if (group.empty()) return;
  Graph merged;
  merged.name = "node_tests";
  VerifyOptions options;
  options.cxx = HYBGEN_CXX;
  options.compile.target = find_target(target);
  options.keep_build = true;
  options.tolerance = INFINITY;  // compared with the tests' outputs below
  std::vector<std::pair<std::size_t, std::size_t>> output_of;  // merged output -> (test, its output)
  for (std::size_t i : group) {
    const NodeTest& t = tests[i];
    add_prefixed(t.graph, prefix_of(i), &merged);
    for (const auto& [name, array] : t.inputs) options.inputs[prefix_of(i) + name] = array;
    for (std::size_t o = 0; o < t.graph.outputs.size(); ++o) output_of.emplace_back(i, o);
  }
  VerifyReport report;
  try {
    ++*builds;
    report = verify_model(merged, options);
  } catch (const std::exception& e) {
    if (group.size() == 1) {
      (*failures)[group[0]] = std::string("build or run failed: ") + e.what();
      return;
    }
    // A compiler's errors name the generated variables, which start with
    // their test's prefix ("t12_..."): those tests fail, the others build again.
    const std::string what = e.what();
    std::set<std::size_t> named;
    const std::set<std::size_t> members(group.begin(), group.end());
    for (std::size_t at = what.find("error: "); at != std::string::npos; at = what.find("error: ", at + 1)) {
      const std::string line = what.substr(at, what.find('\n', at) - at);
      for (std::size_t p = line.find('t'); p != std::string::npos; p = line.find('t', p + 1)) {
        if (p > 0 && (std::isalnum(static_cast<unsigned char>(line[p - 1])) || line[p - 1] == '_')) continue;
        std::size_t end = p + 1;
        while (end < line.size() && std::isdigit(static_cast<unsigned char>(line[end]))) ++end;
        if (end == p + 1 || end >= line.size() || line[end] != '_') continue;
        const std::size_t index = std::stoul(line.substr(p + 1, end - p - 1));
        if (members.count(index)) named.insert(index);
      }
    }
    if (!named.empty()) {
      std::vector<std::size_t> rest;
      for (std::size_t i : group) {
        if (!named.count(i)) {
          rest.push_back(i);
          continue;
        }
        std::string lines;  // the compiler's errors about this test
        for (std::size_t at = what.find("error: "); at != std::string::npos; at = what.find("error: ", at + 1)) {
          const std::string line = what.substr(at, what.find('\n', at) - at);
          if (line.find(prefix_of(i).substr(0, prefix_of(i).size() - 1) + "_") != std::string::npos)
            lines += "\n  " + line;
        }
        (*failures)[i] = "the generated code did not compile:" + lines;
      }
      return run_group(tests, rest, target, failures, builds);
    }
    const auto half = group.begin() + static_cast<std::ptrdiff_t>(group.size() / 2);
    run_group(tests, std::vector<std::size_t>(group.begin(), half), target, failures, builds);
    run_group(tests, std::vector<std::size_t>(half, group.end()), target, failures, builds);
    return;
  }
  for (std::size_t k = 0; k < output_of.size(); ++k) {
    const auto [i, o] = output_of[k];
    const std::string diff = compare(read_floats(report.build_dir + "/out_" + std::to_string(k) + ".bin"),
                                     tests[i].expected[o], tests[i].exact.count(o) != 0);
    if (!diff.empty() && !failures->count(i)) (*failures)[i] = "output " + std::to_string(o) + ": " + diff;
  }
  std::error_code ec;
  fs::remove_all(report.build_dir, ec);
}

// Runs the imported tests for `target`: each becomes kPassed or kFailed.
// Returns the number of builds it took.
int run_tests(std::vector<NodeTest>* tests, const std::string& target) {
  std::vector<std::size_t> imported;
  for (std::size_t i = 0; i < tests->size(); ++i)
    if ((*tests)[i].status == Status::kImported) imported.push_back(i);
  std::map<std::size_t, std::string> failures;
  int builds = 0;
  run_group(*tests, imported, target, &failures, &builds);
  for (std::size_t i : imported) {
    auto f = failures.find(i);
    (*tests)[i].status = f == failures.end() ? Status::kPassed : Status::kFailed;
    if (f != failures.end()) (*tests)[i].reason = f->second;
  }
  return builds;
}

std::set<std::string> read_expected() {
  std::set<std::string> names;
  std::ifstream in(kExpectedFile);
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') names.insert(line);
  return names;
}

// A refusal's message shortened for a table: what follows the file and the
// node's label, its first line; every output dtype refusal as one.
std::string short_reason(const std::string& reason) {
  std::string why = reason;
  const std::size_t file = why.find("model.onnx: ");
  if (file != std::string::npos) why = why.substr(file + 12);
  if (why.find(" before conversion") != std::string::npos && why.find('\n') != std::string::npos)
    why = why.substr(why.find('\n') + 1);
  why = why.substr(0, why.find('\n'));
  const std::size_t node = why.find("): ");
  if (why.compare(0, 5, "  nod") == 0 || why.compare(0, 5, "node ") == 0) why = why.substr(node == std::string::npos ? 0 : node + 3);
  if (why.find(".pb: ") != std::string::npos) why = why.substr(why.find(".pb: ") + 5);
  if (why.compare(0, 13, "graph output ") == 0 && why.find("float32 outputs only") != std::string::npos)
    return "an output is not float32";
  return why;
}

// Per op: tests passed, refused (with why), failed; docs/onnx.md's table.
void write_report(const std::vector<NodeTest>& tests, const std::string& path) {
  struct Row {
    int passed = 0, refused = 0, failed = 0, unsupported = 0, folded = 0;
    std::map<std::string, std::vector<std::string>> why;  // reason -> tests
  };
  std::map<std::string, Row> rows;
  int passed = 0, refused = 0, failed = 0, unsupported = 0;
  std::map<std::string, int> without;  // ops without a converter -> tests
  for (const NodeTest& t : tests) {
    Row& r = rows[t.op];
    switch (t.status) {
      case Status::kPassed:
        ++r.passed, ++passed;
        r.folded += t.folded;
        break;
      case Status::kRefused:
        ++r.refused, ++refused;
        r.why[short_reason(t.reason)].push_back(t.name);
        break;
      case Status::kUnsupported:
        ++r.unsupported, ++unsupported;
        for (std::size_t at = 0; at < t.reason.size();) {
          const std::size_t end = std::min(t.reason.find(", ", at), t.reason.size());
          ++without[t.reason.substr(at, end - at)];
          at = end + 2;
        }
        break;
      default:
        ++r.failed, ++failed;
    }
  }
  std::ofstream out(path);
  out << passed << " passed of " << passed + refused + failed << " with supported ops, " << refused
      << " refused up front, " << failed << " wrong; " << unsupported << " more use ops without a converter.\n\n";
  out << "| op | passed | refused up front, and why | wrong |\n|---|---|---|---|\n";
  for (const auto& [op, r] : rows) {
    if (r.passed + r.refused + r.failed == 0) continue;
    out << "| " << op << " | " << r.passed << (r.folded ? " (" + std::to_string(r.folded) + " at import)" : "") << " | "
        << r.refused;
    for (const auto& [why, names] : r.why) {
      out << (why == r.why.begin()->first ? ": " : "; ") << why << " (";
      for (std::size_t i = 0; i < names.size(); ++i) out << (i ? ", " : "") << names[i].substr(5);
      out << ")";
    }
    out << " | " << r.failed << " |\n";
  }
  out << "\nOps without a converter (tests using them): ";
  bool first = true;
  for (const auto& [op, n] : without) {
    out << (first ? "" : ", ") << op << " " << n;
    first = false;
  }
  out << ".\n";
}

void check_node_tests(const std::string& target) {
  const std::string root = node_tests_dir();
  if (root.empty()) GTEST_SKIP() << "ONNX's backend node tests are not installed (Debian: libonnx-testdata)";
  std::vector<NodeTest> tests = all_tests(root);  // statuses of this target's run
  const int builds = run_tests(&tests, target);

  int passed = 0, refused = 0, failed = 0, unsupported = 0;
  std::set<std::string> passing;
  for (const NodeTest& t : tests) {
    switch (t.status) {
      case Status::kPassed:
        ++passed;
        passing.insert(t.name);
        break;
      case Status::kRefused:
        ++refused;
        break;
      case Status::kUnsupported:
        ++unsupported;
        break;
      default:
        ++failed;
        ADD_FAILURE() << t.name << " (" << t.op << ") on " << target << ": " << t.reason;
    }
  }
  std::cout << "[ NOTE     ] " << target << ": " << passed << " passed of " << passed + refused + failed
            << " with supported ops, " << refused << " refused up front, " << failed << " wrong; " << unsupported
            << " use ops without a converter (" << builds << " builds)\n";

  const bool all = env("HYBGEN_ONNX_NODE_ONLY").empty();
  const std::set<std::string> expected = read_expected();
  std::vector<std::string> newly;
  for (const std::string& name : passing)
    if (!expected.count(name)) newly.push_back(name);
  for (const std::string& name : expected) {
    if (passing.count(name)) continue;
    auto t = std::find_if(tests.begin(), tests.end(), [&](const NodeTest& n) { return n.name == name; });
    if (t == tests.end()) {
      if (all) ADD_FAILURE() << name << " is listed in node_tests_expected.txt but is not in " << root;
    } else if (t->status != Status::kFailed) {  // failures are reported above
      ADD_FAILURE() << name << " passed before (node_tests_expected.txt) and now is "
                    << (t->status == Status::kRefused ? "refused: " : "without a converter: ") << t->reason;
    }
  }
  if (!newly.empty())
    std::cout << "[ NOTE     ] passing, not yet in tests/onnx/node_tests_expected.txt (HYBGEN_UPDATE_EXPECTED=1 adds them): "
              << ::testing::PrintToString(newly) << "\n";
  if (all && env("HYBGEN_UPDATE_EXPECTED") == "1") {  // the passing ones; failures still fail
    std::ofstream out(kExpectedFile);
    out << "# ONNX backend node tests that pass on generic and this machine's target\n"
           "# (tests/onnx/onnx_node_tests.cpp; HYBGEN_UPDATE_EXPECTED=1 rewrites this file).\n";
    for (const std::string& name : passing) out << name << "\n";
  }
  if (!env("HYBGEN_ONNX_NODE_REPORT").empty()) write_report(tests, env("HYBGEN_ONNX_NODE_REPORT"));
}

TEST(OnnxNodeTests, PassOrAreRefusedUpFrontOnGeneric) { check_node_tests("generic"); }

TEST(OnnxNodeTests, PassOrAreRefusedUpFrontOnThisMachinesTarget) {
  if (host_target().isa == Isa::kPortable) GTEST_SKIP() << "this machine's best target is the portable one, checked above";
  check_node_tests(host_target().name);
}

// The runner itself, on a folder of three made-up tests: one whose expected
// output is right, one whose expected output is off by 1e-2 (the wrong answer
// the suite must catch), one the import refuses (an INT64 output).
TEST(OnnxNodeTests, TheRunnerCatchesAWrongAnswerAndCountsARefusal) {
  TempDir root("hybgen-node-tests");
  auto write = [](const std::string& path, const google::protobuf::MessageLite& message) {
    std::string bytes;
    message.SerializeToString(&bytes);
    write_file_atomic(path, bytes);
  };
  const std::vector<float> x{-1.5f, 0.25f, 2.0f, -0.0f, 3.5f, -7.0f};
  auto make = [&](const std::string& name, float shift, int32_t output_dtype) {
    const std::string dir = root.path() + "/" + name;
    fs::create_directories(dir + "/test_data_set_0");
    testing_onnx::OnnxBuilder b(13);
    b.input("x", {2, 3});
    b.node("Relu", {"x"}, {"y"});
    b.output("y");
    b.graph().mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(output_dtype);
    write(dir + "/model.onnx", b.model);
    onnx::TensorProto in, out;
    testing_onnx::OnnxBuilder::fill(in, "x", {2, 3}, x);
    std::vector<float> y;
    for (float v : x) y.push_back(std::max(v, 0.0f) + shift);
    testing_onnx::OnnxBuilder::fill(out, "y", {2, 3}, y);
    write(dir + "/test_data_set_0/input_0.pb", in);
    write(dir + "/test_data_set_0/output_0.pb", out);
  };
  make("test_relu_right", 0.0f, onnx::TensorProto::FLOAT);
  make("test_relu_wrong", 1e-2f, onnx::TensorProto::FLOAT);
  make("test_relu_int64", 0.0f, onnx::TensorProto::INT64);
  std::vector<NodeTest> tests = load_tests(root.path(), {});
  ASSERT_EQ(tests.size(), 3u);
  // The reference interpreter already sees the wrong answer; the generated
  // code is checked on the two others' run.
  EXPECT_EQ(tests[0].name, "test_relu_int64");
  EXPECT_EQ(tests[0].status, Status::kRefused) << tests[0].reason;
  EXPECT_NE(tests[0].reason.find("INT64"), std::string::npos) << tests[0].reason;
  EXPECT_EQ(tests[2].name, "test_relu_wrong");
  EXPECT_EQ(tests[2].status, Status::kFailed) << tests[2].reason;
  // The same wrong expectation reaching the generated code.
  tests[2].status = Status::kImported;
  run_tests(&tests, "generic");
  EXPECT_EQ(tests[1].status, Status::kPassed) << tests[1].reason;
  EXPECT_EQ(tests[2].status, Status::kFailed);
  EXPECT_NE(tests[2].reason.find("6 of 6 values differ"), std::string::npos) << tests[2].reason;
}

}  // namespace
}  // namespace hybgen
