// safetensors: exact round trips, a deterministic aligned writer, the float
// dtypes read, and one test per kind of untrusted input the reader rejects.
#include <gtest/gtest.h>

#include "error_matchers.h"
#include "graph_builders.h"

#include <cstring>

#include <nlohmann/json.hpp>

#include "io/file_util.h"
#include "io/safetensors.h"
#include "ir/error.h"

namespace hybgen {
namespace {

using testing::error_of;

const std::string kSource = "x.safetensors";

std::map<std::string, Constant> sample() {
  return {{"fc_weight", Constant::f32({3, 4}, testing::seeded_values(12, 1))},
          {"bias", Constant::f32({3}, testing::seeded_values(3, 2))},
          {"empty", Constant::f32({0, 5}, {})},
          {"scalar", Constant::f32({}, {42.0f})}};
}

uint64_t header_length(const std::vector<uint8_t>& bytes) {
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | bytes[i];
  return n;
}

nlohmann::json header_of(const std::vector<uint8_t>& bytes) {
  const auto n = static_cast<long>(header_length(bytes));
  return nlohmann::json::parse(bytes.begin() + 8, bytes.begin() + 8 + n);
}

// A file with the given header text followed by `data` bytes.
std::vector<uint8_t> file_with(const std::string& header, const std::vector<uint8_t>& data) {
  std::vector<uint8_t> bytes;
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<uint8_t>(header.size() >> (8 * i)));
  bytes.insert(bytes.end(), header.begin(), header.end());
  bytes.insert(bytes.end(), data.begin(), data.end());
  return bytes;
}

std::vector<uint8_t> zeros(std::size_t n) { return std::vector<uint8_t>(n, 0); }

// The reader's message for these bytes: it must name the source first.
std::string rejection(const std::vector<uint8_t>& bytes) {
  const std::string message = error_of([&] { parse_safetensors(bytes, kSource); });
  EXPECT_EQ(message.rfind(kSource + ": ", 0), 0u) << message;
  return message;
}

#define EXPECT_REJECTED(bytes, text) EXPECT_NE(rejection(bytes).find(text), std::string::npos) << rejection(bytes)

TEST(Safetensors, RoundTripKeepsShapesAndExactValues) {
  const auto back = parse_safetensors(serialize_safetensors(sample()), kSource);
  ASSERT_EQ(back.size(), 4u);
  for (const auto& [name, c] : sample()) {
    EXPECT_EQ(back.at(name).type, c.type) << name;
    EXPECT_EQ(back.at(name).data, c.data) << name;
  }
}

TEST(Safetensors, FileRoundTrip) {
  TempDir tmp("hybgen-io-test");
  const std::string path = tmp.path() + "/w.safetensors";
  write_safetensors(path, sample(), {{"source", "test"}});
  EXPECT_EQ(read_safetensors(path).at("fc_weight").data, sample().at("fc_weight").data);
}

TEST(Safetensors, WriterIsDeterministicAlignedAndSorted) {
  const auto bytes = serialize_safetensors(sample());
  EXPECT_EQ(bytes, serialize_safetensors(sample()));
  EXPECT_EQ((8 + header_length(bytes)) % 8, 0u);
  const auto header = header_of(bytes);
  EXPECT_FALSE(header.contains("__metadata__"));  // only written when there is some
  // Consecutive offsets in name order, the data buffer exactly filled.
  uint64_t offset = 0;
  for (const std::string name : {"bias", "empty", "fc_weight", "scalar"}) {
    EXPECT_EQ(header[name]["data_offsets"][0].get<uint64_t>(), offset) << name;
    offset = header[name]["data_offsets"][1].get<uint64_t>();
  }
  EXPECT_EQ(8 + header_length(bytes) + offset, bytes.size());
  EXPECT_EQ(header["scalar"]["shape"], nlohmann::json::array());
}

TEST(Safetensors, MetadataIsWrittenWhenGiven) {
  const auto header = header_of(serialize_safetensors(sample(), {{"format", "hybgen"}, {"b", "2"}}));
  EXPECT_EQ(header["__metadata__"], (nlohmann::json{{"b", "2"}, {"format", "hybgen"}}));
  EXPECT_EQ(parse_safetensors(serialize_safetensors(sample(), {{"k", "v"}}), kSource).count("__metadata__"), 0u);
}

TEST(Safetensors, WriterRefusesConstantsWithoutData) {
  Constant no_data;
  no_data.type = TensorType{{2, 2}};
  EXPECT_ERROR(serialize_safetensors({{"w", no_data}}), "tensor 'w' has 0 bytes of data for float32(2, 2)");
}

TEST(Safetensors, ReadsF64F16AndBF16AsFloat32) {
  std::vector<uint8_t> data(8 * 2 + 2 * 2 + 2 * 2);
  const double f64[] = {0.25, -3.5};
  std::memcpy(data.data(), f64, 16);
  const uint8_t f16[] = {0x00, 0x3c, 0x00, 0xc0};   // 1.0, -2.0
  const uint8_t bf16[] = {0x80, 0x3f, 0x40, 0xc0};  // 1.0, -3.0 (top halves of float32)
  std::memcpy(data.data() + 16, f16, 4);
  std::memcpy(data.data() + 20, bf16, 4);
  const auto t = parse_safetensors(file_with(R"({"d":{"dtype":"F64","shape":[2],"data_offsets":[0,16]},)"
                                             R"("h":{"dtype":"F16","shape":[2],"data_offsets":[16,20]},)"
                                             R"("b":{"dtype":"BF16","shape":[2],"data_offsets":[20,24]}})",
                                             data),
                                   kSource);
  EXPECT_EQ(t.at("d").f32_data()[1], -3.5f);
  EXPECT_EQ(t.at("d").type.dtype, DType::kFloat32);
  EXPECT_EQ(t.at("h").type.dtype, DType::kFloat16);
  EXPECT_EQ(t.at("b").type.dtype, DType::kBFloat16);
  const Constant h = widen_to_float32(t.at("h")), b = widen_to_float32(t.at("b"));
  EXPECT_EQ(h.f32_data()[0], 1.0f);
  EXPECT_EQ(h.f32_data()[1], -2.0f);
  EXPECT_EQ(b.f32_data()[0], 1.0f);
  EXPECT_EQ(b.f32_data()[1], -3.0f);
  EXPECT_EQ(b.type.dtype, DType::kFloat32);
}

TEST(Safetensors, IntegerAndBoolTensorsRoundTripWithTheirDtypes) {
  std::map<std::string, Constant> tensors;
  const std::vector<std::pair<DType, const char*>> kinds = {
      {DType::kInt8, "I8"},    {DType::kUInt8, "U8"},    {DType::kInt32, "I32"},  {DType::kInt64, "I64"},
      {DType::kBool, "BOOL"},  {DType::kFloat16, "F16"}, {DType::kBFloat16, "BF16"}};
  for (const auto& [dtype, name] : kinds) {
    Constant c;
    c.type = TensorType{{3}, dtype};
    c.data.assign(c.type.bytes(), 0);
    for (std::size_t i = 0; i < c.data.size(); i += dtype_size(dtype)) c.data[i] = static_cast<uint8_t>(i % 2);
    tensors[name] = c;
  }
  const std::vector<uint8_t> bytes = serialize_safetensors(tensors);
  const std::string text(bytes.begin(), bytes.end());
  for (const auto& [dtype, name] : kinds)
    EXPECT_NE(text.find("\"" + std::string(name) + "\":{\"dtype\":\"" + name + "\""), std::string::npos) << name;
  const auto back = parse_safetensors(bytes, kSource);
  for (const auto& [dtype, name] : kinds) {
    EXPECT_EQ(back.at(name).type, tensors.at(name).type) << name;
    EXPECT_EQ(back.at(name).data, tensors.at(name).data) << name;
  }
  std::vector<uint8_t> two = {2, 0};
  EXPECT_REJECTED(file_with(R"({"m":{"dtype":"BOOL","shape":[2],"data_offsets":[0,2]}})", two),
                  "tensor 'm': BOOL value 2 is neither 0 nor 1");
}

TEST(Safetensors, RejectsFileShorterThanItsLengthField) {
  EXPECT_REJECTED(std::vector<uint8_t>({1, 2, 3}), "truncated: 3 bytes");
}

TEST(Safetensors, RejectsHeaderLengthPastTheEnd) {
  auto bytes = serialize_safetensors(sample());
  bytes[5] = 0x01;  // 2^40 more header bytes than there are
  EXPECT_REJECTED(bytes, "header length " + std::to_string(header_length(bytes)) + " exceeds the file size " +
                             std::to_string(bytes.size()));
}

TEST(Safetensors, RejectsHeaderOverTheSizeLimit) {
  // A length field of 101 MB in a file that long (made of spaces: still JSON whitespace).
  const uint64_t length = 101u << 20;
  std::vector<uint8_t> bytes(8 + length, ' ');
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<uint8_t>(length >> (8 * i));
  EXPECT_REJECTED(bytes, "header length 105906176 exceeds the limit of 104857600 bytes");
}

TEST(Safetensors, RejectsHeaderThatIsNotJson) {
  EXPECT_REJECTED(file_with("{\"w\": [1,", zeros(8)), "x.safetensors: header: malformed JSON");
}

TEST(Safetensors, RejectsHeaderThatIsNotAnObject) {
  EXPECT_REJECTED(file_with("[1, 2]", {}), "header must be a JSON object, got array");
}

TEST(Safetensors, RejectsEntryWithoutRequiredFields) {
  for (const std::string entry : {R"({"shape":[2],"data_offsets":[0,8]})", R"({"dtype":"F32","data_offsets":[0,8]})",
                                  R"({"dtype":"F32","shape":[2]})", R"([1])"})
    EXPECT_REJECTED(file_with("{\"w\":" + entry + "}", zeros(8)), "tensor 'w': needs \"dtype\"");
}

TEST(Safetensors, RejectsFieldsOfTheWrongJsonType) {
  EXPECT_REJECTED(file_with(R"({"w":{"dtype":32,"shape":[2],"data_offsets":[0,8]}})", zeros(8)), "tensor 'w': needs");
  EXPECT_REJECTED(file_with(R"({"w":{"dtype":"F32","shape":"2","data_offsets":[0,8]}})", zeros(8)), "tensor 'w': needs");
  EXPECT_REJECTED(file_with(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,4,8]}})", zeros(8)),
                  "tensor 'w': needs");
  EXPECT_REJECTED(file_with(R"({"w":{"dtype":"F32","shape":[2.5],"data_offsets":[0,8]}})", zeros(8)),
                  "shape entries must be non-negative integers");
  EXPECT_REJECTED(file_with(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":["0",8]}})", zeros(8)),
                  "data_offsets must be non-negative integers");
}

