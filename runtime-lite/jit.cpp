#include "runtime-lite/jit.h"

#include <dlfcn.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <thread>

#include "emit/backends.h"
#include "emit/cpp_emitter.h"
#include "emit/templates.h"
#include "io/file_util.h"
#include "ir/error.h"
#include "ir/fnv1a.h"
#include "passes/passes.h"
#include "targets/toolchain.h"
#include "version.h"

namespace hybgen {
namespace fs = std::filesystem;
namespace {

// The generated files' NAME; every library has its own, so one name serves.
constexpr const char* kName = "hg_jit";
constexpr const char* kLibrary = "hg_jit.so";
constexpr const char* kChecksum = "checksum";

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

uint64_t fnv1a(const std::string& bytes, uint64_t hash = kFnv1a64Offset) {
  return fnv1a64(bytes.data(), bytes.size(), hash);
}

std::string hex16(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// What the checksum file holds for a library's bytes.
std::string checksum_line(const std::string& library_bytes) {
  return hex16(fnv1a(library_bytes)) + " " + std::to_string(library_bytes.size()) + "\n";
}

bool read_if_present(const std::string& path, std::string& out) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return false;
  try {
    out = read_file_text(path, limits::kMaxDataFileBytes);
    return true;
  } catch (const Error&) {
    return false;
  }
}

// Whether `entry` holds exactly what `sources` builds and a library whose
// bytes match the checksum written after it was built.
bool entry_is_whole(const std::string& entry, const JitSources& sources) {
  std::string text;
  const std::pair<const char*, const std::string*> expected[] = {
      {"hg_jit.h", &sources.header}, {"hg_jit.cpp", &sources.source}, {"hg_jit_entry.cpp", &sources.entry}};
  for (const auto& [file, content] : expected)
    if (!read_if_present(entry + "/" + file, text) || text != *content) return false;
  std::string checksum, library;
  return read_if_present(entry + "/" + kChecksum, checksum) && read_if_present(entry + "/" + kLibrary, library) &&
         checksum == checksum_line(library);
}

// A process-wide counter for unique names beside the pid.
std::string unique_suffix() {
  static std::atomic<unsigned> counter{0};
  return std::to_string(getpid()) + "-" + std::to_string(counter++);
}

// Moves a damaged entry out of the way, then deletes it. Another process may
// be doing the same: whoever renames it first deletes it.
void discard_entry(const std::string& entry) {
  const std::string aside = entry + ".stale-" + unique_suffix();
  if (std::rename(entry.c_str(), aside.c_str()) != 0) return;
  std::error_code ec;
  fs::remove_all(aside, ec);
}

// Removes the private build folders ("build-...") that processes killed
// while compiling left in the cache, once a day old: no compile takes that long.
void remove_abandoned_builds(const std::string& cache) {
  std::error_code ec;
  const auto day_ago = fs::file_time_type::clock::now() - std::chrono::hours(24);
  for (fs::directory_iterator it(cache, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind("build-", 0) != 0 || !it->is_directory(ec)) continue;
    const auto written = fs::last_write_time(it->path(), ec);
    if (!ec && written < day_ago) discard_entry(it->path().string());
  }
}

// `command` run by /bin/sh in a process group of its own, as std::system
// would; true when it exits with status 0. While it runs, `cancel` (when
// given) is read every few milliseconds: once set, the whole group (the
// compiler driver and its children) is killed and Error thrown.
bool run_shell(const std::string& command, const std::atomic<bool>* cancel) {
  if (!cancel) return std::system(command.c_str()) == 0;
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  const char* argv[] = {"sh", "-c", command.c_str(), nullptr};
  pid_t pid = 0;
  const int failed = posix_spawn(&pid, "/bin/sh", nullptr, &attributes, const_cast<char* const*>(argv), environ);
  posix_spawnattr_destroy(&attributes);
  if (failed != 0) throw Error(std::string("cannot start /bin/sh to compile: ") + std::strerror(failed));
  for (;;) {
    int status = 0;
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) return WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (done < 0 && errno != EINTR) throw Error(std::string("waiting for the compiler: ") + std::strerror(errno));
    if (cancel->load(std::memory_order_relaxed)) {
      kill(-pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      throw Error("the compile was cancelled");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

// Compiles `sources` in a private folder of the cache, then renames it to
// `entry`. Returns false when another process put `entry` there first.
// `pch`: a header to -include first (precompiled_header), or "". Cancelled,
// the private folder is removed and nothing reaches `entry`.
bool build_entry(const std::string& cache, const std::string& entry, const JitSources& sources,
                 const Toolchain& toolchain, const std::string& flags, const std::string& pch,
                 const std::atomic<bool>* cancel) {
  TempDir build("build-" + sources.key, cache);
  const std::string d = build.path() + "/";
  write_file_atomic(d + "hg_jit.h", sources.header);
  write_file_atomic(d + "hg_jit.cpp", sources.source);
  write_file_atomic(d + "hg_jit_entry.cpp", sources.entry);
  const auto compile = [&](const std::string& include) {
    const std::string command = toolchain.cxx + " " + flags + " -shared" + include + " -I" +
                                shell_quote(build.path()) + " " + shell_quote(d + "hg_jit.cpp") + " " +
                                shell_quote(d + "hg_jit_entry.cpp") + " -o " + shell_quote(d + kLibrary) + " > " +
                                shell_quote(d + "compile.log") + " 2>&1";
    return run_shell(command, cancel);
  };
  // A damaged precompiled header fails the compile: then without it, and
  // it is removed so that the next compile builds it again.
  if (pch.empty() || !compile(" -include " + shell_quote(pch))) {
    if (!compile("")) {
      std::string log = read_file_text(d + "compile.log");
      if (log.size() > 4000) log = log.substr(0, 4000) + "\n[...]";
      throw Error("the generated code did not compile (" + toolchain.cxx + " " + flags + "):\n" + log);
    }
    if (!pch.empty()) discard_entry(fs::path(pch).parent_path().string());
  }
  write_file_atomic(d + kChecksum, checksum_line(read_file_text(d + kLibrary, limits::kMaxDataFileBytes)));
  if (std::rename(build.path().c_str(), entry.c_str()) == 0) {
    build.release();
    return true;
  }
  if (errno == EEXIST || errno == ENOTEMPTY) return false;
  throw Error(entry + ": cannot move the compiled graph into the cache: " + std::strerror(errno));
}

// The compiler's flags: the target's instructions, the caller's
// optimization, and those of a library that exports only its entry point
// (without -shared, which the link adds).
std::string compile_flags(const CompiledGraph& compiled, const std::string& cxx_flags) {
  const std::string& target = compiled.target.compiler_flags;
  return (target.empty() ? "" : target + " ") + cxx_flags + " -fPIC -fvisibility=hidden -fvisibility-inlines-hidden";
}

// The headers every generated source of `target` includes, precompiled once
// per compiler and flags into the cache: the intrinsics header alone takes
// about half of a small model's compile. Returns the header to pass with
// -include (the compiler takes HEADER.gch beside it where it can, else reads
// the header) once it is built, else "". The first call starts building it
// in the background, so that the graph compiling now does not wait for it;
// never an error.
std::string precompiled_header(const std::string& cache, const Target& target, const Toolchain& toolchain,
                               const std::string& flags) {
  if (target.intrinsics_header.empty()) return "";
  const std::string text = "// Headers every hybgen source for " + target.name +
                           " includes, precompiled once.\n#include <cmath>\n#include <cstddef>\n#include "
                           "<cstdint>\n#include <cstring>\n#include <" + target.intrinsics_header + ">\n";
  const std::string dir = cache + "/pch-" + hex16(fnv1a(std::string(kVersion) + "\n" + toolchain.cxx + "\n" + flags +
                                                       "\n" + text));
  const std::string header = dir + "/hg_jit_pch.h";
  std::string built;
  if (read_if_present(header, built) && built == text && read_if_present(dir + "/done", built)) return header;
  if (fs::exists(dir)) return "";  // damaged: compile without it
  try {
    TempDir build("build-pch", cache);
    const std::string d = build.path() + "/";
    write_file_atomic(d + "hg_jit_pch.h", text);
    // Built, marked done and renamed into place by a detached shell; whoever
    // renames first wins, the others remove theirs.
    const std::string q = shell_quote(build.path());
    const std::string command = "(" + toolchain.cxx + " " + flags + " -x c++-header " + shell_quote(d + "hg_jit_pch.h") +
                                " -o " + shell_quote(d + "hg_jit_pch.h.gch") + " && echo ok > " +
                                shell_quote(d + "done") + " && mv -T " + q + " " + shell_quote(dir) + " || rm -rf " +
                                q + ") > /dev/null 2>&1 < /dev/null &";
    if (std::system(command.c_str()) == 0) build.release();
  } catch (const Error&) {
  }
  return "";
}

// The C++ compiler named by `cxx` ("g++", "/usr/bin/clang++", "ccache g++"),
// if it can be run.
bool compiler_present(const std::string& cxx) {
  const std::string program = cxx.substr(0, cxx.find(' '));
  if (program.empty()) return false;
  if (program.find('/') != std::string::npos) return access(program.c_str(), X_OK) == 0;
  return on_path(program);
}

std::shared_ptr<uint8_t> aligned_bytes(std::size_t bytes, std::size_t alignment) {
  if (alignment < alignof(std::max_align_t)) alignment = alignof(std::max_align_t);
  const std::size_t rounded = (std::max<std::size_t>(bytes, 1) + alignment - 1) / alignment * alignment;
  void* p = std::aligned_alloc(alignment, rounded);
  if (!p) throw Error("out of memory allocating " + std::to_string(rounded) + " bytes for a compiled graph");
  return std::shared_ptr<uint8_t>(static_cast<uint8_t*>(p), std::free);
}

template <typename F>
F symbol(void* handle, const char* name, const std::string& library) {
  void* p = dlsym(handle, name);
  if (!p) throw Error(library + ": has no " + name + " (not a hybgen library)");
  return reinterpret_cast<F>(p);
}

}  // namespace

bool HybridizeOptions::compile_by_default() {
  const char* jit = std::getenv("HYBGEN_JIT");
  if (!jit) return true;
  const std::string v = jit;
  return !(v == "0" || v == "off" || v == "OFF" || v == "false" || v == "no");
}

std::string jit_cache_dir(const HybridizeOptions& options) {
  if (!options.cache_dir.empty()) return options.cache_dir;
  const auto env = [](const char* name) {
    const char* v = std::getenv(name);
    return std::string(v ? v : "");
  };
  if (!env("HYBGEN_CACHE_DIR").empty()) return env("HYBGEN_CACHE_DIR");
  if (!env("XDG_CACHE_HOME").empty()) return env("XDG_CACHE_HOME") + "/hybgen";
  if (!env("HOME").empty()) return env("HOME") + "/.cache/hybgen";
  return (env("TMPDIR").empty() ? std::string("/tmp") : env("TMPDIR")) + "/hybgen-cache-" + std::to_string(getuid());
}

std::string JitTimings::str() const {
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "trace %.1f ms, optimize %.1f ms, interpreter %.1f ms, first call %.1f ms; generate %.1f ms, "
                "compile %.0f ms, load %.1f ms",
                trace_ms, optimize_ms, interpreter_ms, first_call_ms, generate_ms, compile_ms, load_ms);
  std::string out = buf;
  if (compiled) {
    if (compiled_after_ms > 0) {
      std::snprintf(buf, sizeof buf, ", loaded %.0f ms after the first call's start", compiled_after_ms);
      out += buf;
    }
    return out + (cache_hit ? " (compiled, from the cache)" : " (compiled)");
  }
  if (compiling) return out + " (interpreter while compiling)";
  return out + " (interpreter: " + why_not_compiled + ")";
}

JitSources jit_sources(const CompiledGraph& compiled, const std::string& cxx, const std::string& flags) {
  CppEmitOptions emit{kName, kName, compiled.graph.name};
  emit.external_weights = true;
  emit.weights_checksum = false;
  JitSources out;
  for (EmittedFile& f : emit_cpp(compiled, emit)) {
    if (f.filename == std::string(kName) + ".h") out.header = std::move(f.content);
    else if (f.filename == std::string(kName) + ".cpp") out.source = std::move(f.content);
    else if (f.filename == std::string(kName) + ".weights.bin") out.weights.assign(f.content.begin(), f.content.end());
  }
  const Graph& g = compiled.graph;
  std::string args;
  for (std::size_t i = 0; i < g.inputs.size(); ++i) args += "inputs[" + std::to_string(i) + "], ";
  std::vector<std::string> written;  // run()'s output parameters: outputs that are not inputs, once each
  for (const auto& out_value : g.outputs)
    if (!g.is_input(out_value) && std::find(written.begin(), written.end(), out_value) == written.end()) {
      args += "outputs[" + std::to_string(written.size()) + "], ";
      written.push_back(out_value);
    }
  if (g.batch.variable()) args += "batch, ";
  // The entry's signature is part of what a cached library must match.
  const std::string what =
      std::string(kVersion) + "\nentry 2\n" + compiled.target.name + "\n" + cxx + "\n" + flags + "\n";
  const std::string hashed = what + out.header + out.source;
  out.key = hex16(fnv1a(hashed)) + hex16(fnv1a(hashed, 0x84222325cbf29ce4ull));
  out.entry = fill_template(template_text("jit_entry.cpp"),
                            {{"NAME", kName}, {"NAMESPACE", kName}, {"VERSION", kVersion}, {"ARGS", args},
                             {"KEY", out.key}},
                            "jit_entry.cpp");
  return out;
}

std::unique_ptr<NativeGraph> NativeGraph::load(const CompiledGraph& compiled, const HybridizeOptions& options,
                                               JitTimings& timings, const std::atomic<bool>* cancel) {
  // Errors here for a target this machine cannot run, before any work.
  const Toolchain toolchain = toolchain_for(compiled.target, options.cxx, Emulation::kRefused);
  if (backend_traits(compiled.target.backend).device_buffers || !toolchain.runner.empty())
    throw Error("hybridize() compiles for this machine's C++ targets only, not " + compiled.target.name);
  if (!compiler_present(toolchain.cxx))
    throw Error("no C++ compiler: '" + toolchain.cxx + "' is not on the PATH (install g++ or clang, or set CXX)");
  const std::string flags = compile_flags(compiled, options.cxx_flags);

  auto t0 = Clock::now();
  JitSources sources = jit_sources(compiled, toolchain.cxx, flags);
  timings.generate_ms = ms_since(t0);

  t0 = Clock::now();
  const std::string cache = jit_cache_dir(options);
  std::error_code ec;
  fs::create_directories(cache, ec);
  if (ec) throw Error(cache + ": cannot create the cache folder for compiled graphs: " + ec.message());
  const std::string entry = cache + "/" + sources.key;
  bool built = false;
  for (int attempt = 0;; ++attempt) {
    if (entry_is_whole(entry, sources)) break;
    if (attempt == 3) throw Error(entry + ": the cache entry stays damaged after rebuilding it three times");
    if (fs::exists(entry, ec)) discard_entry(entry);
    if (attempt == 0) remove_abandoned_builds(cache);
    const std::string pch = precompiled_header(cache, compiled.target, toolchain, flags);
    built = build_entry(cache, entry, sources, toolchain, flags, pch, cancel) || built;
  }
  timings.compile_ms = ms_since(t0);
  timings.cache_hit = !built;

  t0 = Clock::now();
  const std::string library = entry + "/" + kLibrary;
  std::unique_ptr<NativeGraph> native(new NativeGraph);
  native->handle_ = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!native->handle_) throw Error(library + ": cannot be loaded: " + dlerror());
  native->run_ = symbol<RunFunction>(native->handle_, "hybgen_jit_run", library);
  using Text = const char* (*)();
  using Size = unsigned long (*)();
  if (symbol<Text>(native->handle_, "hybgen_jit_key", library)() != sources.key)
    throw Error(library + ": was built for another graph than its folder's name says");
  native->key_ = sources.key;
  native->cxx_ = toolchain.cxx;
  native->flags_ = flags;
  native->weight_bytes_ = symbol<Size>(native->handle_, "hybgen_jit_weight_bytes", library)();
  if (native->weight_bytes_ != sources.weights.size())
    throw Error(library + ": takes " + std::to_string(native->weight_bytes_) + " bytes of weights, the graph has " +
                std::to_string(sources.weights.size()));
  native->weights_ = aligned_bytes(native->weight_bytes_,
                                   symbol<Size>(native->handle_, "hybgen_jit_weight_alignment", library)());
  if (!sources.weights.empty()) std::memcpy(native->weights_.get(), sources.weights.data(), sources.weights.size());
  native->arena_ = aligned_bytes(symbol<Size>(native->handle_, "hybgen_jit_arena_bytes", library)(),
                                 symbol<Size>(native->handle_, "hybgen_jit_arena_alignment", library)());

  const Graph& g = compiled.graph;
  const std::set<std::string> items = batch_values(g);
  native->batch_ = g.batch;
  native->inputs_ = g.inputs;
  for (const auto& in : g.inputs) {
    native->input_types_.push_back(g.type(in));
    native->input_items_.push_back(items.count(in) != 0);
  }
  std::vector<std::string> written;
  for (const auto& out : g.outputs) {
    native->output_types_.push_back(g.type(out));
    const auto input = std::find(g.inputs.begin(), g.inputs.end(), out);
    if (input != g.inputs.end()) {
      native->output_source_.push_back(-1 - static_cast<int>(input - g.inputs.begin()));
      continue;
    }
    auto at = std::find(written.begin(), written.end(), out);
    if (at == written.end()) {
      written.push_back(out);
      native->argument_types_.push_back(g.type(out));
      native->argument_items_.push_back(items.count(out) != 0);
      at = written.end() - 1;
    }
    native->output_source_.push_back(static_cast<int>(at - written.begin()));
  }
  timings.load_ms = ms_since(t0);
  timings.compiled = true;
  timings.library = library;
  return native;
}

NativeGraph::~NativeGraph() {
  if (handle_) dlclose(handle_);
}

bool NativeGraph::replace_weights(const CompiledGraph& compiled) {
  JitSources sources = jit_sources(compiled, cxx_, flags_);
  if (sources.key != key_ || sources.weights.size() != weight_bytes_) return false;
  if (!sources.weights.empty()) std::memcpy(weights_.get(), sources.weights.data(), sources.weights.size());
  return true;
}

std::vector<Tensor> NativeGraph::run(const std::vector<const Tensor*>& given) {
  if (given.size() != inputs_.size())
    throw Error("compiled graph: takes " + std::to_string(inputs_.size()) + " inputs, given " +
                std::to_string(given.size()));
  // A run-time batch: the items the first batched input holds.
  int64_t batch = 1;
  for (std::size_t i = 0; i < inputs_.size(); ++i)
    if (batch_.variable() && input_items_[i] && !given[i]->shape().empty()) {
      batch = given[i]->shape()[0] / input_types_[i].shape[0];
      break;
    }
  if (batch_.variable() && (batch < batch_.min || batch > batch_.max))
    throw Error("compiled graph: takes " + std::to_string(batch_.min) + " to " + std::to_string(batch_.max) +
                " items, given " + std::to_string(batch));
  auto at_batch = [&](Shape shape, bool items) {
    if (items) shape[0] *= batch;
    return shape;
  };
  std::vector<const float*> in(inputs_.size());
  for (std::size_t i = 0; i < inputs_.size(); ++i) {
    const Shape expected = at_batch(input_types_[i].shape, batch_.variable() && input_items_[i]);
    if (given[i]->shape() != expected)
      throw Error("compiled graph: input '" + inputs_[i] + "' has shape " + shape_str(given[i]->shape()) +
                  ", the graph was compiled for " + shape_str(expected));
    in[i] = given[i]->data();
  }
  std::vector<Tensor> arguments;
  std::vector<float*> out;
  for (std::size_t i = 0; i < argument_types_.size(); ++i) {
    arguments.emplace_back(at_batch(argument_types_[i].shape, batch_.variable() && argument_items_[i]));
    out.push_back(arguments.back().data());
  }
  const int status = run_(in.data(), out.data(), batch, weights_.get(), arena_.get());
  if (status != 0) throw Error("compiled graph: run() returned status " + std::to_string(status));
  std::vector<Tensor> results;
  std::vector<bool> taken(arguments.size(), false);
  for (int source : output_source_) {
    if (source < 0) {
      results.push_back(given[static_cast<std::size_t>(-1 - source)]->copy());
    } else if (taken[static_cast<std::size_t>(source)]) {
      results.push_back(arguments[static_cast<std::size_t>(source)].copy());
    } else {
      taken[static_cast<std::size_t>(source)] = true;
      results.push_back(arguments[static_cast<std::size_t>(source)]);
    }
  }
  return results;
}

}  // namespace hybgen
