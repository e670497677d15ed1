// hybridize() compiling the optimized graph: outputs as eager, the cache
// (warm hits, new parameter values without recompiling, damaged entries
// rebuilt, two processes on one entry) and the interpreter where no
// compiler is found or compiling fails.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "io/file_util.h"
#include "run_command.h"
#include "runtime-lite/hybgen.h"
#include "runtime/tensor_compare.h"

namespace hybgen {
namespace {
namespace fs = std::filesystem;

class Mlp : public HybridBlock {
 public:
  Mlp() : HybridBlock("jitmlp") {
    fc1 = register_child(std::make_shared<nn::Dense>(64, "relu"));
    fc2 = register_child(std::make_shared<nn::Dense>(10));
  }
  Tensor hybrid_forward(const Ops& F, const Tensor& x) override { return F.softmax((*fc2)((*fc1)(x))); }
  std::shared_ptr<nn::Dense> fc1, fc2;
};

// The compiled graphs under `cache` (folders named by 32 hex digits). Besides
// them the cache holds only precompiled headers ("pch-...", built in the
// background: "build-pch-..."): no build folders left behind.
std::vector<std::string> entries(const std::string& cache) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(cache)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("pch-", 0) == 0 || name.rfind("build-pch-", 0) == 0) continue;
    EXPECT_EQ(name.size(), 32u) << name;
    out.push_back(name);
  }
  return out;
}

std::string precompiled_header_file(const std::string& cache) {
  for (const auto& e : fs::directory_iterator(cache))
    if (e.path().filename().string().rfind("pch-", 0) == 0) return e.path().string() + "/hg_jit_pch.h.gch";
  return "";
}

// These tests check compiling, loading and the cache, not the generated
// code's speed: -O1 compiles their MLP in a fraction of -O3's time. The zoo
// tests hybridize with the default flags. Not tiered: the first call
// compiles (the Tiered tests below run the interpreter tier first).
HybridizeOptions compiling(const std::string& cache) {
  HybridizeOptions options;
  options.compile = true;
  options.cache_dir = cache;
  options.cxx_flags = "-O1 -march=native";
  options.tiered = false;
  return options;
}

struct Case {
  std::shared_ptr<Mlp> net = std::make_shared<Mlp>();
  Tensor x = Tensor::random_normal({2, 32}, 0.0f, 1.0f, 5);
  Tensor eager;
  explicit Case(uint64_t seed = 3) {
    net->initialize(init::Xavier(), seed);
    eager = (*net)(x);
  }
};

TEST(Jit, CompiledOutputsEqualEagerAndTheWarmCacheIsHit) {
  TempDir cache("jit-cache");
  Case c;
  c.net->hybridize(true, compiling(cache.path()));
  EXPECT_LE(max_abs_diff((*c.net)(c.x), c.eager), 1e-6f);
  const JitTimings cold = *c.net->first_call_cost();
  EXPECT_TRUE(cold.compiled) << cold.why_not_compiled;
  EXPECT_FALSE(cold.cache_hit);
  EXPECT_GT(cold.compile_ms, 0);
  EXPECT_EQ(entries(cache.path()).size(), 1u);
  EXPECT_NE(cold.str().find("(compiled)"), std::string::npos) << cold.str();

  c.net->hybridize(true, compiling(cache.path()));  // forgets the traced graph: the next call traces again
  EXPECT_LE(max_abs_diff((*c.net)(c.x), c.eager), 1e-6f);
  const JitTimings warm = *c.net->first_call_cost();
  EXPECT_TRUE(warm.compiled);
  EXPECT_TRUE(warm.cache_hit);
  EXPECT_EQ(warm.library, cold.library);
  EXPECT_EQ(entries(cache.path()).size(), 1u);
}

