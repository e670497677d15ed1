// Exports one model-zoo architecture with seeded weights, the way export_mlp
// exports the seed MLP, so that other tools (hybgen itself, bench/peers/)
// can read it; optionally times the eager and hybridized runtime on it.
//
//   export_zoo NAME PREFIX [BATCH] [--time RUNS] [--warmup W]
//   export_zoo --list                 prints the names and input shapes
//
// The block is initialised with init::Xavier (seed 42), run once eagerly and
// once hybridized on N(0, 1) data (seed 7) of the zoo's input shape with the
// batch set to BATCH (default 1), and exported to PREFIX.json and
// PREFIX.safetensors (PREFIX "-": not exported). NAME is a zoo model or
// seed_mlp (examples/mlp's net, with export_mlp's weights).
//
// --time RUNS: after W warm-up calls (default 5), RUNS single forward calls
// of each way, one thread, on the input `hybgen bench` feeds generated code
// ((k * 37) % 101 / 50 - 1 for element k); prints
//   eager_us MIN MEDIAN MAX
//   hybridized_us MIN MEDIAN MAX
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "mlp_net.h"
#include "zoo.h"

namespace {

void time_forward(const char* label, const std::function<void()>& forward, int runs, int warmup) {
  for (int i = 0; i < warmup; ++i) forward();
  std::vector<double> t;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    forward();
    t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  std::printf("%s %.3f %.3f %.3f\n", label, t.front(), t[t.size() / 2], t.back());
  std::fflush(stdout);
}

std::string shape_text(const hybgen::Shape& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? "x" : "") + std::to_string(s[i]);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace hybgen;
  if (argc == 2 && std::string(argv[1]) == "--list") {
    for (const auto& m : zoo::models()) std::printf("%-20s %s\n", m.name.c_str(), shape_text(m.input).c_str());
    return 0;
  }
  std::vector<std::string> positional;
  int runs = 0, warmup = 5;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--time" || a == "--warmup") && i + 1 < argc) (a == "--time" ? runs : warmup) = std::atoi(argv[++i]);
    else positional.push_back(a);
  }
  if (positional.size() < 2 || positional.size() > 3 || (runs <= 0 && argc > 1 + static_cast<int>(positional.size())) ||
      warmup < 0) {
    std::fprintf(stderr,
                 "usage: export_zoo NAME PREFIX [BATCH] [--time RUNS] [--warmup W]   (export_zoo --list names the "
                 "models)\n");
    return 2;
  }
  try {
    const std::string name = positional[0], prefix = positional[1];
    const int64_t batch = positional.size() == 3 ? std::atoll(positional[2].c_str()) : 1;
    if (batch <= 0) throw Error("BATCH must be a positive integer");
    const zoo::ZooModel* model = nullptr;
    const zoo::ZooModel seed_mlp{"seed_mlp", [] { return make_seed_mlp(); }, {1, 512}};
    std::string known = "seed_mlp";
    if (name == seed_mlp.name) model = &seed_mlp;
    for (const auto& m : zoo::models()) {
      if (m.name == name) model = &m;
      known += ", " + m.name;
    }
    if (!model) throw Error("unknown model '" + name + "' (known: " + known + ")");
    Shape shape = model->input;
    shape[0] = batch;
    auto net = model->build();
    if (model != &seed_mlp) net->initialize(init::Xavier(), 42);  // make_seed_mlp() initialises its own
    const Tensor x = Tensor::random_normal(shape, 0.0f, 1.0f, 7);
    const Tensor eager = (*net)(x);
    net->hybridize();
    const Tensor hybrid = (*net)(x);
    float diff = 0;
    for (int64_t i = 0; i < eager.size(); ++i) diff = std::fmax(diff, std::fabs(eager.data()[i] - hybrid.data()[i]));
    std::printf("%s on %s: eager and hybridized outputs differ by at most %g\n", name.c_str(),
                shape_text(shape).c_str(), static_cast<double>(diff));
    if (prefix != "-") {
      net->export_model(prefix);
      std::printf("wrote %s.json and %s.safetensors\n", prefix.c_str(), prefix.c_str());
    }
    if (runs > 0) {
      openblas_set_num_threads(1);
      std::vector<float> pattern(static_cast<std::size_t>(num_elements(shape)));
      for (std::size_t k = 0; k < pattern.size(); ++k) pattern[k] = static_cast<float>((k * 37) % 101) / 50.0f - 1.0f;
      const Tensor input = Tensor::from_vector(shape, pattern);
      auto eager = model->build();
      if (model != &seed_mlp) eager->initialize(init::Xavier(), 42);
      time_forward("eager_us", [&] { (*eager)(input); }, runs, warmup);
      time_forward("hybridized_us", [&] { (*net)(input); }, runs, warmup);
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "export_zoo: error: %s\n", e.what());
    return 1;
  }
}
