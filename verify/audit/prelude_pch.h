// The third-party headers every pass parses again (CUDA, CUTLASS, CuTe: each `#include <...>`
// of the runtime that is not itself in the runtime), parsed once per toolchain and pass into
// a Clang precompiled header that later passes load with -include-pch. About a third of a
// kernel's two passes goes to these headers (docs/audit.md, "Precompiled prelude").
//
// The PCH and its prelude live in DIR/<key>/, the key a hash of the pass's command line and
// of the prelude's text, so another toolchain or runtime gets another PCH. Clang checks the
// rest when it loads one (every header's size and time, its own version, the target): a pass
// whose only errors say the precompiled file is unusable is run again on a rebuilt one.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kgen::audit {

// The prelude's text for `kernel_file` of a target's runtime (`runtime_include`/`target`):
// the kernel's preprocessor lines before its first #include (macros that configure CuTe),
// then one `#include <header>` per third-party header the runtime's headers include (one not
// found in `runtime_include`), in the order a file including each runtime header, sorted by
// path, would meet them. Empty, so no PCH, when there is no such header or when a macro is
// set where a PCH cannot follow it (after the kernel's first include, or in the runtime).
std::string prelude_text(const std::string& runtime_include, const std::string& target,
                         const std::string& kernel_file);

class PreludePch {
 public:
  // `pass_command`: the pass's driver command line without the audited file; `dir`: where
  // PCHs are kept (empty: none is used).
  PreludePch(std::vector<std::string> pass_command, const std::string& prelude, const std::string& dir);

  // The PCH to load, built first when missing (or when `rebuild`); nullopt when there is no
  // prelude or Clang could not build it (the pass then parses the headers itself).
  std::optional<std::string> path(bool rebuild = false) const;

  // Whether a pass's error text says the PCH itself was unusable (stale, another version).
  static bool is_pch_error(const std::string& message);

 private:
  std::vector<std::string> command_;
  std::string prelude_;
  std::string folder_;  // DIR/<key>, empty when no PCH is used
};

}  // namespace kgen::audit