// A process killed while compiling leaves its build folder: the next compile
// removes it once it is a day old, and never a fresh one (another process's).
TEST(Jit, AbandonedBuildFoldersAreRemoved) {
  TempDir cache("jit-cache");
  const std::string old_build = cache.path() + "/build-0123-abcdef", fresh_build = cache.path() + "/build-4567-abcdef";
  for (const std::string& dir : {old_build, fresh_build}) {
    fs::create_directories(dir);
    std::ofstream(dir + "/hg_jit.cpp") << "// half written\n";
  }
  fs::last_write_time(old_build, fs::file_time_type::clock::now() - std::chrono::hours(25));
  Case c;
  c.net->hybridize(true, compiling(cache.path()));
  EXPECT_LE(max_abs_diff((*c.net)(c.x), c.eager), 1e-6f);
  EXPECT_FALSE(fs::exists(old_build));
  EXPECT_TRUE(fs::exists(fresh_build));
}

TEST(Jit, NewParameterValuesRunWithoutRecompiling) {
  TempDir cache("jit-cache");
  Case c;
  c.net->hybridize(true, compiling(cache.path()));
  (*c.net)(c.x);
  const std::string library = c.net->first_call_cost()->library;
  const auto built = fs::last_write_time(library);

  c.net->fc2->bias().set_data(Tensor::full({10}, 0.5f));
  c.net->fc1->weight().data().data()[3] += 2.0f;  // written in place
  const Tensor changed = (*c.net)(c.x);
  c.net->hybridize(false);
  const Tensor eager = (*c.net)(c.x);
  EXPECT_GT(max_abs_diff(eager, c.eager), 1e-3f);
  EXPECT_LE(max_abs_diff(changed, eager), 1e-6f);
  EXPECT_EQ(entries(cache.path()).size(), 1u);  // the same library, new packed weights
  EXPECT_EQ(fs::last_write_time(library), built);

  // Parameters loaded from a file (another instance's).
  Case other;
  other.net->save_parameters(cache.path() + "/../jit-other.safetensors");
  c.net->hybridize(true, compiling(cache.path()));
  (*c.net)(c.x);
  c.net->load_parameters(cache.path() + "/../jit-other.safetensors");
  EXPECT_LE(max_abs_diff((*c.net)(c.x), other.eager), 1e-6f);
  EXPECT_EQ(entries(cache.path()).size(), 1u);
  fs::remove(cache.path() + "/../jit-other.safetensors");
}

// Damage of each kind an entry can suffer: a truncated library, an edited
// source, a missing checksum. The next load rebuilds it and runs correctly.
TEST(Jit, ADamagedCacheEntryIsRebuilt) {
  TempDir cache("jit-cache");
  Case c;
  c.net->hybridize(true, compiling(cache.path()));
  (*c.net)(c.x);
  const std::string entry = fs::path(c.net->first_call_cost()->library).parent_path().string();
  const std::vector<std::function<void()>> damages = {
      [&] { fs::resize_file(entry + "/hg_jit.so", 1000); },
      [&] { std::ofstream(entry + "/hg_jit.cpp", std::ios::app) << "// edited\n"; },
      [&] { fs::remove(entry + "/checksum"); },
      [&] {  // a damaged precompiled header too: the entry compiles without it
        const std::string pch = precompiled_header_file(cache.path());
        if (!pch.empty()) fs::resize_file(pch, 100);
        fs::remove(entry + "/hg_jit.so");
      },
  };
  for (std::size_t i = 0; i < damages.size(); ++i) {
    c.net->hybridize(false);  // unloads the library before it is damaged
    damages[i]();
    c.net->hybridize(true, compiling(cache.path()));
    EXPECT_LE(max_abs_diff((*c.net)(c.x), c.eager), 1e-6f) << "damage " << i;
    EXPECT_TRUE(c.net->first_call_cost()->compiled) << "damage " << i;
    EXPECT_FALSE(c.net->first_call_cost()->cache_hit) << "damage " << i;
    EXPECT_EQ(entries(cache.path()), std::vector<std::string>{fs::path(entry).filename().string()});
  }
}

