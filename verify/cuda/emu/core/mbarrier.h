// The mbarrier objects of a CTA (side-table state keyed by shared address): what the mbarrier
// instructions, TMA completions and tcgen05.commit do to them, with the checks the PTX ISA's
// rules imply (over-arrival, more transaction bytes completed than expected, an uninitialized
// object, async-proxy use before the init was fenced).
#pragma once

#include <string>

#include "core/machine.h"

namespace kgen::emu {

// The mbarrier at `address` (a shared::cta or shared::cluster address: memory.h), or a report
// naming `what` touched an uninitialized one.
MBarrier& mbarrier_at(Warp& w, const Decoded& d, uint32_t address);
// The CTA whose shared memory holds the mbarrier at `address` (reported when there is none, or
// it exited).
Cta& mbarrier_owner(Warp& w, const Decoded& d, uint32_t address);

// `released`: what the arrival publishes (races.h); absent, the arriving warp's own clock. An
// asynchronous unit's arrival (tcgen05.commit) publishes the unit's clock instead.
void mbarrier_arrive(Warp& w, const Decoded& d, uint32_t address, uint32_t count,
                     const VectorClock* released = nullptr);
void mbarrier_expect_tx(Warp& w, const Decoded& d, uint32_t address, uint32_t bytes);
// An async unit's completion (TMA bytes landed): `address` is an offset in `cta`'s shared
// memory; `what` names the operation for reports.
// `released`: what the copy's issuer had done (races.h), which the phase's waiters acquire.
void mbarrier_complete_tx(Cta& cta, uint32_t address, uint32_t bytes, const VectorClock& released,
                          const std::string& what);

}  // namespace kgen::emu
