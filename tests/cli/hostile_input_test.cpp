// The CLI against hostile and careless input, end to end: names that try to
// inject code, output folders holding what the user made, paths that are not
// files, and writes that fail halfway. Each either works as with plain input
// or ends in one clear message, exit code 1, nothing written and nothing lost.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <utility>

#include "graph_builders.h"
#include "io/file_util.h"
#include "io/model_json.h"
#include "run_command.h"

namespace hybgen {
namespace {

namespace fs = std::filesystem;
using testing::run_command;

using testing::kHybgen;

// A shell word for any text: single quotes, with each ' written as '\''.
std::string shell_word(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

class HostileInput : public ::testing::Test {
 protected:
  TempDir tmp{"hybgen-hostile-cli-test"};
  std::string path(const std::string& name) const { return tmp.path() + "/" + name; }
  testing::CommandResult hybgen(const std::string& args) { return run_command(shell_word(kHybgen) + " " + args); }

  // dense -> relu -> * 0.5 -> dense, with every name made by `name`.
  // The MLP twice: "odd", each name followed by one of `hostile` in turn
  // (`given` maps plain names to the odd ones), and "plain".
  std::pair<std::string, std::string> save_odd_and_plain(const std::vector<std::string>& hostile,
                                                         std::map<std::string, std::string>* given) {
    int next = 0;
    const std::string odd = save_mlp("odd", [&](const std::string& plain) {
      auto it = given->find(plain);
      if (it == given->end()) it = given->emplace(plain, plain + hostile[next++ % hostile.size()]).first;
      return it->second;
    });
    return {odd, save_mlp("plain", [](const std::string& name) { return name; })};
  }

  // The generated files of out/odd* and out/plain*: the same number of lines,
  // and no printf call outside a one-line comment.
  void expect_names_only_in_comments_and_identifiers(const std::vector<std::string>& suffixes) {
    for (const std::string& file : suffixes) {
      const std::string odd_text = read_file_text(path("out/odd") + file);
      const std::string plain_text = read_file_text(path("out/plain") + file);
      EXPECT_EQ(std::count(odd_text.begin(), odd_text.end(), '\n'),
                std::count(plain_text.begin(), plain_text.end(), '\n'))
          << file;
      std::istringstream in(odd_text);
      for (std::string line; std::getline(in, line);)
        EXPECT_EQ(line.substr(0, line.find("//")).find("printf("), std::string::npos) << file << ": " << line;
    }
  }

  std::string save_mlp(const std::string& file, const std::function<std::string(const std::string&)>& name) {
    Graph g;
    g.name = name("graph");
    g.add_input(name("data"), {{2, 8}});
    g.add_constant(name("w1"), Constant::f32({16, 8}, testing::seeded_values(128, 1)));
    g.add_constant(name("b1"), Constant::f32({16}, testing::seeded_values(16, 2)));
    g.add_constant(name("w2"), Constant::f32({3, 16}, testing::seeded_values(48, 3)));
    g.nodes.push_back(testing::make_node(name("fc1"), "FullyConnected", {name("data"), name("w1"), name("b1")},
                                         testing::attrs_of({{"num_hidden", int64_t{16}}})));
    g.nodes.push_back(testing::make_node(name("act"), "Activation", {name("fc1")},
                                         testing::attrs_of({{"act_type", std::string("relu")}})));
    g.nodes.push_back(testing::make_node(name("half"), "_mul_scalar", {name("act")},
                                         testing::attrs_of({{"scalar", 0.5}})));
    g.nodes.push_back(testing::make_node(name("fc2"), "FullyConnected", {name("half"), name("w2")},
                                         testing::attrs_of({{"num_hidden", int64_t{3}}, {"no_bias", true}})));
    g.outputs = {name("fc2"), name("act")};
    save_model(g, path(file));
    return path(file + ".json");
  }

  // verify --keep: the output files of the generated program, then the build is removed.
  std::vector<uint8_t> verified_outputs(const std::string& model, std::string* printed, const std::string& flags = "") {
    const auto r = hybgen("verify --keep " + flags + shell_word(model));
    *printed = r.output;
    EXPECT_EQ(r.exit_code, 0) << r.output;
    const auto at = r.output.find("build kept in ");
    if (at == std::string::npos) return {};
    const std::string kept = r.output.substr(at + 14);
    const std::string dir = kept.substr(0, kept.find('\n'));
    std::vector<uint8_t> bytes = read_file_bytes(dir + "/out_0.bin");
    const std::vector<uint8_t> second = read_file_bytes(dir + "/out_1.bin");
    bytes.insert(bytes.end(), second.begin(), second.end());
    fs::remove_all(dir);
    return bytes;
  }

  void expect_one_error(const testing::CommandResult& r, const std::string& text) {
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("hybgen: error: " + text), std::string::npos) << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << "one message:\n" << r.output;
  }
};

// Names holding newlines, both quotes, comment ends and starts, a trailing
// backslash (a line splice), a trigraph, a code line, non-ASCII and 5000
// characters generate, compile and run to the very bytes plain names give.
TEST_F(HostileInput, NamesNeverChangeTheGeneratedCode) {
  const std::vector<std::string> hostile = {
      "\n__builtin_printf(\"INJECTED\\n\");\n//", "*/ __builtin_printf(\"INJECTED\\n\"); /*", "it's \"quoted\"",
      "ends in a backslash \\", "trigraph ?" "?/", "\r\x1b[2J\t", "caf\xc3\xa9 \xe4\xb8\xad", std::string(5000, 'n')};
  std::map<std::string, std::string> given;
  const auto [odd, plain] = save_odd_and_plain(hostile, &given);
  std::string odd_printed, plain_printed;
  const auto odd_out = verified_outputs(odd, &odd_printed);
  const auto plain_out = verified_outputs(plain, &plain_printed);
  EXPECT_NE(odd_printed.find("verify: PASS"), std::string::npos) << odd_printed;
  EXPECT_EQ(odd_printed.find("\nINJECTED"), std::string::npos) << odd_printed;
  EXPECT_EQ(odd_printed.find('\x1b'), std::string::npos) << "a terminal escape reached the report";
  ASSERT_FALSE(plain_out.empty());
  EXPECT_EQ(odd_out, plain_out);

  // In the generated text, a name is part of a one-line comment or of an
  // identifier: the files have the lines plain names give, and the code
  // outside comments calls no printf.
  ASSERT_EQ(hybgen(shell_word(odd) + " -o " + shell_word(path("out"))).exit_code, 0);
  ASSERT_EQ(hybgen(shell_word(plain) + " -o " + shell_word(path("out"))).exit_code, 0);
  expect_names_only_in_comments_and_identifiers({".h", ".cpp", "_weights.cpp"});
  // The manifest is JSON that keeps each name as it was.
  const auto manifest = nlohmann::json::parse(read_file_text(path("out/odd.manifest.json")));
  EXPECT_EQ(manifest["inputs"][0]["name"], given.at("data"));
}

// The same for the CUDA backend, run through the cuda-host layer.
TEST_F(HostileInput, NamesNeverChangeTheGeneratedCuda) {
  const std::vector<std::string> hostile = {"\n__builtin_printf(\"INJECTED\\n\");\n//", "*/ x /*", "ends in \\",
                                            "trigraph ?" "?/", "caf\xc3\xa9"};
  std::map<std::string, std::string> given;
  const auto [odd, plain] = save_odd_and_plain(hostile, &given);
  std::string odd_printed, plain_printed;
  const auto odd_out = verified_outputs(odd, &odd_printed, "--target cuda-host ");
  const auto plain_out = verified_outputs(plain, &plain_printed, "--target cuda-host ");
  EXPECT_NE(odd_printed.find("verify: PASS"), std::string::npos) << odd_printed;
  EXPECT_EQ(odd_printed.find("\nINJECTED"), std::string::npos) << odd_printed;
  ASSERT_FALSE(plain_out.empty());
  EXPECT_EQ(odd_out, plain_out);
  ASSERT_EQ(hybgen("--target cuda " + shell_word(odd) + " -o " + shell_word(path("out"))).exit_code, 0);
  ASSERT_EQ(hybgen("--target cuda " + shell_word(plain) + " -o " + shell_word(path("out"))).exit_code, 0);
  expect_names_only_in_comments_and_identifiers({".h", ".cu", "_weights.cpp"});
}

TEST_F(HostileInput, GenerationNeverRemovesAFolderOfTheUser) {
  const std::string model = save_mlp("model", [](const std::string& n) { return n; });
  fs::create_directories(path("out/model.h"));
  write_file_atomic(path("out/model.h/notes.txt"), std::string("mine"));
  const auto r = hybgen(shell_word(model) + " -o " + shell_word(path("out")));
  expect_one_error(r, path("out") + "/model.h: exists and is a folder; hybgen replaces only files");
  EXPECT_EQ(read_file_text(path("out/model.h/notes.txt")), "mine");
  EXPECT_FALSE(fs::exists(path("out/model.cpp"))) << "a refused run wrote some of its files";
}

TEST_F(HostileInput, OnlyHybgensOwnStaleWeightsAreRemoved) {
  const std::string model = save_mlp("model", [](const std::string& n) { return n; });
  fs::create_directories(path("out"));
  write_file_atomic(path("out/model_weights.cpp"), std::string("// the user's own file\n"));
  ASSERT_EQ(hybgen(shell_word(model) + " -o " + shell_word(path("out")) + " --external-weights").exit_code, 0);
  EXPECT_EQ(read_file_text(path("out/model_weights.cpp")), "// the user's own file\n");
  // A .weights.bin the manifest does not name is the user's too.
  fs::create_directories(path("mine"));
  write_file_atomic(path("mine/model.weights.bin"), std::string("user data"));
  ASSERT_EQ(hybgen(shell_word(model) + " -o " + shell_word(path("mine"))).exit_code, 0);
  EXPECT_EQ(read_file_text(path("mine/model.weights.bin")), "user data");
}

TEST_F(HostileInput, ImportWritesBothFilesOrNeither) {
  const std::string model = save_mlp("model", [](const std::string& n) { return n; });
  fs::create_directories(path("p.safetensors"));
  const auto r = hybgen("import " + shell_word(model) + " -o " + shell_word(path("p")));
  expect_one_error(r, path("p.safetensors") + ": exists and is a folder");
  EXPECT_FALSE(fs::exists(path("p.json")));
  // An unwritable place fails with the reason, not "Success".
  const auto missing = hybgen("import " + shell_word(model) + " -o " + shell_word(path("no/such/dir/p")));
  expect_one_error(missing, path("no/such/dir/p") + ".json: cannot write: No such file or directory");
}

TEST_F(HostileInput, InspectWritesItsFilesTogetherOrNotAtAll) {
  const std::string model = save_mlp("model", [](const std::string& n) { return n; });
  fs::create_directories(path("g.dot"));
  const auto r = hybgen("inspect " + shell_word(model) + " --report " + shell_word(path("r.html")) + " --dot " +
                        shell_word(path("g.dot")));
  expect_one_error(r, path("g.dot") + ": exists and is a folder");
  EXPECT_FALSE(fs::exists(path("r.html")));
}

TEST_F(HostileInput, DevicesAreNotReadAsFiles) {
  expect_one_error(hybgen("inspect /dev/zero"), "/dev/zero: not a regular file");
  const std::string model = save_mlp("model", [](const std::string& n) { return n; });
  expect_one_error(hybgen("verify " + shell_word(model) + " --weights /dev/zero"), "/dev/zero: not a regular file");
}

TEST_F(HostileInput, AbsurdShapesAreRefusedBeforeAnyWork) {
  for (const std::string shape : {"[9223372036854775807, 2]", "[4294967296, 4294967296]", "[1000000000, 1000000000]"}) {
    std::ofstream(path("huge.json")) << R"({"format": "hybgen-graph", "format_version": 1, "inputs": [{"name": "x", "shape": )"
                                     << shape << R"(}], "outputs": ["y"], "nodes": [{"name": "y", "op": "Activation",
                                     "inputs": ["x"], "attrs": {"act_type": "relu"}}]})";
    for (const std::string command : {"verify", "inspect"})
      expect_one_error(hybgen(command + " " + shell_word(path("huge.json"))),
                       path("huge.json") + ": input 0 ('x'): shape (");
  }
}

}  // namespace
}  // namespace hybgen