// Run as a child by RacingProcessesBothSucceed: hybridizes the MLP with the
// cache in $HYBGEN_JIT_TEST_CACHE and writes its output to $HYBGEN_JIT_TEST_OUT.
TEST(Jit, RaceChild) {
  const char* cache = std::getenv("HYBGEN_JIT_TEST_CACHE");
  const char* out = std::getenv("HYBGEN_JIT_TEST_OUT");
  if (!cache || !out) GTEST_SKIP() << "run by RacingProcessesBothSucceed";
  Case c;
  c.net->hybridize(true, compiling(cache));
  const Tensor y = (*c.net)(c.x);
  ASSERT_TRUE(c.net->first_call_cost()->compiled) << c.net->first_call_cost()->why_not_compiled;
  ASSERT_LE(max_abs_diff(y, c.eager), 1e-6f);
  std::ofstream(out) << y.str();
}

TEST(Jit, RacingProcessesBothSucceed) {
  TempDir work("jit-race");
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  std::string command;
  for (int i = 0; i < 2; ++i)
    command += "HYBGEN_JIT_TEST_CACHE=" + testing::quoted(work.path() + "/cache") + " HYBGEN_JIT_TEST_OUT=" +
               testing::quoted(work.path() + "/out" + std::to_string(i)) + " " + testing::quoted(self) +
               " --gtest_filter=Jit.RaceChild > " + testing::quoted(work.path() + "/log" + std::to_string(i)) +
               " 2>&1 & p" + std::to_string(i) + "=$!; ";
  command += "wait $p0; a=$?; wait $p1; b=$?; test $a = 0 && test $b = 0";
  const auto result = testing::run_command("bash -c " + testing::quoted(command));
  EXPECT_EQ(result.exit_code, 0) << read_file_text(work.path() + "/log0") << read_file_text(work.path() + "/log1");
  const std::string a = read_file_text(work.path() + "/out0"), b = read_file_text(work.path() + "/out1");
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a, b);
  EXPECT_EQ(entries(work.path() + "/cache").size(), 1u);  // one entry, no leftover build folders
}

TEST(Jit, WithoutACompilerTheOptimizedGraphRunsOnTheInterpreter) {
  TempDir cache("jit-cache");
  Case c;
  HybridizeOptions missing = compiling(cache.path());
  missing.cxx = "/nonexistent/c++";
  c.net->hybridize(true, missing);
  EXPECT_LE(max_abs_diff((*c.net)(c.x), c.eager), 1e-6f);
  const JitTimings* cost = c.net->first_call_cost();
  EXPECT_FALSE(cost->compiled);
  EXPECT_NE(cost->why_not_compiled.find("no C++ compiler: '/nonexistent/c++'"), std::string::npos)
      << cost->why_not_compiled;

  HybridizeOptions failing = compiling(cache.path());
  failing.cxx = "false";  // runs, and fails
  c.net->hybridize(true, failing);
  EXPECT_LE(max_abs_diff((*c.net)(c.x), c.eager), 1e-6f);
  EXPECT_FALSE(c.net->first_call_cost()->compiled);
  EXPECT_NE(c.net->first_call_cost()->why_not_compiled.find("did not compile"), std::string::npos);
  EXPECT_TRUE(entries(cache.path()).empty());  // the failed build left nothing

  HybridizeOptions off = compiling(cache.path());
  off.compile = false;
  c.net->hybridize(true, off);
  EXPECT_LE(max_abs_diff((*c.net)(c.x), c.eager), 1e-6f);
  EXPECT_NE(c.net->first_call_cost()->why_not_compiled.find("compiling is off"), std::string::npos);
}

// Tiered (the default): the first call runs on the interpreter while a
// thread compiles; then the library runs.
HybridizeOptions tiered(const std::string& cache) {
  HybridizeOptions options = compiling(cache);
  options.tiered = true;
  return options;
}