TEST(Safetensors, RejectsNegativeDimensions) {
  EXPECT_REJECTED(file_with(R"({"w":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", zeros(8)),
                  "tensor 'w': shape entries must be non-negative integers, got [-2]");
}

TEST(Safetensors, RejectsUnsupportedDtype) {
  EXPECT_REJECTED(file_with(R"({"w":{"dtype":"I16","shape":[2],"data_offsets":[0,4]}})", zeros(4)),
                  "tensor 'w': unsupported dtype I16");
}

TEST(Safetensors, RejectsOffsetsOutsideTheData) {
  EXPECT_REJECTED(file_with(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", zeros(4)),
                  "tensor 'w': data_offsets [0, 8] lie outside the 4 data bytes");
  EXPECT_REJECTED(file_with(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[-4,0]}})", zeros(4)),
                  "data_offsets must be non-negative integers");
  // A cut-off file: the last tensor's data is missing.
  const auto good = serialize_safetensors(sample());
  EXPECT_REJECTED(std::vector<uint8_t>(good.begin(), good.end() - 2), "lie outside");
}

TEST(Safetensors, RejectsEndBeforeBegin) {
  EXPECT_REJECTED(file_with(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[8,4]}})", zeros(8)),
                  "tensor 'w': data_offsets [8, 4] end before they begin");
}

