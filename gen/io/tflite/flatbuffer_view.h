// Checked reads of a FlatBuffer's tables through the flatbuffers library's
// Table and Vector, without generated code: every table, vector, string and
// scalar is checked with flatbuffers::Verifier before it is read, so a
// hostile file gives an Error naming the field and where it is (never a read
// outside the bytes).
//
//   FlatbufferView file(bytes, size, "m.tflite");          // checks the root offset
//   TableView model = file.root("model");
//   uint32_t version = model.scalar<uint32_t>(tfl::model::kVersion, 0, "version");
//   for (const TableView& sg : model.tables(tfl::model::kSubgraphs, "subgraphs", "subgraph")) ...
//
// A field is named by its vtable offset (4 + 2 * its index in the schema's
// table, a union taking two: its type, then its value); tflite_schema.h
// names those of TFLite's tables.
#pragma once

#include <flatbuffers/flatbuffers.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace hybgen {

class TableView;

class FlatbufferView {
 public:
  // `data` must outlive the view and every TableView made from it. Error
  // when the buffer is too small or too large for a FlatBuffer.
  FlatbufferView(const uint8_t* data, std::size_t size, std::string source);
  FlatbufferView(const FlatbufferView&) = delete;
  FlatbufferView& operator=(const FlatbufferView&) = delete;

  // The root table; `where` names it in messages.
  TableView root(const std::string& where);
  const std::string& source() const { return source_; }
  const uint8_t* data() const { return data_; }
  std::size_t size() const { return size_; }

  // Throws Error("SOURCE: WHERE: WHAT").
  [[noreturn]] void fail(const std::string& where, const std::string& what) const;

 private:
  friend class TableView;
  // Checks the table at `table` (its vtable inside the buffer and aligned).
  bool verify_table(const uint8_t* table);

  const uint8_t* data_;
  std::size_t size_;
  std::string source_;
  flatbuffers::Verifier verifier_;
};

// One checked table. Cheap to copy; valid while its FlatbufferView lives.
class TableView {
 public:
  const std::string& where() const { return where_; }
  [[noreturn]] void fail(const std::string& what) const { file_->fail(where_, what); }

  bool has(uint16_t field) const { return table_->CheckField(field); }

  // A scalar field (integers, floats, bools, enums), or `fallback` when absent.
  template <class T>
  T scalar(uint16_t field, T fallback, const char* name) const {
    if (!table_->VerifyField<T>(file_->verifier_, field, sizeof(T))) bad_field(name, "lies outside the file");
    return table_->GetField<T>(field, fallback);
  }

  // A table field; nothing when absent.
  std::optional<TableView> table(uint16_t field, const char* name) const;
  // A vector of tables; empty when absent. Element i is named "ITEM i" under
  // this table's where().
  std::vector<TableView> tables(uint16_t field, const char* name, const std::string& item) const;
  // A vector of scalars, copied; empty when absent.
  template <class T>
  std::vector<T> scalars(uint16_t field, const char* name) const {
    const flatbuffers::Vector<T>* v = vector<T>(field, name);
    if (!v) return {};
    // Copied byte by byte: a hostile file may misalign the elements (the
    // Verifier checks the length's alignment only). FlatBuffers are little
    // endian, as every target hybgen runs on.
    std::vector<T> out(v->size());
    if (!out.empty()) std::memcpy(out.data(), v->Data(), out.size() * sizeof(T));
    return out;
  }
  // A [ubyte] field as a span of the file's bytes; {nullptr, 0} when absent.
  std::pair<const uint8_t*, std::size_t> bytes(uint16_t field, const char* name) const;
  // A string field; empty when absent.
  std::string string(uint16_t field, const char* name) const;

 private:
  friend class FlatbufferView;
  TableView(FlatbufferView* file, const flatbuffers::Table* table, std::string where)
      : file_(file), table_(table), where_(std::move(where)) {}

  template <class T>
  const flatbuffers::Vector<T>* vector(uint16_t field, const char* name) const {
    const auto* v = table_->GetPointer<const flatbuffers::Vector<T>*>(checked_offset(field, name));
    if (v && !file_->verifier_.VerifyVector(v)) bad_field(name, "is a vector that runs past the end of the file");
    return v;
  }
  // `field` once its offset is checked to point inside the file (0 when absent).
  uint16_t checked_offset(uint16_t field, const char* name) const;
  [[noreturn]] void bad_field(const char* name, const std::string& what) const;

  FlatbufferView* file_;
  const flatbuffers::Table* table_;
  std::string where_;
};

}  // namespace hybgen