// No private build folder ("build-KEY-...") left in `cache`, and every entry whole.
void expect_no_build_left(const std::string& cache) {
  for (const auto& e : fs::directory_iterator(cache)) {
    const std::string name = e.path().filename().string();
    EXPECT_TRUE(name.rfind("build-", 0) != 0 || name.rfind("build-pch-", 0) == 0) << name;
    if (name.size() == 32) {
      EXPECT_TRUE(fs::exists(e.path() / "checksum")) << name;
    }
  }
}

TEST(Tiered, TheFirstCallRunsTheInterpreterAndTheNextTheLibrary) {
  TempDir cache("jit-cache");
  Case c;
  c.net->hybridize(true, tiered(cache.path()));
  const Tensor first = (*c.net)(c.x);
  const JitTimings on_interpreter = *c.net->first_call_cost();
  EXPECT_FALSE(on_interpreter.compiled);
  EXPECT_TRUE(on_interpreter.compiling);
  EXPECT_TRUE(on_interpreter.why_not_compiled.empty());
  EXPECT_GT(on_interpreter.first_call_ms, 0);
  EXPECT_NE(on_interpreter.str().find("interpreter while compiling"), std::string::npos) << on_interpreter.str();

  ASSERT_TRUE(c.net->compiled(/*wait=*/true)) << c.net->first_call_cost()->why_not_compiled;
  const Tensor second = (*c.net)(c.x);
  const JitTimings on_library = *c.net->first_call_cost();
  EXPECT_TRUE(on_library.compiled);
  EXPECT_FALSE(on_library.compiling);
  EXPECT_GT(on_library.compile_ms, 0);
  EXPECT_GT(on_library.compiled_after_ms, 0);
  EXPECT_EQ(on_library.first_call_ms, on_interpreter.first_call_ms);
  EXPECT_NE(on_library.str().find("(compiled)"), std::string::npos) << on_library.str();
  EXPECT_LE(max_abs_diff(first, c.eager), 1e-6f);
  EXPECT_LE(max_abs_diff(second, c.eager), 1e-6f);
  EXPECT_LE(max_abs_diff(first, second), 1e-6f);
  EXPECT_EQ(entries(cache.path()).size(), 1u);
}

