// A user's program on the hybgen frontend, built against an installed hybgen
// (find_package(hybgen) + hybgen::runtime): the seed MLP of the Gluon
// hybridize tutorial written as a block, run eagerly, hybridized, checked
// against the eager result and exported.
//   hybridize_app [OUT_DIR]    writes OUT_DIR/seed_mlp.json + .safetensors
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include "io/model_json.h"
#include "runtime-lite/hybgen.h"

namespace {

using namespace hybgen;

// Dense(256) -> relu -> Dense(128) -> relu -> Dense(2), in_units deferred to
// the first call: the seed MLP, as the README writes a block.
class Net : public HybridBlock {
 public:
  Net() : HybridBlock("net") {
    fc1 = register_child(std::make_shared<nn::Dense>(256));
    fc2 = register_child(std::make_shared<nn::Dense>(128));
    fc3 = register_child(std::make_shared<nn::Dense>(2));
  }
  Tensor hybrid_forward(const Ops& F, const Tensor& x) override {
    Tensor h = F.relu((*fc1)(x));
    h = F.relu((*fc2)(h));
    return (*fc3)(h);
  }
  std::shared_ptr<nn::Dense> fc1, fc2, fc3;
};

float max_difference(const Tensor& a, const Tensor& b) {
  if (a.size() != b.size()) return INFINITY;
  float diff = 0;
  for (int64_t i = 0; i < a.size(); ++i) diff = std::max(diff, std::fabs(a.data()[i] - b.data()[i]));
  return diff;
}

double milliseconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 2) {
    std::fprintf(stderr, "usage: hybridize_app [OUT_DIR]\n");
    return 2;
  }
  const std::string prefix = std::string(argc == 2 ? argv[1] : ".") + "/seed_mlp";
  try {
    auto net = std::make_shared<Net>();
    net->initialize(init::Xavier(), /*seed=*/42);
    const Tensor x = Tensor::random_normal({4, 512}, 0.0f, 1.0f, /*seed=*/7);

    const Tensor eager = (*net)(x);
    net->hybridize();
    auto start = std::chrono::steady_clock::now();
    const Tensor first = (*net)(x);  // traces and optimizes; runs on the interpreter while it compiles
    const double first_ms = milliseconds_since(start);
    const bool compiled = net->compiled(/*wait=*/true);  // waits for the library (false: no compiler)
    start = std::chrono::steady_clock::now();
    const Tensor second = (*net)(x);  // runs the library
    const double second_ms = milliseconds_since(start);
    const float diff = std::max(max_difference(first, eager), max_difference(second, eager));
    std::printf("eager vs hybridized: max difference %g (first call %.1f ms, %s call %.3f ms)\n",
                static_cast<double>(diff), first_ms, compiled ? "compiled" : "interpreted", second_ms);

    net->export_model(prefix);
    const Graph exported = load_model(prefix + ".json");  // reads it back, weights included
    std::printf("exported %s.json + %s.safetensors: %zu nodes\n", prefix.c_str(), prefix.c_str(),
                exported.nodes.size());

    if (!(diff <= 1e-5f)) {
      std::printf("FAIL: hybridized differs from eager by %g\n", static_cast<double>(diff));
      return 1;
    }
    std::printf("OK: seed MLP hybridized == eager within 1e-5, exported to %s\n", prefix.c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hybridize_app: error: %s\n", e.what());
    return 1;
  }
}
