// Imports ONNX models (ModelProto files written by torch.onnx.export,
// tf2onnx, skl2onnx ...) into a hybgen Graph through Debian's libonnx_proto.
//
//   OnnxImportOptions opt;
//   opt.input_shapes["input"] = {1, 3, 224, 224};   // only for symbolic dims ("batch")
//   Graph g = import_onnx("resnet18.onnx", opt);
//   if (looks_like_onnx("model.bin")) ...             // by content, not by name
//
// What is read (docs/onnx.md): the default-domain opset (7 and later), the
// initializers (raw_data or typed fields, external data next to the model),
// graph inputs that are initializers as constants, Constant nodes, and every
// node through its converter (io/onnx/onnx_ops.h). Nodes computing shapes or
// indices from import-time constants are evaluated at import. Every unknown
// op and refused attribute is listed in one Error before anything is
// converted; other errors name the file and the node.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "io/onnx/onnx_ops.h"
#include "ir/graph.h"

namespace hybgen {

struct OnnxImportOptions {
  // Shapes of runtime inputs whose model shape has symbolic or unknown
  // dimensions (--shape NAME=...). A given shape must agree with the model's
  // known dimensions; naming an input the model does not have is an error.
  std::map<std::string, Shape> input_shapes;
  std::string name;  // graph name; default: the graph's name, else the file stem
  // Graph inputs given as import-time constants instead of runtime inputs
  // (a node test's `shape` or `axes` input): they are no inputs of the
  // imported graph. Shape and dtype must match the model's declaration
  // where it has one.
  std::map<std::string, OnnxConst> constant_inputs;
  // Receives notes on what the import did that a user may want to know
  // (an attribute ignored at inference). Unset: printed to stderr as
  // "hybgen: note: ...".
  std::function<void(const std::string&)> note;
};

// Largest .onnx file read, protobuf's limit for one message (the tensors of
// external data are checked apart).
constexpr uint64_t kMaxOnnxFileBytes = (uint64_t{1} << 31) - 1;

// True when the file parses as the start of a ModelProto with an ir_version
// and a graph: cheap, reads at most the first bytes of the file, never throws.
bool looks_like_onnx(const std::string& path);
// The same for bytes already read.
bool looks_like_onnx_bytes(const std::string& bytes);

// Reads and converts `path`. External data files are looked up next to it.
Graph import_onnx(const std::string& path, const OnnxImportOptions& options);

// A model with a run-time batch: `options.input_shapes` gives each of
// `batch_inputs` at one item; imported at one item and at two, so that
// Reshape targets folded from the batch (x.view(x.size(0), -1)) infer it
// instead (-1). Error naming the node or constant for any other value that
// follows the batch. The caller sets Graph::batch.
Graph import_onnx_with_batch(const std::string& path, OnnxImportOptions options,
                             const std::vector<std::string>& batch_inputs);

// The same from the bytes of a model: `source` names it in messages, `dir` is
// the folder external data is read from ("" refuses external data).
Graph import_onnx_bytes(const std::string& bytes, const std::string& source, const std::string& dir,
                        const OnnxImportOptions& options);

// A serialized TensorProto (the backend node tests' input_N.pb / output_N.pb):
// its float32 values; other dtypes convert to float32 when every value is
// exactly representable (integers up to 2^24, bool), else Error.
Constant read_onnx_tensor_file(const std::string& path);

// The same tensor keeping its element type (DOUBLE as float64, INT16 as
// int16 ...), values as doubles (for every dtype; int64 beyond 2^53 rounds).
struct OnnxTensorFile {
  std::string name;
  DType dtype = DType::kFloat32;
  Shape shape;
  std::vector<double> values;
};
OnnxTensorFile read_onnx_tensor_values(const std::string& path);

// The DType of an ONNX element type (TensorProto::DataType number): where
// the file's numbers (tensors' data_type, value infos' elem_type, Cast's
// `to`) become DTypes, so nothing past the reader sees them. Nothing for
// the element types no DType holds (STRING, COMPLEX64, FLOAT8E4M3FN ...),
// which the reader refuses naming them.
std::optional<DType> onnx_element_dtype(int64_t element_type);
// The inverse: the ONNX element type of a DType (every DType has one).
int32_t onnx_element_type(DType dtype);

// "FLOAT", "INT64", ... for a TensorProto::DataType number; "dtype N" otherwise.
std::string onnx_dtype_name(int64_t element_type);
// The ONNX name of a DType's element type: "FLOAT", "DOUBLE", "INT16" ...
std::string onnx_dtype_name(DType dtype);

}  // namespace hybgen