// Without compiled(): calls go on on the interpreter and one of them switches.
TEST(Tiered, ACallSwitchesToTheLibraryOnceItIsLoaded) {
  TempDir cache("jit-cache");
  Case c;
  c.net->hybridize(true, tiered(cache.path()));
  int interpreted = 0;
  for (;;) {
    const Tensor y = (*c.net)(c.x);
    ASSERT_LE(max_abs_diff(y, c.eager), 1e-6f) << "call " << interpreted;
    const JitTimings* cost = c.net->first_call_cost();
    if (cost->compiled) break;
    ASSERT_TRUE(cost->compiling) << cost->why_not_compiled;
    ++interpreted;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_GE(interpreted, 1);
  EXPECT_FALSE(c.net->first_call_cost()->library.empty());
}

// New parameter values while the library compiles: the interpreter runs them
// at once, and the library, once loaded, gets them too.
TEST(Tiered, ParametersChangedWhileCompilingReachTheLibrary) {
  TempDir cache("jit-cache");
  Case c;
  c.net->hybridize(true, tiered(cache.path()));
  (*c.net)(c.x);
  c.net->fc2->bias().set_data(Tensor::random_normal({10}, 0.0f, 1.0f, 9));
  const Tensor changed = (*c.net)(c.x);
  ASSERT_TRUE(c.net->compiled(true)) << c.net->first_call_cost()->why_not_compiled;
  const Tensor compiled = (*c.net)(c.x);
  c.net->hybridize(false);
  const Tensor eager = (*c.net)(c.x);
  EXPECT_GT(max_abs_diff(eager, c.eager), 1e-3f);
  EXPECT_LE(max_abs_diff(changed, eager), 1e-6f);
  EXPECT_LE(max_abs_diff(compiled, eager), 1e-6f);
  EXPECT_EQ(entries(cache.path()).size(), 1u);
}

TEST(Tiered, AFailedCompileStaysOnTheInterpreterWithTheReason) {
  TempDir cache("jit-cache");
  Case c;
  HybridizeOptions failing = tiered(cache.path());
  failing.cxx = "false";  // runs, and fails
  c.net->hybridize(true, failing);
  EXPECT_LE(max_abs_diff((*c.net)(c.x), c.eager), 1e-6f);
  EXPECT_FALSE(c.net->compiled(/*wait=*/true));
  EXPECT_LE(max_abs_diff((*c.net)(c.x), c.eager), 1e-6f);
  const JitTimings* cost = c.net->first_call_cost();
  EXPECT_FALSE(cost->compiled);
  EXPECT_FALSE(cost->compiling);
  EXPECT_NE(cost->why_not_compiled.find("did not compile"), std::string::npos) << cost->why_not_compiled;
  EXPECT_NE(cost->str().find("(interpreter: the generated code did not compile"), std::string::npos) << cost->str();
  EXPECT_TRUE(entries(cache.path()).empty());
  expect_no_build_left(cache.path());

  // New parameter values do not start the failing compile again.
  c.net->fc2->bias().set_data(Tensor::full({10}, 0.5f));
  (*c.net)(c.x);
  EXPECT_FALSE(c.net->first_call_cost()->compiling);

  HybridizeOptions missing = tiered(cache.path());
  missing.cxx = "/nonexistent/c++";
  c.net->hybridize(true, missing);
  (*c.net)(c.x);
  EXPECT_FALSE(c.net->compiled(true));
  EXPECT_NE(c.net->first_call_cost()->why_not_compiled.find("no C++ compiler: '/nonexistent/c++'"), std::string::npos);
}

// Values are renamed canonically before hashing: a second instance of one
// network (other prefixes, other weights) loads the first one's library.
TEST(Tiered, TwoInstancesShareOneCachedLibrary) {
  TempDir cache("jit-cache");
  Case a(3), b(11);
  ASSERT_NE(a.net->prefix(), b.net->prefix());
  for (Case* c : {&a, &b}) {
    c->net->hybridize(true, tiered(cache.path()));
    (*c->net)(c->x);
    ASSERT_TRUE(c->net->compiled(true)) << c->net->first_call_cost()->why_not_compiled;
    EXPECT_LE(max_abs_diff((*c->net)(c->x), c->eager), 1e-6f);
  }
  EXPECT_GT(max_abs_diff(a.eager, b.eager), 1e-3f);
  EXPECT_FALSE(a.net->first_call_cost()->cache_hit);
  EXPECT_TRUE(b.net->first_call_cost()->cache_hit);
  EXPECT_EQ(a.net->first_call_cost()->library, b.net->first_call_cost()->library);
  EXPECT_EQ(entries(cache.path()).size(), 1u);
}

// Two threads call one block at once, from its first call on, across the
// switch: each gets its own input's result (calls of one block take turns).
TEST(Tiered, TwoThreadsCallingOneBlockEachGetTheirResult) {
  TempDir cache("jit-cache");
  Case c;
  std::vector<Tensor> xs, expected;
  for (uint64_t i = 0; i < 4; ++i) {
    xs.push_back(Tensor::random_normal({2, 32}, 0.0f, 1.0f, 100 + i));
    expected.push_back((*c.net)(xs.back()));
  }
  c.net->hybridize(true, tiered(cache.path()));
  std::atomic<bool> switched{false};
  float worst[2] = {0, 0};
  int calls[2] = {0, 0};
  const auto caller = [&](int t) {
    int after_switch = 0;
    for (int i = 0; after_switch < 20; ++i) {
      const std::size_t k = static_cast<std::size_t>(i + 2 * t) % xs.size();
      worst[t] = std::max(worst[t], max_abs_diff((*c.net)(xs[k]), expected[k]));
      ++calls[t];
      if (switched || (t == 0 && c.net->compiled())) switched = true;
      if (switched) ++after_switch;
    }
  };
  std::thread first(caller, 0), second(caller, 1);
  first.join();
  second.join();
  EXPECT_LE(worst[0], 1e-6f);
  EXPECT_LE(worst[1], 1e-6f);
  EXPECT_GE(calls[0], 20);
  EXPECT_GE(calls[1], 20);
  EXPECT_TRUE(c.net->compiled());
}

// A block destroyed while its library compiles cancels the compile: the
// cache gets the whole entry or nothing, and no private build folder.
TEST(Tiered, ABlockDestroyedWhileCompilingLeavesNoBuildBehind) {
  TempDir cache("jit-cache");
  {
    Case c;
    c.net->hybridize(true, tiered(cache.path()));
    (*c.net)(c.x);
    EXPECT_TRUE(c.net->first_call_cost()->compiling);
  }
  expect_no_build_left(cache.path());
  EXPECT_LE(entries(cache.path()).size(), 1u);
}

// Run as a child by AProcessExitingWhileCompilingLeavesNoBuildBehind: starts
// a compile in $HYBGEN_JIT_TEST_CACHE and exits without destroying the block.
TEST(Tiered, ExitChild) {
  const char* cache = std::getenv("HYBGEN_JIT_TEST_CACHE");
  if (!cache || !std::getenv("HYBGEN_JIT_TEST_EXIT")) GTEST_SKIP() << "run by AProcessExitingWhileCompiling...";
  static Case* never_destroyed = new Case;
  never_destroyed->net->hybridize(true, tiered(cache));
  (*never_destroyed->net)(never_destroyed->x);
  std::printf("compiling: %d\n", never_destroyed->net->first_call_cost()->compiling ? 1 : 0);
  std::fflush(stdout);
  std::exit(0);  // with the compile in flight
}

TEST(Tiered, AProcessExitingWhileCompilingLeavesNoBuildBehind) {
  TempDir work("jit-exit");
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  // The child leaks its block on purpose, and with it the compile thread's
  // handle: ThreadSanitizer, where the suite runs under it, is told so.
  const auto result = testing::run_command(
      "TSAN_OPTIONS=\"${TSAN_OPTIONS:+$TSAN_OPTIONS:}report_thread_leaks=0\" HYBGEN_JIT_TEST_EXIT=1 "
      "HYBGEN_JIT_TEST_CACHE=" +
      testing::quoted(work.path() + "/cache") + " " + testing::quoted(self) + " --gtest_filter=Tiered.ExitChild 2>&1");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("compiling: 1"), std::string::npos) << result.output;
  expect_no_build_left(work.path() + "/cache");
  EXPECT_LE(entries(work.path() + "/cache").size(), 1u);
}

