// The parts of TFLite's file format hybgen reads, as facts about the bytes:
// each table's fields by vtable offset and the enums' numbers, from TFLite's
// published schema (schema.fbs, file identifier "TFL3", schema version 3
// with its 3a-3d additions; docs/tflite.md says which copy and where). No
// generated code: flatbuffer_view.h reads the tables.
//
//   TableView t = ...;   // a Tensor
//   auto shape = t.scalars<int32_t>(tfl::tensor::kShape, "shape");
#pragma once

#include <cstdint>
#include <string>

namespace hybgen {
namespace tfl {

// The vtable offset of a table's field number `index` (0-based, in schema
// order; a union field counts two: its type, then its value).
constexpr uint16_t field(int index) { return static_cast<uint16_t>(4 + 2 * index); }

// The 4 bytes after the root offset.
constexpr const char* kFileIdentifier = "TFL3";
constexpr uint32_t kSchemaVersion = 3;

namespace model {
constexpr uint16_t kVersion = field(0);        // uint
constexpr uint16_t kOperatorCodes = field(1);  // [OperatorCode]
constexpr uint16_t kSubgraphs = field(2);      // [SubGraph]
constexpr uint16_t kDescription = field(3);    // string
constexpr uint16_t kBuffers = field(4);        // [Buffer]
}  // namespace model

namespace operator_code {
constexpr uint16_t kDeprecatedBuiltinCode = field(0);  // byte
constexpr uint16_t kCustomCode = field(1);             // string
constexpr uint16_t kVersion = field(2);                // int = 1
constexpr uint16_t kBuiltinCode = field(3);            // BuiltinOperator (int)
}  // namespace operator_code

namespace subgraph {
constexpr uint16_t kTensors = field(0);    // [Tensor]
constexpr uint16_t kInputs = field(1);     // [int]
constexpr uint16_t kOutputs = field(2);    // [int]
constexpr uint16_t kOperators = field(3);  // [Operator]
constexpr uint16_t kName = field(4);       // string
}  // namespace subgraph

namespace buffer {
constexpr uint16_t kData = field(0);    // [ubyte]
constexpr uint16_t kOffset = field(1);  // ulong: data outside the FlatBuffer, from the file's start (> 1)
constexpr uint16_t kSize = field(2);    // ulong
}  // namespace buffer

namespace tensor {
constexpr uint16_t kShape = field(0);           // [int]
constexpr uint16_t kType = field(1);            // TensorType (byte)
constexpr uint16_t kBuffer = field(2);          // uint: index into Model.buffers, 0 = none
constexpr uint16_t kName = field(3);            // string
constexpr uint16_t kQuantization = field(4);    // QuantizationParameters
constexpr uint16_t kIsVariable = field(5);      // bool
constexpr uint16_t kSparsity = field(6);        // SparsityParameters
constexpr uint16_t kShapeSignature = field(7);  // [int], -1 for unknown dims
}  // namespace tensor

namespace quantization {
constexpr uint16_t kMin = field(0);                 // [float]
constexpr uint16_t kMax = field(1);                 // [float]
constexpr uint16_t kScale = field(2);               // [float]
constexpr uint16_t kZeroPoint = field(3);           // [long]
constexpr uint16_t kDetailsType = field(4);         // QuantizationDetails union type (ubyte)
constexpr uint16_t kDetails = field(5);             // its table
constexpr uint16_t kQuantizedDimension = field(6);  // int
}  // namespace quantization

namespace op {
constexpr uint16_t kOpcodeIndex = field(0);           // uint
constexpr uint16_t kInputs = field(1);                // [int], -1: an omitted optional input
constexpr uint16_t kOutputs = field(2);               // [int]
constexpr uint16_t kBuiltinOptionsType = field(3);    // BuiltinOptions union type (ubyte)
constexpr uint16_t kBuiltinOptions = field(4);        // its table
constexpr uint16_t kCustomOptions = field(5);         // [ubyte]
constexpr uint16_t kIntermediates = field(8);         // [int]
constexpr uint16_t kBuiltinOptions2Type = field(11);  // BuiltinOptions2 union type (ubyte)
}  // namespace op

// TensorType.
enum class TensorType : int8_t {
  kFloat32 = 0,
  kFloat16 = 1,
  kInt32 = 2,
  kUInt8 = 3,
  kInt64 = 4,
  kString = 5,
  kBool = 6,
  kInt16 = 7,
  kComplex64 = 8,
  kInt8 = 9,
  kFloat64 = 10,
};
// "FLOAT32", "INT8", ...; "TensorType N" for others.
std::string tensor_type_name(int type);

// ActivationFunctionType.
enum class Activation : int8_t { kNone = 0, kRelu = 1, kReluN1To1 = 2, kRelu6 = 3, kTanh = 4, kSignBit = 5 };
// Padding.
enum class Padding : int8_t { kSame = 0, kValid = 1 };

// The BuiltinOptions union's member numbers (the ubyte before the options
// table) of the options tables read here.
namespace options_type {
constexpr uint8_t kNone = 0;
constexpr uint8_t kConv2D = 1;
constexpr uint8_t kDepthwiseConv2D = 2;
constexpr uint8_t kPool2D = 5;
constexpr uint8_t kFullyConnected = 8;
constexpr uint8_t kSoftmax = 9;
constexpr uint8_t kConcatenation = 10;
constexpr uint8_t kAdd = 11;
constexpr uint8_t kReshape = 17;
constexpr uint8_t kMul = 21;
constexpr uint8_t kPad = 22;
constexpr uint8_t kReducer = 27;
constexpr uint8_t kStridedSlice = 32;
}  // namespace options_type

namespace conv2d_options {
constexpr uint16_t kPadding = field(0);            // Padding
constexpr uint16_t kStrideW = field(1);            // int
constexpr uint16_t kStrideH = field(2);            // int
constexpr uint16_t kFusedActivation = field(3);    // ActivationFunctionType
constexpr uint16_t kDilationW = field(4);          // int = 1
constexpr uint16_t kDilationH = field(5);          // int = 1
constexpr uint16_t kQuantizedBiasType = field(6);  // TensorType
}  // namespace conv2d_options

namespace depthwise_options {
constexpr uint16_t kPadding = field(0);
constexpr uint16_t kStrideW = field(1);
constexpr uint16_t kStrideH = field(2);
constexpr uint16_t kDepthMultiplier = field(3);  // redundant with the shapes
constexpr uint16_t kFusedActivation = field(4);
constexpr uint16_t kDilationW = field(5);  // = 1
constexpr uint16_t kDilationH = field(6);  // = 1
}  // namespace depthwise_options

namespace pool2d_options {
constexpr uint16_t kPadding = field(0);
constexpr uint16_t kStrideW = field(1);
constexpr uint16_t kStrideH = field(2);
constexpr uint16_t kFilterWidth = field(3);
constexpr uint16_t kFilterHeight = field(4);
constexpr uint16_t kFusedActivation = field(5);
}  // namespace pool2d_options

namespace fully_connected_options {
constexpr uint16_t kFusedActivation = field(0);
constexpr uint16_t kWeightsFormat = field(1);  // 0: DEFAULT
constexpr uint16_t kKeepNumDims = field(2);    // bool
constexpr uint16_t kAsymmetricQuantizeInputs = field(3);
constexpr uint16_t kQuantizedBiasType = field(4);
}  // namespace fully_connected_options

namespace softmax_options {
constexpr uint16_t kBeta = field(0);  // float
}
namespace concatenation_options {
constexpr uint16_t kAxis = field(0);  // int
constexpr uint16_t kFusedActivation = field(1);
}  // namespace concatenation_options
namespace add_options {
constexpr uint16_t kFusedActivation = field(0);
}
namespace mul_options {
constexpr uint16_t kFusedActivation = field(0);
}
namespace reducer_options {
constexpr uint16_t kKeepDims = field(0);  // bool
}
namespace strided_slice_options {
constexpr uint16_t kBeginMask = field(0);
constexpr uint16_t kEndMask = field(1);
constexpr uint16_t kEllipsisMask = field(2);
constexpr uint16_t kNewAxisMask = field(3);
constexpr uint16_t kShrinkAxisMask = field(4);
constexpr uint16_t kOffset = field(5);  // bool: end is an offset from begin
}  // namespace strided_slice_options

// BuiltinOperator numbers of the operators converted.
namespace builtin {
constexpr int kAdd = 0;
constexpr int kAveragePool2D = 1;
constexpr int kConcatenation = 2;
constexpr int kConv2D = 3;
constexpr int kDepthwiseConv2D = 4;
constexpr int kDequantize = 6;
constexpr int kFullyConnected = 9;
constexpr int kLogistic = 14;
constexpr int kMaxPool2D = 17;
constexpr int kMul = 18;
constexpr int kReshape = 22;
constexpr int kSoftmax = 25;
constexpr int kCustom = 32;
constexpr int kPad = 34;
constexpr int kMean = 40;
constexpr int kStridedSlice = 45;
constexpr int kQuantize = 114;
// deprecated_builtin_code is a byte: codes from 127 on are in builtin_code.
constexpr int kPlaceholderForGreaterOpCodes = 127;
}  // namespace builtin

// The schema's name of a BuiltinOperator ("CONV_2D"); "BUILTIN_OPERATOR N"
// for numbers it does not know.
std::string builtin_operator_name(int code);

}  // namespace tfl
}  // namespace hybgen
