// .npy: round trips, numpy's exact header layout, the versions and dtypes
// read, and the bad files the reader rejects with the path in the message.
#include <gtest/gtest.h>

#include "error_matchers.h"
#include "graph_builders.h"

#include <cstring>

#include "io/file_util.h"
#include "io/npy.h"
#include "ir/error.h"

namespace hybgen {
namespace {

// A .npy file: magic, version, header length (u16 for 1.0, u32 after), header, data.
std::vector<uint8_t> npy_bytes(int major, const std::string& header, const std::vector<uint8_t>& data) {
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  const int length_bytes = major == 1 ? 2 : 4;
  for (int i = 0; i < length_bytes; ++i) out += static_cast<char>(header.size() >> (8 * i));
  out += header;
  out.append(data.begin(), data.end());
  return std::vector<uint8_t>(out.begin(), out.end());
}

template <typename T>
std::vector<uint8_t> raw(const std::vector<T>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

class Npy : public ::testing::Test {
 protected:
  // Writes `bytes` to a file in the test's folder and returns its path.
  std::string file(const std::vector<uint8_t>& bytes, const std::string& name = "x.npy") {
    const std::string path = tmp_.path() + "/" + name;
    write_file_atomic(path, bytes);
    return path;
  }
  std::string path(const std::string& name) const { return tmp_.path() + "/" + name; }

 private:
  TempDir tmp_{"hybgen-npy-test"};
};

TEST_F(Npy, RoundTripsEveryRank) {
  const std::vector<NpyArray> arrays = {{{}, {3.5f}},
                                        {{5}, testing::seeded_values(5, 1)},
                                        {{2, 3}, testing::seeded_values(6, 2)},
                                        {{2, 1, 3, 2}, testing::seeded_values(12, 3)},
                                        {{0, 4}, {}}};
  for (const auto& a : arrays) {
    write_npy(path("a.npy"), a);
    const NpyArray back = read_npy(path("a.npy"));
    EXPECT_EQ(back.shape, a.shape) << shape_str(a.shape);
    EXPECT_EQ(back.data, a.data) << shape_str(a.shape);
  }
}

TEST_F(Npy, HeaderIsWhatNumpyWrites) {
  // np.save(f, np.zeros((2, 3), np.float32)): dict, room for the first axis to
  // grow to 21 digits, spaces to a 64-byte boundary, '\n'; data at byte 128.
  write_npy(path("a.npy"), {{2, 3}, std::vector<float>(6, 0.0f)});
  const auto bytes = read_file_bytes(path("a.npy"));
  ASSERT_EQ(bytes.size(), 128u + 24u);
  EXPECT_EQ(std::string(bytes.begin(), bytes.begin() + 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_EQ(bytes[8] | (bytes[9] << 8), 118);
  const std::string header(bytes.begin() + 10, bytes.begin() + 128);
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  EXPECT_EQ(header, dict + std::string(118 - dict.size() - 1, ' ') + "\n");
}

TEST_F(Npy, ScalarAndVectorShapesUsePythonTupleSyntax) {
  write_npy(path("s.npy"), {{}, {1.0f}});
  EXPECT_NE(read_file_text(path("s.npy")).find("'shape': (), }"), std::string::npos);
  write_npy(path("v.npy"), {{7}, std::vector<float>(7, 1.0f)});
  EXPECT_NE(read_file_text(path("v.npy")).find("'shape': (7,), }"), std::string::npos);
}

TEST_F(Npy, WriterIsDeterministic) {
  const NpyArray a{{3, 2}, testing::seeded_values(6, 4)};
  write_npy(path("a.npy"), a);
  write_npy(path("b.npy"), a);
  EXPECT_EQ(read_file_bytes(path("a.npy")), read_file_bytes(path("b.npy")));
}

TEST_F(Npy, WriterRefusesDataThatDisagreesWithShape) {
  EXPECT_ERROR(write_npy(path("a.npy"), {{2, 2}, {1, 2, 3}}), "3 values for shape (2, 2)");
}

TEST_F(Npy, ReadsFloat64AsFloat32) {
  const auto p = file(npy_bytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }\n",
                                raw(std::vector<double>{0.5, -1.25})));
  const NpyArray a = read_npy(p);
  EXPECT_EQ(a.data, (std::vector<float>{0.5f, -1.25f}));
}

TEST_F(Npy, ReadsVersions2And3) {
  for (int major : {2, 3}) {
    const auto p = file(npy_bytes(major, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2), }\n",
                                  raw(std::vector<float>{1.0f, 2.0f})));
    const NpyArray a = read_npy(p);
    EXPECT_EQ(a.shape, (Shape{1, 2})) << major;
    EXPECT_EQ(a.data[1], 2.0f) << major;
  }
}

TEST_F(Npy, RejectsBadMagic) {
  const auto p = file({'P', 'K', 3, 4, 0, 0, 0, 0, 0, 0, 0, 0});
  EXPECT_ERROR(read_npy(p), p + ": not a .npy file (bad magic)");
}

TEST_F(Npy, RejectsUnknownVersion) {
  const auto p = file(npy_bytes(1, "{}", {}));
  auto bytes = read_file_bytes(p);
  bytes[6] = 9;
  EXPECT_ERROR(read_npy(file(bytes)), "unsupported .npy version 9.0");
}

TEST_F(Npy, RejectsFortranOrder) {
  const auto p = file(npy_bytes(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }\n", std::vector<uint8_t>(16)));
  EXPECT_ERROR(read_npy(p), p + ": Fortran-order arrays are not supported");
}

TEST_F(Npy, RejectsOtherDtypes) {
  for (const std::string descr : {"<i4", ">f4", "<f2", "|u1"}) {
    const auto p = file(npy_bytes(1, "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (1,), }\n",
                                  std::vector<uint8_t>(8)));
    EXPECT_ERROR(read_npy(p), p + ": dtype '" + descr + "' is not supported");
  }
}

TEST_F(Npy, RejectsTruncatedData) {
  write_npy(path("a.npy"), {{2, 3}, std::vector<float>(6, 1.0f)});
  auto bytes = read_file_bytes(path("a.npy"));
  bytes.resize(bytes.size() - 5);
  const auto p = file(bytes, "short.npy");
  EXPECT_ERROR(read_npy(p), p + ": truncated data: 19 bytes for <f4 of shape (2, 3), expected 24");
}

TEST_F(Npy, RejectsTruncatedHeader) {
  auto bytes = npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }\n", {});
  bytes.resize(20);
  const auto p = file(bytes);
  EXPECT_ERROR(read_npy(p), p + ": truncated header");
  EXPECT_ERROR(read_npy(file({0x93, 'N', 'U', 'M', 'P', 'Y', 1})), "truncated header");
}

TEST_F(Npy, RejectsShapeLargerThanTheFile) {
  // A lying shape whose element count would overflow must not be believed.
  const auto p = file(npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 8), }\n",
                                std::vector<uint8_t>(8)));
  EXPECT_ERROR(read_npy(p), p + ": truncated data");
  const auto q = file(npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }\n", {}));
  EXPECT_ERROR(read_npy(q), "must hold non-negative integers");
}

