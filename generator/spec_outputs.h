// Everything `kgen gen` writes for one spec, rendered in memory: one file per target
// and MANIFEST.json, each opening with its provenance.
#pragma once

#include <string>
#include <vector>

#include "runtime_files.h"
#include "spec.h"
#include "template_engine.h"

namespace kgen {

struct GeneratedFile {
  std::string path;  // relative to the output folder: "<name>/<name>.<target>.<ext>"
  std::string content;
  // A companion (KernelPlan::companions): `content` is empty; this Python module writes and
  // checks it after kgen has written the folder (companion_writers.h). Empty: kgen's own file.
  std::string companion_writer = {};
};

// The files as the templates write them: kgen does not reformat its output. Templates are
// written in the shape kgen's CUDA format gives them (docs/template-engine.md, "Output
// shape"), which a test holds every spec's render to. A kernel of a target with a runtime
// names its hash (`runtimes`, from runtime_digests).
std::vector<GeneratedFile> render_spec_outputs(const Spec& spec, TemplateEngine& engine,
                                               const RuntimeDigests& runtimes);

// "make gen SPEC=<source>": the command every generated file names.
std::string regenerate_command(const Spec& spec);

}  // namespace kgen