TEST(Safetensors, RejectsSizeThatDisagreesWithShape) {
  EXPECT_REJECTED(file_with(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,12]}})", zeros(12)),
                  "tensor 'w': 12 data bytes for F32(2,), which needs 8");
  EXPECT_REJECTED(file_with(R"({"w":{"dtype":"F16","shape":[3],"data_offsets":[0,12]}})", zeros(12)), "needs 6");
}

TEST(Safetensors, RejectsShapeWhoseSizeOverflows) {
  // 2^62 x 2^2 elements of 4 bytes wrap a 64-bit count to 0; the reader must not believe an empty range.
  EXPECT_REJECTED(
      file_with(R"({"w":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,0]}})", {}),
      "has more than 2147483647 elements, the limit per tensor");
}

TEST(Safetensors, RejectsOverlappingTensors) {
  EXPECT_REJECTED(file_with(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                            R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                            zeros(12)),
                  "tensors overlap at data bytes 4..8");
  // An empty tensor between the two must not hide the overlap.
  EXPECT_REJECTED(file_with(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},)"
                            R"("b":{"dtype":"F32","shape":[0],"data_offsets":[4,4]},)"
                            R"("c":{"dtype":"F32","shape":[1],"data_offsets":[12,16]}})",
                            zeros(16)),
                  "tensors overlap at data bytes 12..16");
}

TEST(Safetensors, EmptyTensorsOverlapNothing) {
  const auto t = parse_safetensors(file_with(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                             R"("e":{"dtype":"F32","shape":[0],"data_offsets":[4,4]}})",
                                             zeros(8)),
                                   kSource);
  EXPECT_EQ(t.at("e").type.shape, (Shape{0}));
}

TEST(Safetensors, RejectsMetadataThatIsNotStrings) {
  EXPECT_REJECTED(file_with(R"({"__metadata__":{"epoch":3}})", {}), "\"__metadata__\" entry 'epoch' must be a string");
  EXPECT_REJECTED(file_with(R"({"__metadata__":[1]})", {}), "\"__metadata__\" must be an object");
}

TEST(Safetensors, MissingFileNamesThePath) {
  EXPECT_ERROR(read_safetensors("/nonexistent/w.safetensors"), "/nonexistent/w.safetensors: cannot open");
}

}  // namespace
}  // namespace hybgen
