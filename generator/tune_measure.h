// How kgen tune measures candidates (docs/tuning.md, "Measurers"): one measuring program per
// target, run once for all candidates that are not in the cache, which measures them in
// parallel and answers one JSON line per candidate as it finishes.
//
//   MEASURER --describe                  {"measured_by", "cost_unit", "tools", "sources", "columns"}
//   MEASURER --jobs FILE --parallel N    per job of FILE (JSON lines: id, spec, generated, name,
//                                        target, pass, kgen, root, and the plan's live_tiles,
//                                        total_tiles per batch element and memory_bytes) one
//                                        line {"id", "cost", "columns", "gpu_time_s"} or
//                                        {"id", "error"}
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "json_fields.h"

namespace kgen {

struct Measurer {
  std::vector<std::string> command;  // the program and its first arguments
  std::string root;                  // the project root it runs in
  Json description;                  // its --describe answer
};

// Runs `command --describe` in `root`; std::runtime_error when it cannot run or answers no JSON.
Measurer describe_measurer(std::vector<std::string> command, const std::string& root);

// The digest a measurement is cached under: the measurer (its description and the bytes of
// its sources) and `inputs` (what the candidate's measurement depends on: kernel files, plans).
std::string measurement_key(const Measurer& measurer, const std::string& inputs);

// The cache folder ($KGEN_TUNE_CACHE, default ~/.cache/kgen/tune; "off": none).
std::optional<std::string> tune_cache_folder();
std::optional<Json> cached_measurement(const std::string& key);
void cache_measurement(const std::string& key, const Json& result);

// Runs the jobs (JSON objects with an "id"), `parallel` at a time inside the measurer; calls
// `done` with each answer as it arrives. std::runtime_error when the measurer fails or a job
// gets no answer.
void run_measurer(const Measurer& measurer, const std::vector<Json>& jobs, int parallel, const std::string& scratch,
                  const std::function<void(const Json&)>& done);

// A command line for sh: each word single-quoted.
std::string shell_command(const std::vector<std::string>& words);

}  // namespace kgen