TEST_F(Npy, ParsesEveryDictLiteralSpelling) {
  // Double quotes, no trailing comma, keys in another order, spaces and tabs
  // anywhere, an extra key, Python 2's long suffix: the same array.
  for (const std::string header :
       {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 1), }\n",
        "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (2, 1)}",
        "{ 'shape' : ( 2 ,1 ) ,\t'fortran_order':False,'descr':'<f4' }   \n",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 1L), 'extra': [None, (1, 'a')]}\n"}) {
    const NpyArray a = parse_npy(npy_bytes(1, header, raw(std::vector<float>{1.0f, 2.0f})), "x.npy");
    EXPECT_EQ(a.shape, (Shape{2, 1})) << header;
    EXPECT_EQ(a.data, (std::vector<float>{1.0f, 2.0f})) << header;
  }
}

TEST_F(Npy, RejectsMalformedHeaders) {
  const std::vector<uint8_t> data(16);
  const auto error = [&](const std::string& header) { return testing::error_of([&] { parse_npy(npy_bytes(1, header, data), "x.npy"); }); };
  EXPECT_NE(error("'descr': '<f4'").find("x.npy: malformed header at byte 0: expected '{'"), std::string::npos);
  EXPECT_NE(error("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)").find("expected ',' or '}'"), std::string::npos);
  EXPECT_NE(error("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} x").find("only spaces"), std::string::npos);
  EXPECT_NE(error("{'descr': '<f4', 'fortran_order': false, 'shape': (2,)}").find("expected a value"), std::string::npos);
  EXPECT_NE(error("{'descr': '<f4, 'fortran_order': False}").find("malformed header"), std::string::npos);
  EXPECT_NE(error("{'descr': [('x', '<f4')], 'fortran_order': False, 'shape': (2,)}").find("structured arrays are not supported"),
            std::string::npos);
  EXPECT_NE(error("{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}").find("header has no 'fortran_order'"), std::string::npos);
  EXPECT_NE(error("{'descr': '<f4', 'fortran_order': False}").find("header has no 'shape'"), std::string::npos);
  EXPECT_NE(error("{'descr': '<f4', 'fortran_order': False, 'shape': 2}").find("'shape' is 2, not a tuple of integers"),
            std::string::npos);
  EXPECT_NE(error("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 'a')}").find("is not a tuple of integers"),
            std::string::npos);
  EXPECT_NE(error("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}").find("a dimension too large"),
            std::string::npos);
}

