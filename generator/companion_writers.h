// Runs the Python programs that write companion files (KernelPlan::companions: the tpu
// kernels' custom_call.json, which only jaxlib's Mosaic serializer can produce), so that
// `kgen gen` writes, and `kgen gen --check` compares, every file of a spec's folder.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "spec_outputs.h"

namespace kgen {

// Spec files by the writer module their companions need, in the order kgen met them.
using CompanionWork = std::map<std::string, std::vector<std::string>>;

// Adds `spec_file` under each writer that one of its `files` names.
void add_companion_work(CompanionWork& work, const std::string& spec_file, const std::vector<GeneratedFile>& files);

// Runs `python -m <writer> --out OUT_DIR [--check] SPEC...` for each writer, with the
// project's Python (`python`: its .venv) and package (`package_dir`: python/ on PYTHONPATH),
// after kgen has written (or checked) the folders. Returns 0 when every writer did, else the
// first failing exit status; the writers print what they wrote or found stale. Throws when
// the interpreter cannot be started (make deps installs it).
int run_companion_writers(const CompanionWork& work, const std::string& out_dir, bool check,
                          const std::string& python, const std::string& package_dir);

}  // namespace kgen
