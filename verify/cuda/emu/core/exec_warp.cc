// shfl.sync vote.sync elect.sync activemask match.sync redux.sync bar.warp.sync: warp-wide
// exchanges. Each checks that the lanes its membermask names execute it together; a lane of the
// mask that is elsewhere is a convergence bug on hardware (undefined), reported here.
#include "core/decode.h"
#include "core/lanes.h"

namespace kgen::emu {

// Shared with bar.warp.sync (exec_barrier.cc).
void check_members(Warp& w, const Decoded& d, uint32_t mask, uint32_t members) {
  if (members & ~mask & w.valid)
    w.fail(d, "membermask 0x" + [&] {
      char b[16];
      std::snprintf(b, sizeof b, "%08x", members);
      return std::string(b);
    }() + " names lanes that do not execute this warp-synchronous instruction together");
}

namespace {

enum Shfl : uint8_t { kUp, kDown, kBfly, kIdx };

uint32_t members_of(Warp& w, const Decoded& d, const ptx::Operand& o, uint32_t mask) {
  return static_cast<uint32_t>(w.get(o, __builtin_ctz(mask), d));
}

Step run_shfl(Warp& w, const Decoded& d, uint32_t mask) {
  const uint32_t members = members_of(w, d, op(d, 4), mask);
  check_members(w, d, mask, members);
  uint64_t a[32];
  for_each_lane(mask, [&](int lane) { a[lane] = w.get(op(d, 1), lane, d); });
  const ptx::Operand& dst = op(d, 0);
  for_each_lane(mask, [&](int lane) {
    const uint32_t b = static_cast<uint32_t>(w.get(op(d, 2), lane, d)) & 0x1f;
    const uint32_t c = static_cast<uint32_t>(w.get(op(d, 3), lane, d));
    const uint32_t segmask = (c >> 8) & 0x1f;
    const uint32_t cval = c & 0x1f;
    const uint32_t l = static_cast<uint32_t>(lane);
    const uint32_t max_lane = (l & segmask) | (cval & ~segmask);
    const uint32_t min_lane = l & segmask;
    int64_t j = 0;
    bool valid = false;
    switch (static_cast<Shfl>(d.mode)) {
      case kUp: j = int64_t{l} - b; valid = j >= int64_t{max_lane}; break;
      case kDown: j = int64_t{l} + b; valid = j <= int64_t{max_lane}; break;
      case kBfly: j = l ^ b; valid = j <= int64_t{max_lane}; break;
      case kIdx: j = min_lane | (b & ~segmask); valid = j <= int64_t{max_lane}; break;
    }
    if (!valid) j = l;
    if (!(mask >> j & 1)) w.fail(d, "reads lane " + std::to_string(j) + ", which does not execute the shfl", lane);
    w.set(dst, lane, a[j], d);
    if (dst.reg2 >= 0) {
      ptx::Operand p;
      p.kind = ptx::Operand::Kind::reg;
      p.reg = static_cast<uint32_t>(dst.reg2);
      w.set(p, lane, valid, d);
    }
  });
  return Step::next;
}

enum Vote : uint8_t { kAll, kAny, kUni, kBallot };

Step run_vote(Warp& w, const Decoded& d, uint32_t mask) {
  const uint32_t members = members_of(w, d, op(d, 2), mask);
  check_members(w, d, mask, members);
  uint32_t ballot = 0;
  for_each_lane(mask & members, [&](int lane) {
    if (w.get(op(d, 1), lane, d)) ballot |= 1u << lane;
  });
  const uint32_t active = mask & members;
  for_each_lane(mask, [&](int lane) {
    uint64_t r = 0;
    switch (static_cast<Vote>(d.mode)) {
      case kAll: r = ballot == active; break;
      case kAny: r = ballot != 0; break;
      case kUni: r = ballot == 0 || ballot == active; break;
      case kBallot: r = ballot; break;
    }
    w.set(op(d, 0), lane, r, d);
  });
  return Step::next;
}

// elect.sync d|p, membermask: the lowest lane of the mask leads.
Step run_elect(Warp& w, const Decoded& d, uint32_t mask) {
  const uint32_t members = members_of(w, d, op(d, 1), mask);
  check_members(w, d, mask, members);
  const uint32_t electable = members & mask;
  const int leader = electable ? __builtin_ctz(electable) : -1;
  const ptx::Operand& dst = op(d, 0);
  for_each_lane(mask, [&](int lane) {
    if (dst.kind == ptx::Operand::Kind::reg) w.set(dst, lane, static_cast<uint64_t>(leader), d);
    if (dst.reg2 >= 0) {
      ptx::Operand p;
      p.kind = ptx::Operand::Kind::reg;
      p.reg = static_cast<uint32_t>(dst.reg2);
      w.set(p, lane, lane == leader, d);
    }
  });
  return Step::next;
}

Step run_activemask(Warp& w, const Decoded& d, uint32_t mask) {
  for_each_lane(mask, [&](int lane) { w.set(op(d, 0), lane, mask, d); });
  return Step::next;
}

// redux.sync.{add,min,max,and,or,xor}.{u32,s32,b32} d, a, membermask.
Step run_redux(Warp& w, const Decoded& d, uint32_t mask) {
  const uint32_t members = members_of(w, d, op(d, 2), mask);
  check_members(w, d, mask, members);
  int64_t acc = 0;
  bool first = true;
  for_each_lane(mask & members, [&](int lane) {
    const uint64_t raw = w.get(op(d, 1), lane, d);
    const int64_t v = is_signed(d.type) ? sign_extend(raw, 32) : static_cast<int64_t>(truncate(raw, 32));
    if (first) acc = v, first = false;
    else switch (d.mode2) {
        case 0: acc += v; break;
        case 1: acc = std::min(acc, v); break;
        case 2: acc = std::max(acc, v); break;
        case 3: acc &= v; break;
        case 4: acc |= v; break;
        case 5: acc ^= v; break;
      }
  });
  for_each_lane(mask, [&](int lane) { w.set(op(d, 0), lane, truncate(static_cast<uint64_t>(acc), 32), d); });
  return Step::next;
}

}  // namespace

void decode_warp(const ptx::Instruction& in, const Modifiers& m, Decoded& d) {
  const std::string& name = in.parts[0];
  d.type = m.last_type();
  auto word = [&](std::initializer_list<const char*> names) -> int {
    int k = 0;
    for (const char* n : names) {
      if (m.has(n)) return k;
      ++k;
    }
    throw Unsupported{"mode"};
  };
  if (name == "shfl") {
    if (!m.has("sync")) throw Unsupported{"shfl without .sync"};
    d.mode = static_cast<uint8_t>(word({"up", "down", "bfly", "idx"}));
    d.run = run_shfl;
  } else if (name == "vote") {
    if (!m.has("sync")) throw Unsupported{"vote without .sync"};
    d.mode = static_cast<uint8_t>(word({"all", "any", "uni", "ballot"}));
    d.run = run_vote;
  } else if (name == "elect") {
    d.run = run_elect;
  } else if (name == "activemask") {
    d.run = run_activemask;
  } else if (name == "redux") {
    d.mode2 = static_cast<uint8_t>(word({"add", "min", "max", "and", "or", "xor"}));
    d.run = run_redux;
  } else {
    throw Unsupported{"match.sync"};
  }
}

}  // namespace kgen::emu