TEST_F(Npy, LongHeaderFieldsGiveAnErrorNotACrash) {
  // Regression: the regexes that read the header recursed per character and a
  // field of 30 000+ characters overflowed the stack (SIGSEGV). A version 1.0
  // header holds at most 65 535 bytes, so these use 2.0.
  const std::string long_text(100000, 'a');
  const std::vector<uint8_t> data(16);
  std::string message = testing::error_of(
      [&] { parse_npy(npy_bytes(2, "{'descr': '" + long_text + "', 'fortran_order': False, 'shape': (2,), }\n", data), "x.npy"); });
  EXPECT_NE(message.find("x.npy: dtype 'aaaa"), std::string::npos) << message.substr(0, 200);
  EXPECT_LT(message.size(), 400u) << "the field is cut short in the message";

  message = testing::error_of([&] { parse_npy(npy_bytes(2, "{'descr': '" + long_text, data), "x.npy"); });
  EXPECT_NE(message.find("expected the closing quote of a string"), std::string::npos) << message.substr(0, 200);
  EXPECT_LT(message.size(), 400u);

  std::string dims;
  for (int i = 0; i < 50000; ++i) dims += "1,";
  message = testing::error_of(
      [&] { parse_npy(npy_bytes(2, "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }\n", data), "x.npy"); });
  EXPECT_NE(message.find("50000 dimensions, more than the limit of 32"), std::string::npos) << message.substr(0, 200);
  EXPECT_LT(message.size(), 400u);

  message = testing::error_of([&] {
    parse_npy(npy_bytes(2, "{'descr': '<f4', 'fortran_order': False, 'shape': " + std::string(100000, '(') , data), "x.npy");
  });
  EXPECT_NE(message.find("nested tuples or lists"), std::string::npos) << message.substr(0, 200);

  message = testing::error_of([&] { parse_npy(npy_bytes(2, "{'" + long_text + "': 1, 'descr': '<f4'}", data), "x.npy"); });
  EXPECT_NE(message.find("header has no 'fortran_order'"), std::string::npos) << message.substr(0, 200);
  EXPECT_LT(message.size(), 400u);

  // Long runs of padding are still fine.
  const NpyArray a = parse_npy(npy_bytes(2, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }" +
                                                std::string(100000, ' ') + "\n",
                                            raw(std::vector<float>{1.0f, 2.0f})),
                               "x.npy");
  EXPECT_EQ(a.data, (std::vector<float>{1.0f, 2.0f}));
}

TEST_F(Npy, RejectsShapesPastTheLimitsPerTensor) {
  // 33 dimensions of 1: the data is there, the rank is past ir/limits.h.
  std::string dims;
  for (int i = 0; i < 33; ++i) dims += "1, ";
  EXPECT_ERROR(parse_npy(npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }\n",
                                   std::vector<uint8_t>(4)),
                         "x.npy"),
               "x.npy: 33 dimensions, more than the limit of 32");
}

TEST_F(Npy, ReadRefusesWhatIsNotARegularFile) {
  EXPECT_ERROR(read_npy("/dev/zero"), "/dev/zero: not a regular file");
}

TEST_F(Npy, MissingFileNamesThePath) {
  EXPECT_ERROR(read_npy(path("none.npy")), path("none.npy") + ": cannot open: No such file");
}

}  // namespace
}  // namespace hybgen
