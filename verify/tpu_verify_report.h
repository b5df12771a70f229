// The facts of one `kgen verify --target tpu` run as JSON, for the kernel's receipt
// (`kgen verify ... --report FILE`, then `kgen receipt add`; docs/receipts.md). No wall
// times, and errors rounded to 3 significant digits, so that a rerun on unchanged kernels
// and inputs reports identical bytes.
#pragma once

#include "json_fields.h"
#include "spec.h"
#include "tpu_backward_verifier.h"
#include "tpu_decode_verifier.h"
#include "tpu_verifier.h"

namespace kgen {

Json tpu_verify_facts(const Spec& spec, const TpuVerifyOptions& options, const TpuVerifyResult& result);

// The backward kernels' part of the same receipt (under "backward"), for a spec with
// "backward": true.
Json tpu_backward_facts(const Spec& spec, const TpuBackwardResult& result);

// A decode kernel's (and its combine's) run: errors over every kv_lens case, the DMAs
// against the live blocks, the combine alone.
Json tpu_decode_facts(const Spec& spec, const TpuVerifyOptions& options, const TpuDecodeVerifyResult& result);

}  // namespace kgen
