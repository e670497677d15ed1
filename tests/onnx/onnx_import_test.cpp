// The ONNX reader: file format, initializers (raw and typed, external data),
// inputs and symbolic dims, Constant nodes, import-time shape computation,
// refusals listed at once, and hostile input.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "io/onnx/onnx_model.h"
#include "ir/error.h"
#include "onnx/onnx_builder.h"

namespace hybgen {
namespace {

namespace fs = std::filesystem;
using testing_onnx::expect_near;
using testing_onnx::import_error;
using testing_onnx::OnnxBuilder;
using testing_onnx::run_graph;
using testing_onnx::seeded;
using testing_onnx::values;

// A fresh folder under the system temp folder, removed at the end.
struct TempFolder {
  fs::path path;
  TempFolder() {
    path = fs::temp_directory_path() / ("hybgen-onnx-test-" + std::to_string(std::random_device{}()));
    fs::create_directories(path);
  }
  ~TempFolder() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

void write(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary) << bytes;
}

TEST(OnnxImport, ReluRunsThroughTheInterpreter) {
  OnnxBuilder b;
  b.input("x", {2, 3});
  b.node("Relu", {"x"}, {"y"});
  b.output("y");
  const Graph g = b.import();
  ASSERT_EQ(g.inputs, std::vector<std::string>{"x"});
  ASSERT_EQ(g.outputs, std::vector<std::string>{"y"});
  auto out = run_graph(g, {{"x", Tensor::from_vector({2, 3}, {-1, 2, -3, 4, 0, 6})}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(values(out[0]), (std::vector<float>{0, 2, 0, 4, 0, 6}));
}

// A 3x3 convolution with bias, relu, global average pool and Gemm; weights in
// raw_data or in the typed fields give the same graph.
OnnxBuilder small_conv_net(bool raw) {
  OnnxBuilder b(13);
  b.input("image", {1, 2, 5, 5});
  b.initializer("w", {3, 2, 3, 3}, seeded(54, 1), raw);
  b.initializer("b", {3}, seeded(3, 2), raw);
  b.initializer("fc_w", {4, 3}, seeded(12, 3), raw);
  b.initializer("fc_b", {4}, seeded(4, 4), raw);
  auto& conv = b.node("Conv", {"image", "w", "b"}, {"c"}, "conv");
  OnnxBuilder::attr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
  OnnxBuilder::attr(conv, "kernel_shape", std::vector<int64_t>{3, 3});
  b.node("Relu", {"c"}, {"r"}, "relu");
  b.node("GlobalAveragePool", {"r"}, {"p"}, "pool");
  b.node("Flatten", {"p"}, {"f"}, "flatten");
  auto& gemm = b.node("Gemm", {"f", "fc_w", "fc_b"}, {"logits"}, "fc");
  OnnxBuilder::attr(gemm, "transB", 1);
  b.output("logits");
  return b;
}

TEST(OnnxImport, RawDataAndTypedFieldsGiveTheSameWeights) {
  const Graph raw = small_conv_net(true).import();
  const Graph typed = small_conv_net(false).import();
  ASSERT_EQ(raw.constants.size(), typed.constants.size());
  for (const auto& [name, c] : raw.constants) {
    ASSERT_TRUE(typed.constants.count(name)) << name;
    EXPECT_EQ(c.data, typed.constants.at(name).data) << name;
  }
  const Tensor x = Tensor::random_uniform({1, 2, 5, 5}, -1, 1, 5);
  EXPECT_EQ(values(run_graph(raw, {{"image", x}})[0]), values(run_graph(typed, {{"image", x}})[0]));
  EXPECT_EQ(raw.outputs, std::vector<std::string>{"logits"});
}

TEST(OnnxImport, ConvNetMatchesAHandComputedReference) {
  const Graph g = small_conv_net(true).import();
  const std::vector<float> x = seeded(50, 9), w = seeded(54, 1), bias = seeded(3, 2), fw = seeded(12, 3), fb = seeded(4, 4);
  std::vector<float> pooled(3, 0.0f);
  for (int f = 0; f < 3; ++f)
    for (int i = 0; i < 5; ++i)
      for (int j = 0; j < 5; ++j) {
        float s = bias[f];
        for (int c = 0; c < 2; ++c)
          for (int ki = 0; ki < 3; ++ki)
            for (int kj = 0; kj < 3; ++kj) {
              const int y = i + ki - 1, xx = j + kj - 1;
              if (y < 0 || y >= 5 || xx < 0 || xx >= 5) continue;
              s += x[(c * 5 + y) * 5 + xx] * w[((f * 2 + c) * 3 + ki) * 3 + kj];
            }
        pooled[f] += std::max(s, 0.0f) / 25.0f;
      }
  std::vector<float> expect(4);
  for (int o = 0; o < 4; ++o) {
    expect[o] = fb[o];
    for (int k = 0; k < 3; ++k) expect[o] += pooled[k] * fw[o * 3 + k];
  }
  expect_near(values(run_graph(g, {{"image", Tensor::from_vector({1, 2, 5, 5}, x)}})[0]), expect);
}

TEST(OnnxImport, ConstantNodesOfEveryForm) {
  OnnxBuilder b(13);
  b.input("x", {2, 2});
  b.constant_f32("t", {2, 2}, {1, 2, 3, 4});
  auto& f = b.node("Constant", {}, {"s"});
  OnnxBuilder::attr(f, "value_float", 0.5f);
  auto& fs_ = b.node("Constant", {}, {"v"});
  OnnxBuilder::attr(fs_, "value_floats", std::vector<float>{10, 20});
  auto& ints = b.node("Constant", {}, {"shape"});
  OnnxBuilder::attr(ints, "value_ints", std::vector<int64_t>{4});
  b.node("Add", {"x", "t"}, {"a"});
  b.node("Mul", {"a", "s"}, {"m"});
  b.node("Add", {"m", "v"}, {"n"});
  b.node("Reshape", {"n", "shape"}, {"y"});
  b.output("y");
  const Graph g = b.import();
  auto out = run_graph(g, {{"x", Tensor::from_vector({2, 2}, {1, 1, 1, 1})}});
  EXPECT_EQ(out[0].shape(), (Shape{4}));
  EXPECT_EQ(values(out[0]), (std::vector<float>{11, 21.5f, 12, 22.5f}));
}

// What torch.onnx.export writes for x.view(x.size(0), -1): Shape, Gather,
// Unsqueeze, Concat, Reshape. All of it is evaluated at import.
TEST(OnnxImport, TorchStyleShapeArithmeticIsFoldedAtImport) {
  for (int64_t opset : {11, 13}) {
    OnnxBuilder b(opset);
    b.input("x", {-1, 2, 3, 2});
    b.node("Shape", {"x"}, {"shape"});
    b.constant_i64("zero", {}, {0});
    auto& gather = b.node("Gather", {"shape", "zero"}, {"batch"});
    OnnxBuilder::attr(gather, "axis", 0);
    if (opset >= 13) {
      b.constant_i64("axes", {1}, {0});
      b.node("Unsqueeze", {"batch", "axes"}, {"batch1"});
    } else {
      auto& u = b.node("Unsqueeze", {"batch"}, {"batch1"});
      OnnxBuilder::attr(u, "axes", std::vector<int64_t>{0});
    }
    b.constant_i64("minus1", {1}, {-1});
    auto& cat = b.node("Concat", {"batch1", "minus1"}, {"target"});
    OnnxBuilder::attr(cat, "axis", 0);
    b.node("Reshape", {"x", "target"}, {"y"});
    b.output("y");
    OnnxImportOptions opt;
    opt.input_shapes["x"] = {3, 2, 3, 2};
    const Graph g = b.import(opt);
    ASSERT_EQ(g.nodes.size(), 1u) << "opset " << opset;
    EXPECT_EQ(g.nodes[0].op, "Reshape");
    EXPECT_EQ(g.type("y").shape, (Shape{3, 12}));
    const Tensor x = Tensor::random_uniform({3, 2, 3, 2}, -1, 1, 3);
    EXPECT_EQ(values(run_graph(g, {{"x", x}})[0]), values(x));
  }
}

TEST(OnnxImport, FoldedIntegerArithmeticSliceAndCast) {
  OnnxBuilder b(13);
  b.input("x", {2, 6});
  b.node("Shape", {"x"}, {"s"});  // [2, 6]
  b.constant_i64("starts", {1}, {1});
  b.constant_i64("ends", {1}, {INT64_MAX});
  b.node("Slice", {"s", "starts", "ends"}, {"last"});  // [6]
  b.constant_i64("two", {1}, {2});
  b.node("Div", {"last", "two"}, {"half"});  // [3]
  auto& cast = b.node("Cast", {"half"}, {"halff"});
  OnnxBuilder::attr(cast, "to", 1);
  auto& cast_back = b.node("Cast", {"halff"}, {"halfi"});
  OnnxBuilder::attr(cast_back, "to", 7);
  b.constant_i64("four", {1}, {4});
  auto& cat = b.node("Concat", {"four", "halfi"}, {"target"});
  OnnxBuilder::attr(cat, "axis", 0);
  b.node("Reshape", {"x", "target"}, {"y"});
  b.output("y");
  const Graph g = b.import();
  EXPECT_EQ(g.type("y").shape, (Shape{4, 3}));
}

// A constant too large to compute at import goes to the runtime form when
// the op has one (the optimizer folds it later), and is an error otherwise.
TEST(OnnxImport, ConstantsTooLargeForImportGoToRunTime) {
  OnnxBuilder b(13);
  b.input("x", {2049, 2049});
  b.initializer("col", {2049, 1}, std::vector<float>(2049, 2.0f));
  b.initializer("row", {1, 2049}, std::vector<float>(2049, 3.0f));
  b.node("Mul", {"col", "row"}, {"big"});  // 2049 x 2049 elements
  b.node("Add", {"x", "big"}, {"y"});
  b.output("y");
  const Graph g = b.import();
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[0].op, "broadcast_mul");

  OnnxBuilder r(13);
  r.input("x", {4});
  r.initializer_i64("start", {}, {0});
  r.initializer_i64("limit", {}, {int64_t{1} << 40});
  r.initializer_i64("delta", {}, {1});
  r.node("Range", {"start", "limit", "delta"}, {"n"}, "range");
  r.node("Add", {"x", "n"}, {"y"});
  r.output("y");
  EXPECT_NE(import_error(r).find("node 'range' (Range): the range is too long to compute at import"), std::string::npos)
      << import_error(r);
}

TEST(OnnxImport, ReshapeZeroCopiesADimAndMinusOneIsInferred) {
  OnnxBuilder b(13);
  b.input("x", {2, 3, 4});
  b.initializer_i64("shape", {3}, {0, -1, 2});
  b.node("Reshape", {"x", "shape"}, {"y"});
  b.output("y");
  EXPECT_EQ(b.import().type("y").shape, (Shape{2, 6, 2}));
}

TEST(OnnxImport, SymbolicDimsNeedAShape) {
  OnnxBuilder b(13);
  b.input("input", {-1, 3});
  b.node("Relu", {"input"}, {"y"});
  b.output("y");
  const std::string e = import_error(b);
  EXPECT_NE(e.find("input 'input': dimension 0 of 2 is symbolic ('N')"), std::string::npos) << e;
  EXPECT_NE(e.find("--shape input="), std::string::npos) << e;

  OnnxImportOptions opt;
  opt.input_shapes["input"] = {5, 3};
  EXPECT_EQ(b.import(opt).type("y").shape, (Shape{5, 3}));

  opt.input_shapes["input"] = {5, 4};
  EXPECT_NE(import_error(b, opt).find("dimension 1 is 3 in the model; --shape gives (5, 4)"), std::string::npos);
  opt.input_shapes["input"] = {5, 3, 1};
  EXPECT_NE(import_error(b, opt).find("has rank 2 in the model"), std::string::npos);
  opt.input_shapes = {{"input", {5, 3}}, {"other", {1}}};
  EXPECT_NE(import_error(b, opt).find("--shape names 'other', which is not a runtime input"), std::string::npos);
}

TEST(OnnxImport, AnInputWithoutAShapeNeedsOne) {
  OnnxBuilder b(13);
  b.input("x", {}, 1, /*shape_known=*/false);
  b.node("Relu", {"x"}, {"y"});
  b.output("y");
  EXPECT_NE(import_error(b).find("input 'x' has no shape in the model: pass --shape x="), std::string::npos);
}

TEST(OnnxImport, NonFloatInputsAreRefusedByName) {
  OnnxBuilder b(13);
  b.input("ids", {4}, /*INT64*/ 7);
  b.node("Relu", {"ids"}, {"y"});
  b.output("y");
  EXPECT_NE(import_error(b).find("input 'ids' has dtype INT64; hybgen's generated code takes float32 inputs only"),
            std::string::npos);
  // The same input given as a constant is no runtime input; a model left
  // without any is refused.
  OnnxImportOptions opt;
  opt.constant_inputs["ids"] = OnnxConst::of_ints({4}, {1, -2, 3, -4});
  EXPECT_NE(import_error(b, opt).find("the model has no runtime inputs"), std::string::npos) << import_error(b, opt);
  OnnxBuilder two(13);
  two.input("ids", {4}, /*INT64*/ 7);
  two.input("x", {4});
  two.node("Cast", {"ids"}, {"f"});
  OnnxBuilder::attr(two.graph().mutable_node(0)[0], "to", 1);
  two.node("Add", {"x", "f"}, {"y"});
  two.output("y");
  const Graph g = two.import(opt);
  EXPECT_EQ(g.inputs, std::vector<std::string>{"x"});
  EXPECT_EQ(std::vector<float>(g.constants.begin()->second.f32_data(), g.constants.begin()->second.f32_data() + 4),
            (std::vector<float>{1, -2, 3, -4}));
}

TEST(OnnxImport, EveryUnsupportedOpAndAttributeIsListedAtOnce) {
  OnnxBuilder b(13);
  b.input("x", {1, 1, 8, 8});
  b.initializer("w", {1, 1, 3, 3}, seeded(9, 1));
  b.node("Frobnicate", {"x"}, {"a"}, "first\nline");
  b.node("Frobnicate", {"a"}, {"b"}, "second");
  auto& conv = b.node("Conv", {"b", "w"}, {"c"}, "conv_same");
  OnnxBuilder::attr(conv, "auto_pad", "SAME_MIDDLE");
  auto& pool = b.node("MaxPool", {"c"}, {"d"}, "pool");
  OnnxBuilder::attr(pool, "kernel_shape", std::vector<int64_t>{2, 2});
  OnnxBuilder::attr(pool, "wobble", 3);
  auto& ml = b.node("LabelEncoder", {"d"}, {"e"}, "encoder");
  ml.set_domain("ai.onnx.ml");
  b.node("Einsum", {"e"}, {"y"}, "es");
  b.output("y");
  const std::string e = import_error(b);
  EXPECT_NE(e.find("5 problems before conversion"), std::string::npos) << e;
  EXPECT_NE(e.find("unsupported op Frobnicate (2 nodes: 'first\\nline', 'second')"), std::string::npos) << e;
  EXPECT_NE(e.find("unsupported op ai.onnx.ml.LabelEncoder (1 node: 'encoder')"), std::string::npos) << e;
  EXPECT_NE(e.find("unsupported op Einsum"), std::string::npos) << e;
  EXPECT_NE(e.find("node 'conv_same' (Conv): attribute 'auto_pad' = 'SAME_MIDDLE'"), std::string::npos) << e;
  EXPECT_NE(e.find("node 'pool' (MaxPool): attribute 'wobble' = 3 is not supported"), std::string::npos) << e;
}

TEST(OnnxImport, AnAttributeNoConverterReadsIsAnError) {
  OnnxBuilder b(13);
  b.input("x", {2});
  auto& n = b.node("Relu", {"x"}, {"y"}, "r");
  OnnxBuilder::attr(n, "mystery", 1);
  b.output("y");
  EXPECT_NE(import_error(b).find("node 'r' (Relu): attribute 'mystery' = 1 is not supported"), std::string::npos);
}

TEST(OnnxImport, OpsetsOutsideTheSupportedRangeAreRefused) {
  for (int64_t opset : {6, 99}) {
    OnnxBuilder b(opset);
    b.input("x", {2});
    b.node("Relu", {"x"}, {"y"});
    b.output("y");
    EXPECT_NE(import_error(b).find("opset " + std::to_string(opset) + " of the default domain is not supported"),
              std::string::npos);
  }
}

TEST(OnnxImport, TruncatedAndForeignFilesAreClearErrors) {
  const std::string bytes = small_conv_net(true).bytes();
  for (std::size_t cut : {bytes.size() / 2, bytes.size() - 3, std::size_t{5}}) {
    try {
      import_onnx_bytes(bytes.substr(0, cut), "cut.onnx", "", {});
      ADD_FAILURE() << "cut at " << cut << " imported";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("cut.onnx: "), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(import_onnx_bytes("{\"format\": \"hybgen-graph\"}", "m.json", "", {}), Error);
  EXPECT_TRUE(looks_like_onnx_bytes(bytes));
  EXPECT_FALSE(looks_like_onnx_bytes("{\"nodes\": []}"));
  EXPECT_FALSE(looks_like_onnx_bytes(""));
  TempFolder dir;
  write(dir.path / "m.onnx", bytes);
  write(dir.path / "m.json", "{\"nodes\": []}");
  EXPECT_TRUE(looks_like_onnx((dir.path / "m.onnx").string()));
  EXPECT_FALSE(looks_like_onnx((dir.path / "m.json").string()));
  EXPECT_FALSE(looks_like_onnx((dir.path / "missing.onnx").string()));
  EXPECT_FALSE(looks_like_onnx(dir.path.string()));
}

TEST(OnnxImport, HugeClaimedShapesAndShortDataAreRefusedBeforeAllocating) {
  OnnxBuilder b(13);
  b.input("x", {2});
  auto& t = b.initializer("big", {1}, {1.0f});
  t.clear_dims();
  t.add_dims(int64_t{1} << 40);
  t.add_dims(int64_t{1} << 40);
  b.node("Add", {"x", "big"}, {"y"});
  b.output("y");
  EXPECT_NE(import_error(b).find("initializer 'big'"), std::string::npos);

  OnnxBuilder s(13);
  s.input("x", {4});
  s.initializer("w", {4}, {1, 2, 3});
  s.node("Add", {"x", "w"}, {"y"});
  s.output("y");
  EXPECT_NE(import_error(s).find("has 12 data bytes, expected 16"), std::string::npos) << import_error(s);
}

// External data: a weights file next to the model; anything else refused.
TEST(OnnxImport, ExternalDataNextToTheModelAndNowhereElse) {
  TempFolder dir;
  std::vector<float> w = {1, 2, 3, 4};
  std::string blob(8, 'x');  // an offset before the tensor
  blob.append(reinterpret_cast<const char*>(w.data()), 16);
  write(dir.path / "weights.bin", blob);

  auto model = [&](const std::string& location, const std::string& offset, const std::string& length) {
    OnnxBuilder b(13);
    b.input("x", {4});
    auto& t = b.initializer("w", {4}, {});
    t.clear_raw_data();
    t.set_data_location(onnx::TensorProto::EXTERNAL);
    auto add = [&](const char* k, const std::string& v) {
      if (v.empty()) return;
      auto* e = t.add_external_data();
      e->set_key(k);
      e->set_value(v);
    };
    add("location", location);
    add("offset", offset);
    add("length", length);
    b.node("Add", {"x", "w"}, {"y"});
    b.output("y");
    return b;
  };
  const std::string d = dir.path.string();
  const Graph g = model("weights.bin", "8", "16").import({}, d);
  EXPECT_EQ(values(run_graph(g, {{"x", Tensor::from_vector({4}, {1, 1, 1, 1})}})[0]), (std::vector<float>{2, 3, 4, 5}));
  // From a file: the folder is the model's.
  write(dir.path / "m.onnx", model("weights.bin", "8", "").bytes());
  EXPECT_EQ(import_onnx((dir.path / "m.onnx").string(), {}).constants.size(), 1u);

  fs::create_directories(dir.path / "inner");
  write(dir.path / "outside.bin", blob);
  fs::create_symlink(dir.path / "outside.bin", dir.path / "inner" / "link.bin");
  EXPECT_NE(import_error(model("../outside.bin", "8", "16"), {}, (dir.path / "inner").string()).find("leaves the model's folder"), std::string::npos);
  EXPECT_NE(import_error(model((dir.path / "weights.bin").string(), "8", "16"), {}, d).find("is an absolute path"), std::string::npos);
  EXPECT_NE(import_error(model("link.bin", "8", "16"), {}, (dir.path / "inner").string()).find("resolves outside the model's folder"),
            std::string::npos);
  EXPECT_NE(import_error(model("weights.bin", "16", "16"), {}, d).find("holds 8 bytes from offset 16, the tensor claims 16"),
            std::string::npos);
  EXPECT_NE(import_error(model("weights.bin", "100", ""), {}, d).find("offset 100 is past the end"), std::string::npos);
  EXPECT_NE(import_error(model("weights.bin", "-1", ""), {}, d).find("is not a non-negative integer"), std::string::npos);
  EXPECT_NE(import_error(model("missing.bin", "", ""), {}, d).find("cannot be opened"), std::string::npos);
  EXPECT_NE(import_error(model("weights.bin", "8", "16"), {}, "").find("cannot be read here"), std::string::npos);
}

TEST(OnnxImport, GraphOutputsKeepTheirNamesAndAPassThroughGetsACopy) {
  OnnxBuilder b(13);
  b.input("x", {3});
  b.node("Identity", {"x"}, {"same"});
  b.node("Relu", {"x"}, {"r"});
  b.output("same");
  b.output("r");
  b.output("x");
  const Graph g = b.import();
  ASSERT_EQ(g.outputs.size(), 3u);
  EXPECT_EQ(g.outputs[1], "r");
  auto out = run_graph(g, {{"x", Tensor::from_vector({3}, {-1, 0, 1})}});
  EXPECT_EQ(values(out[0]), (std::vector<float>{-1, 0, 1}));
  EXPECT_EQ(values(out[1]), (std::vector<float>{0, 0, 1}));
  EXPECT_EQ(values(out[2]), (std::vector<float>{-1, 0, 1}));
}

TEST(OnnxImport, TensorFilesReadAsFloats) {
  TempFolder dir;
  onnx::TensorProto t;
  OnnxBuilder::fill_i64(t, "ids", {3}, {1, -2, 3}, false);
  write(dir.path / "t.pb", t.SerializeAsString());
  const Constant c = read_onnx_tensor_file((dir.path / "t.pb").string());
  EXPECT_EQ(c.type.shape, (Shape{3}));
  EXPECT_EQ(std::vector<float>(c.f32_data(), c.f32_data() + 3), (std::vector<float>{1, -2, 3}));
  const OnnxTensorFile v = read_onnx_tensor_values((dir.path / "t.pb").string());
  EXPECT_EQ(v.name, "ids");
  EXPECT_EQ(v.dtype, DType::kInt64);
  write(dir.path / "bad.pb", "\xff\xff\xff");
  EXPECT_THROW(read_onnx_tensor_file((dir.path / "bad.pb").string()), Error);
}

}  // namespace
}  // namespace hybgen
