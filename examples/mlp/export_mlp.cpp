// Builds the seed MLP, runs it eagerly and hybridized, and exports it.
//   export_mlp PREFIX [BATCH]    writes PREFIX.json and PREFIX.safetensors
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "mlp_net.h"

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: export_mlp PREFIX [BATCH]\n");
    return 2;
  }
  try {
    using namespace hybgen;
    const std::string prefix = argv[1];
    const int64_t batch = argc == 3 ? std::atoll(argv[2]) : 1;
    if (batch <= 0) throw Error("BATCH must be a positive integer");
    auto net = make_seed_mlp();
    const Tensor x = seed_mlp_input(batch);
    const Tensor eager = (*net)(x);
    net->hybridize();
    const Tensor hybrid = (*net)(x);
    float diff = 0;
    for (int64_t i = 0; i < eager.size(); ++i) diff = std::fmax(diff, std::fabs(eager.data()[i] - hybrid.data()[i]));
    std::printf("seed MLP, batch %lld: eager and hybridized outputs differ by at most %g\n",
                static_cast<long long>(batch), static_cast<double>(diff));
    net->export_model(prefix);
    std::printf("wrote %s.json and %s.safetensors\n", prefix.c_str(), prefix.c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "export_mlp: error: %s\n", e.what());
    return 1;
  }
}
