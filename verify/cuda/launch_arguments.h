// The generated launchers' Arguments filled from the harnesses' device buffers. A launcher's
// Arguments has only the run-time inputs its spec asks for, so the optional ones are set
// where they exist.
#pragma once

#include "backward_harness.h"
#include "harness.h"

namespace kgen::sm90a {

template <class Arguments>
void set_forward_arguments(Arguments& args, const DeviceTensors& t) {
  args.q = t.q;
  args.k = t.k;
  args.v = t.v;
  args.out = t.out;
  if constexpr (requires { args.lse; }) args.lse = t.lse;
  if constexpr (requires { args.q_segment_ids; }) {
    args.q_segment_ids = t.q_segment_ids;
    args.kv_segment_ids = t.kv_segment_ids;
  }
  if constexpr (requires { args.sinks; }) args.sinks = t.sinks;
  if constexpr (requires { args.document_tiles; }) args.document_tiles = t.document_tiles;
}

template <class Arguments>
void set_backward_arguments(Arguments& args, const BackwardTensors& t) {
  args.q = t.q;
  args.k = t.k;
  args.v = t.v;
  args.out = t.out;
  args.lse = t.lse;
  args.dout = t.dout;
  args.dq = t.dq;
  args.dk = t.dk;
  args.dv = t.dv;
  args.workspace = t.workspace;
  if constexpr (requires { args.q_segment_ids; }) {
    args.q_segment_ids = t.q_segment_ids;
    args.kv_segment_ids = t.kv_segment_ids;
  }
  if constexpr (requires { args.dsinks; }) {
    args.sinks = t.sinks;
    args.dsinks = t.dsinks;
  }
}

}  // namespace kgen::sm90a
