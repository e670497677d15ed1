#include "io/tflite/flatbuffer_view.h"

#include "ir/error.h"
#include "ir/names.h"

namespace hybgen {

namespace {

flatbuffers::Verifier::Options flatbuffer_verifier_options() {
  flatbuffers::Verifier::Options o;
  o.max_depth = 64;
  o.max_tables = 10000000;
  o.check_alignment = true;
  return o;
}

}  // namespace

FlatbufferView::FlatbufferView(const uint8_t* data, std::size_t size, std::string source)
    : data_(data),
      size_(size),
      source_(std::move(source)),
      // The Verifier asserts its size is below FLATBUFFERS_MAX_BUFFER_SIZE: a
      // larger buffer is refused below before any check runs on it.
      verifier_(data, size < FLATBUFFERS_MAX_BUFFER_SIZE ? size : 0, flatbuffer_verifier_options()) {
  if (size >= FLATBUFFERS_MAX_BUFFER_SIZE)
    throw Error(source_ + ": " + std::to_string(size) + " bytes is more than a FlatBuffer holds (2 GiB)");
  if (size < 8) throw Error(source_ + ": " + std::to_string(size) + " bytes is too short for a FlatBuffer");
}

void FlatbufferView::fail(const std::string& where, const std::string& what) const {
  throw Error(source_ + ": " + where + ": " + what);
}

bool FlatbufferView::verify_table(const uint8_t* table) {
  // VerifyTableStart counts depth for recursive verifiers; this reader is not
  // recursive, so each table's count is closed at once.
  const bool ok = verifier_.VerifyTableStart(table);
  verifier_.EndTable();
  return ok;
}

TableView FlatbufferView::root(const std::string& where) {
  const flatbuffers::uoffset_t o = verifier_.VerifyOffset(0);
  if (!o) fail(where, "the root offset points outside the file");
  const uint8_t* table = data_ + o;
  if (!verify_table(table)) fail(where, "the root table's vtable lies outside the file");
  return TableView(this, reinterpret_cast<const flatbuffers::Table*>(table), where);
}

void TableView::bad_field(const char* name, const std::string& what) const {
  fail("field '" + std::string(name) + "' " + what);
}

uint16_t TableView::checked_offset(uint16_t field, const char* name) const {
  const flatbuffers::voffset_t at = table_->GetOptionalFieldOffset(field);
  if (!at) return field;
  const auto* base = reinterpret_cast<const uint8_t*>(table_);
  if (!file_->verifier_.VerifyOffset(static_cast<std::size_t>(base - file_->data_) + at))
    bad_field(name, "has an offset that points outside the file");
  return field;
}

std::optional<TableView> TableView::table(uint16_t field, const char* name) const {
  const auto* t = table_->GetPointer<const flatbuffers::Table*>(checked_offset(field, name));
  if (!t) return std::nullopt;
  if (!file_->verify_table(reinterpret_cast<const uint8_t*>(t)))
    bad_field(name, "is a table whose vtable lies outside the file");
  return TableView(file_, t, where_ + ": " + name);
}

std::vector<TableView> TableView::tables(uint16_t field, const char* name, const std::string& item) const {
  const auto* v = vector<flatbuffers::uoffset_t>(field, name);
  std::vector<TableView> out;
  if (!v) return out;
  out.reserve(v->size());
  for (flatbuffers::uoffset_t i = 0; i < v->size(); ++i) {
    const uint8_t* slot = reinterpret_cast<const uint8_t*>(v->Data()) + i * sizeof(flatbuffers::uoffset_t);
    const std::size_t at = static_cast<std::size_t>(slot - file_->data_);
    const std::string label = where_ + ": " + item + " " + std::to_string(i);
    const flatbuffers::uoffset_t o = file_->verifier_.VerifyOffset(at);
    if (!o) file_->fail(label, "its offset (in field '" + std::string(name) + "') points outside the file");
    const uint8_t* t = file_->data_ + at + o;
    if (!file_->verify_table(t)) file_->fail(label, "its vtable lies outside the file");
    out.push_back(TableView(file_, reinterpret_cast<const flatbuffers::Table*>(t), label));
  }
  return out;
}

std::pair<const uint8_t*, std::size_t> TableView::bytes(uint16_t field, const char* name) const {
  const flatbuffers::Vector<uint8_t>* v = vector<uint8_t>(field, name);
  if (!v) return {nullptr, 0};
  return {v->Data(), v->size()};
}

std::string TableView::string(uint16_t field, const char* name) const {
  const auto* s = table_->GetPointer<const flatbuffers::String*>(checked_offset(field, name));
  if (!s) return "";
  if (!file_->verifier_.VerifyString(s)) bad_field(name, "is a string that runs past the end of the file");
  return s->str();
}

}  // namespace hybgen