// HybridizeOptions::max_batch: calls at 1, 3 and 8 items run one library,
// compiled once for 1..8 (one cache entry), each as eager; the interpreter
// tier runs the item graph item by item meanwhile; a batch over the bound
// compiles a graph of its own shape.
TEST(Batch, CallsAtSeveralBatchesShareOneLibrary) {
  TempDir cache("jit-cache");
  Case c;
  HybridizeOptions options = tiered(cache.path());
  options.max_batch = 8;
  c.net->hybridize(true, options);
  const Tensor x8 = Tensor::random_normal({8, 32}, 0.0f, 1.0f, 11);
  Tensor x3({3, 32}), x1({1, 32});
  std::memcpy(x3.data(), x8.data(), 3 * 32 * sizeof(float));
  std::memcpy(x1.data(), x8.data(), 32 * sizeof(float));
  c.net->hybridize(false);
  const Tensor eager8 = (*c.net)(x8), eager3 = (*c.net)(x3), eager1 = (*c.net)(x1);
  c.net->hybridize(true, options);
  // On the interpreter, item by item.
  EXPECT_LE(max_abs_diff((*c.net)(x3), eager3), 1e-6f);
  EXPECT_FALSE(c.net->first_call_cost()->compiled);
  ASSERT_TRUE(c.net->compiled(/*wait=*/true)) << c.net->first_call_cost()->why_not_compiled;
  const std::string library = c.net->first_call_cost()->library;
  for (const auto& [x, eager] : {std::make_pair(x3, eager3), std::make_pair(x8, eager8), std::make_pair(x1, eager1)}) {
    const Tensor y = (*c.net)(x);
    EXPECT_EQ(y.shape(), eager.shape());
    EXPECT_LE(max_abs_diff(y, eager), 1e-6f) << shape_str(x.shape());
    EXPECT_TRUE(c.net->first_call_cost()->compiled);
    EXPECT_EQ(c.net->first_call_cost()->library, library);
  }
  EXPECT_EQ(entries(cache.path()).size(), 1u);
  // Over the bound: a graph of that shape, compiled on its own.
  const Tensor x9 = Tensor::random_normal({9, 32}, 0.0f, 1.0f, 12);
  EXPECT_EQ((*c.net)(x9).shape(), (Shape{9, 10}));
  ASSERT_TRUE(c.net->compiled(/*wait=*/true));
  EXPECT_NE(c.net->first_call_cost()->library, library);
  EXPECT_EQ(entries(cache.path()).size(), 2u);
}

