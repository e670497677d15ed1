#include "emit/backends.h"

#include "emit/cuda_emitter.h"

namespace hybgen {

const BackendTraits& backend_traits(Backend backend) {
  static const BackendTraits cpp{false, true, false, "verify_main.cpp", "bench_main.cpp", "main.cpp"};
  static const BackendTraits cuda{true, false, true, "cuda/verify_main.cu", "cuda/bench_main.cu", "main.cu"};
  switch (backend) {
    case Backend::kCuda:
      return cuda;
    case Backend::kCpp:
      break;
  }
  return cpp;
}

std::vector<EmittedFile> emit_for_target(const CompiledGraph& compiled, const CppEmitOptions& options) {
  switch (compiled.target.backend) {
    case Backend::kCuda:
      return emit_cuda(compiled, options);
    case Backend::kCpp:
      break;
  }
  return emit_cpp(compiled, options);
}

}  // namespace hybgen
