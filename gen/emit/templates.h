// Emitted code lives as real C++ text under templates/; CMake embeds those
// files into the binary (cmake/embed_templates.cmake), so hybgen is one file.
//
//   const std::string& text = template_text("model.h");        // templates/model.h.in
//   const std::string& kernel = template_text("kernels/dense"); // templates/kernels/dense.inc
//   std::string out = fill_template(text, {{"NAME", "mlp"}}, "model.h");
#pragma once

#include <map>
#include <string>
#include <vector>

namespace hybgen {

// `code` with every line prefixed by `pad` (generated code is indented).
std::string indent_lines(const std::string& code, const std::string& pad);

// Whether `code` uses `name` as a whole identifier, not inside a longer one
// (hg_pool2d is not a use of `pool`).
bool mentions_identifier(const std::string& code, const std::string& name);

// Throws Error for an unknown template name.
const std::string& template_text(const std::string& name);

// The kernel templates `kernel` needs pasted before it ("FOLDER/NAME" for
// each NAME its first line lists as `// needs: NAME NAME ...`), then
// `kernel` itself, each once, in an order that satisfies every need. FOLDER:
// "kernels" for C++, "cuda/kernels" for CUDA.
// Throws Error for an unknown template or a cycle.
std::vector<std::string> kernel_templates_with_needs(const std::string& kernel,
                                                     const std::string& folder = "kernels");

// Replaces every {{KEY}} in `text`. Throws Error naming the template and key
// when `text` has a key missing from `values`, or `values` has a key the text
// never uses.
std::string fill_template(const std::string& text, const std::map<std::string, std::string>& values,
                          const std::string& template_name);

}  // namespace hybgen