// A block that computes across its items (a softmax over the first axis)
// cannot share one library between batches: each batch compiles its own
// graph, as without max_batch, and gives eager's values.
class AcrossItems : public HybridBlock {
 public:
  AcrossItems() : HybridBlock("acrossitems") {}
  Tensor hybrid_forward(const Ops& F, const Tensor& x) override { return F.softmax(x, 0); }
};

TEST(Batch, ABlockComputingAcrossItemsCompilesPerShape) {
  TempDir cache("jit-cache");
  auto net = std::make_shared<AcrossItems>();
  net->initialize(init::Xavier(), 1);
  const Tensor x2 = Tensor::random_normal({2, 5}, 0.0f, 1.0f, 13), x4 = Tensor::random_normal({4, 5}, 0.0f, 1.0f, 14);
  const Tensor eager2 = (*net)(x2), eager4 = (*net)(x4);
  HybridizeOptions options = compiling(cache.path());
  options.max_batch = 8;
  net->hybridize(true, options);
  EXPECT_LE(max_abs_diff((*net)(x2), eager2), 1e-6f);
  EXPECT_LE(max_abs_diff((*net)(x4), eager4), 1e-6f);
  EXPECT_EQ(entries(cache.path()).size(), 2u);
}

TEST(Jit, TheEnvironmentChoosesTheDefaults) {
  const char* saved = std::getenv("HYBGEN_JIT");
  const std::string restore = saved ? saved : "";
  setenv("HYBGEN_JIT", "0", 1);
  EXPECT_FALSE(HybridizeOptions().compile);
  setenv("HYBGEN_JIT", "1", 1);
  EXPECT_TRUE(HybridizeOptions().compile);
  if (saved) setenv("HYBGEN_JIT", restore.c_str(), 1);
  else unsetenv("HYBGEN_JIT");

  const char* saved_cache = std::getenv("HYBGEN_CACHE_DIR");
  const std::string restore_cache = saved_cache ? saved_cache : "";
  HybridizeOptions options;
  options.cache_dir = "/somewhere";
  EXPECT_EQ(jit_cache_dir(options), "/somewhere");
  options.cache_dir.clear();
  setenv("HYBGEN_CACHE_DIR", "/from/env", 1);
  EXPECT_EQ(jit_cache_dir(options), "/from/env");
  unsetenv("HYBGEN_CACHE_DIR");
  EXPECT_NE(jit_cache_dir(options).find("hybgen"), std::string::npos);
  if (saved_cache) setenv("HYBGEN_CACHE_DIR", restore_cache.c_str(), 1);
}

}  // namespace
}  // namespace hybgen
