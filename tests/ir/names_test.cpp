// Names from model files in messages and generated comments: whatever they
// hold, they come out as one harmless line.
#include <gtest/gtest.h>

#include "ir/error.h"
#include "ir/limits.h"
#include "ir/names.h"

namespace hybgen {
namespace {

TEST(Names, PrintableNameEscapesControlCharactersAndKeepsUtf8) {
  EXPECT_EQ(printable_name("fc1"), "fc1");
  EXPECT_EQ(printable_name("a\nb\tc\\d\re"), "a\\nb\\tc\\\\d\\re");
  EXPECT_EQ(printable_name(std::string("\x1b[31mred", 8)), "\\x1b[31mred");
  EXPECT_EQ(printable_name("caf\xc3\xa9"), "caf\xc3\xa9");           // UTF-8 stays
  EXPECT_EQ(printable_name("bad\xff\xc3"), "bad\\xff\\xc3");          // not UTF-8: escaped
  EXPECT_EQ(printable_name("\xed\xa0\x80"), "\\xed\\xa0\\x80");       // a surrogate is not UTF-8
  EXPECT_EQ(quoted_name("it's"), "'it's'");
  EXPECT_EQ(node_label("n\n__builtin_printf()", "Op"), "node 'n\\n__builtin_printf()' (Op)");
}

TEST(Names, LongNamesAreCutAndSayHowLongTheyWere) {
  const std::string shown = printable_name(std::string(100000, 'x'));
  EXPECT_EQ(shown, std::string(kMaxShownNameBytes, 'x') + "...(100000 bytes)");
  EXPECT_EQ(comment_text(std::string(100000, 'y')), std::string(kMaxShownNameBytes, 'y') + "...(100000 bytes)");
}

TEST(Names, CommentTextCannotEndACommentSpliceALineOrStartOne) {
  const std::string hostile = "n\n__builtin_printf(\"INJECTED\\n\");\n// */ /* ?" "?/ \\";
  const std::string text = comment_text(hostile);
  for (char c : text) {
    EXPECT_GE(c, 0x20) << text;
    EXPECT_LT(c, 0x7f) << text;
  }
  EXPECT_EQ(text.find("*/"), std::string::npos);
  EXPECT_EQ(text.find("/*"), std::string::npos);
  EXPECT_EQ(text.find("?" "?"), std::string::npos);  // trigraphs (??/ is a backslash in C++11)
  EXPECT_EQ(text.back() == '\\', false);          // a final backslash would splice the next line
  EXPECT_EQ(comment_text("conv1/weight (1, 3)"), "conv1/weight (1, 3)");
  EXPECT_EQ(comment_text("a\\b"), "a\\x5cb");
}

TEST(Names, Utf8Validation) {
  EXPECT_TRUE(is_valid_utf8(""));
  EXPECT_TRUE(is_valid_utf8("plain"));
  EXPECT_TRUE(is_valid_utf8("\xe4\xb8\xad\xf0\x9f\x98\x80"));
  EXPECT_FALSE(is_valid_utf8("\xc0\xaf"));  // overlong '/'
  EXPECT_FALSE(is_valid_utf8("\xf4\x90\x80\x80"));  // past U+10FFFF
  EXPECT_FALSE(is_valid_utf8("\xe4\xb8"));  // cut short
}

TEST(Limits, TensorBytesAreCheckedWithoutOverflow) {
  EXPECT_EQ(checked_tensor_bytes({2, 3}, 4, "t"), 24u);
  EXPECT_EQ(checked_tensor_bytes({}, 4, "t"), 4u);
  EXPECT_EQ(checked_tensor_bytes({int64_t{1} << 40, 0}, 4, "t"), 0u);  // empty whatever the other dims
  const auto message = [](const Shape& shape) {
    try {
      checked_tensor_bytes(shape, 4, "model.json: input 'x'");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_EQ(message({int64_t{1} << 32, int64_t{1} << 32}),
            "model.json: input 'x': shape (4294967296, 4294967296) has more than 2147483647 elements, the limit per "
            "tensor");
  EXPECT_NE(message({INT64_MAX, 2}).find("more than 2147483647 elements"), std::string::npos);
  EXPECT_NE(message({1000000000, 1000000000}).find("more than 2147483647 elements"), std::string::npos);
  EXPECT_NE(message({2, -1}).find("negative dimension"), std::string::npos);
  EXPECT_NE(message(Shape(33, 1)).find("33 dimensions, more than the limit of 32"), std::string::npos);
  EXPECT_EQ(checked_tensor_bytes({(int64_t{1} << 31) - 1}, 1, "t"), (uint64_t{1} << 31) - 1);
}

}  // namespace
}  // namespace hybgen
