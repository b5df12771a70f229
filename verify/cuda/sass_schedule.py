#!/usr/bin/env python3
"""Schedule facts of a kgen CUDA kernel, read from its SASS (the text of `cuobjdump -sass`).

What the source of a kernel intends (the softmax of tile t while P V of tile t - 1 runs,
whole-tile TMA loads) is only true if ptxas kept it; these facts say what the machine code
does, without a GPU (issue 29). compile_check.py prints them and records them in the report
(the receipts' nvcc_sass check); a kernel whose plan promises a schedule (its MANIFEST.json
entry's "schedule") fails the check when the facts do not show it.

How the facts are found (no line numbers, no addresses are assumed):

  * Loops come from the control flow: basic blocks split at branches and branch targets, a
    loop is a back edge (a branch to a block that dominates it) with its natural body. An
    out-of-line retry stub of an mbarrier wait that jumps back into a loop is not a back
    edge (its target does not dominate it); the stub's own spin loop is a loop without work.
  * The consumer's (sm_100a: the MMA warp's) main loop is the innermost loop that issues
    tensor-core products (HGMMA, UTCHMMA), the one with the most when there are several
    ("main_loops" counts them); per iteration, the products it issues.
  * Between the waits (sm_90a forward): in that loop, the first wgmma wait that leaves
    products in flight (WARPGROUP.DEPBAR.LE gsb0, N with N > 0: S = Q K^T is ready, P V may
    run) and the next wait for all of them (N = 0). The softmax's exponentials on the paths
    of one iteration from the first to the second are counted, as the fewest and the most on
    any path: the exponentials that overlap the tensor cores on every (on some) iteration.
  * The softmax's exponentials are the MUFU.EX2 less the MUFU.RCP: a softcap's tanh costs one
    of each per score (runtime/cuda/score_mods.cuh), and nothing else in the loops divides
    (the softmax's 1 / l is in the epilogue).
  * The softmax loop: the innermost loop that issues MUFU.EX2 (sm_90a: the consumer's main
    loop; sm_100a: the softmax warpgroup's); its softmax exponentials per iteration.
  * TMA per tile: in the producer's loops (innermost loops issuing UTMALDG), each expect-tx
    arrive (SYNCS.ARRIVE.TRANS64 with a byte count) opens a group; the UTMALDG after it in
    program order, up to the next such arrive, are that barrier's loads. A barrier is named by
    its shared-memory offset, the immediate of its address (ptxas folds the barrier array's
    offset into it; the stage is in the register part). K's barrier is the last mbarrier wait
    before the main loop's first product whose operands are both in shared memory
    (S = Q K^T); V's is the last wait other than K's before its first product whose A operand
    is in registers or tensor memory (O += P V; the sm90a decode waits for V(t-1) before
    K(t)). We rely on that pairing, and on ptxas keeping each
    TMA after the arrive that expects its bytes (both are in PTX program order).
  * Named barriers: BAR.SYNC / BAR.ARV / BAR.RED with a barrier id other than 0 (0 is
    __syncthreads), in the kernel and in the main loop; setmaxnreg's register counts.

  sass_schedule.py SASS.txt [--exponentials-per-tile N] [--forward] [--promise JSON]
prints the facts as JSON and exits 1 when a promise fails (tests/cuda/sass_fixtures).
"""

import argparse
import json
import re
import sys

INSTRUCTION = re.compile(r"^\s*/\*([0-9a-f]+)\*/\s+([^;]*?)\s*;")
FUNCTION = re.compile(r"\bFunction\s*:\s*(\S+)")
PREDICATE = re.compile(r"^@!?U?P(?:T|\d+)$")
UNIFORM_PREDICATE = re.compile(r"^!?UP(?:T|\d+)$")
TARGET = re.compile(r"^0x[0-9a-f]+$")
BARRIER_OFFSET = re.compile(r"\+?(0x[0-9a-f]+)\]$")
DEPBAR_COUNT = re.compile(r"^0x([0-9a-f]+)$")
PRODUCTS = ("HGMMA", "UTCHMMA")


class Instruction:
    def __init__(self, address, text):
        self.address = address
        self.text = text
        words = text.split(None, 1)
        self.predicate = words[0] if words and PREDICATE.match(words[0]) else None
        rest = text[len(self.predicate):].strip() if self.predicate else text
        parts = rest.split(None, 1)
        self.opcode = parts[0] if parts else ""
        self.operands = [o.strip() for o in parts[1].split(",")] if len(parts) > 1 else []

    def family(self):
        return self.opcode.split(".", 1)[0]

    def is_(self, prefix):
        return self.opcode == prefix or self.opcode.startswith(prefix + ".")

    def branch_target(self):
        if self.family() in ("BRA", "JMP") and self.operands and TARGET.match(self.operands[-1]):
            return int(self.operands[-1], 16)
        return None

    def conditional(self):
        """A branch or exit that may fall through: a predicate other than PT, or a uniform
        predicate operand (BRA.U !UP0, 0x...)."""
        if self.predicate and self.predicate != "@PT":
            return True
        return len(self.operands) > 1 and bool(UNIFORM_PREDICATE.match(self.operands[0]))

    def ends_block(self):
        return self.branch_target() is not None or self.family() in ("EXIT", "RET", "BRX", "JMX")


def parse_functions(sass):
    """{function name: [Instruction]} of a cuobjdump -sass listing, in address order."""
    functions, current = {}, None
    for line in sass.splitlines():
        m = FUNCTION.search(line)
        if m:
            current = functions.setdefault(m.group(1), [])
            continue
        m = INSTRUCTION.match(line)
        if m and current is not None:
            current.append(Instruction(int(m.group(1), 16), m.group(2)))
    return functions


class ControlFlow:
    """Basic blocks, edges, dominators and natural loops of one function."""

    def __init__(self, instructions):
        self.instructions = instructions
        index = {ins.address: k for k, ins in enumerate(instructions)}
        leaders = {0}
        for k, ins in enumerate(instructions):
            target = ins.branch_target()
            if target is not None and target in index:
                leaders.add(index[target])
            if ins.ends_block() and k + 1 < len(instructions):
                leaders.add(k + 1)
        starts = sorted(leaders)
        self.blocks = [(s, e) for s, e in zip(starts, starts[1:] + [len(instructions)])]  # [start, end)
        self.block_of = {}
        for b, (s, e) in enumerate(self.blocks):
            for k in range(s, e):
                self.block_of[k] = b
        self.successors = []
        for b, (s, e) in enumerate(self.blocks):
            last, out = instructions[e - 1], []
            target = last.branch_target()
            if target is not None and target in index:
                out.append(self.block_of[index[target]])
            falls = (target is None and last.family() not in ("EXIT", "RET", "BRX", "JMX")) or last.conditional()
            if falls and b + 1 < len(self.blocks):
                out.append(b + 1)
            self.successors.append(out)
        self.predecessors = [[] for _ in self.blocks]
        for b, out in enumerate(self.successors):
            for s in out:
                self.predecessors[s].append(b)
        self.dominators = self._dominators()
        self.loops = self._loops()

    def _dominators(self):
        reachable, order, stack = set(), [], [0]
        while stack:  # preorder is enough for the iterative algorithm to converge
            b = stack.pop()
            if b in reachable:
                continue
            reachable.add(b)
            order.append(b)
            stack.extend(reversed(self.successors[b]))
        every = set(reachable)
        dom = {b: set(every) for b in reachable}
        dom[0] = {0}
        changed = True
        while changed:
            changed = False
            for b in order[1:]:
                preds = [p for p in self.predecessors[b] if p in reachable]
                new = set.intersection(*(dom[p] for p in preds)) | {b} if preds else {b}
                if new != dom[b]:
                    dom[b], changed = new, True
        return dom

    def _loops(self):
        """Natural loops, one per header (back edges to one header merged): (header, blocks)."""
        bodies = {}
        for b, out in enumerate(self.successors):
            for h in out:
                if b in self.dominators and h in self.dominators[b]:
                    body, stack = bodies.setdefault(h, {h}), [b]
                    while stack:
                        n = stack.pop()
                        if n not in body:
                            body.add(n)
                            stack.extend(self.predecessors[n])
        return sorted(bodies.items())

    def loop_instructions(self, body):
        return [self.instructions[k] for b in sorted(body) for k in range(*self.blocks[b])]


def innermost(loops, has):
    """The loops whose instructions satisfy `has` and that hold no smaller such loop."""
    chosen = [(h, body) for h, body in loops if has(body)]
    return [(h, body) for h, body in chosen if not any(other < body for _, other in chosen)]


def barrier_offset(operand):
    m = BARRIER_OFFSET.search(operand)
    return m.group(1) if m else "0x0"


def is_wait(ins):
    return ins.is_("SYNCS.PHASECHK.TRANS64")


def is_expect_tx_arrive(ins):
    return ins.is_("SYNCS.ARRIVE.TRANS64") and ".A1T0" not in ins.opcode and ins.operands and ins.operands[-1] != "RZ"


def operand_a_in_shared_memory(ins):
    """S = Q K^T reads both operands from shared memory; O += P V takes P from registers
    (HGMMA ..., R180, gdesc[..]) or tensor memory (UTCHMMA tmem[..], gdesc[..], ...)."""
    first = ins.operands[1] if ins.family() == "HGMMA" else ins.operands[0]
    return first.startswith("gdesc")


def depbar_count(ins):
    m = DEPBAR_COUNT.match(ins.operands[-1]) if ins.is_("WARPGROUP.DEPBAR") and ins.operands else None
    return int(m.group(1), 16) if m else None


def ex2_between_waits(flow, header, body):
    """(fewest, most) MUFU.EX2 on the paths of one iteration from the wait that leaves
    products in flight to the next wait for all; None when the loop has no such pair."""
    code = [k for b in sorted(body) for k in range(*flow.blocks[b])]
    first = next((k for k in code if (depbar_count(flow.instructions[k]) or 0) > 0), None)
    if first is None:
        return None
    start = flow.block_of[first]

    def segment(b):
        """(exponentials on the block's part of a path, whether a wait for all ends it there)."""
        lo = first + 1 if b == start else flow.blocks[b][0]
        end = next((k for k in range(lo, flow.blocks[b][1]) if depbar_count(flow.instructions[k]) == 0), None)
        hi = flow.blocks[b][1] if end is None else end
        return softmax_exponentials(flow.instructions[lo:hi]), end is not None

    # One iteration: edges back to the header are cut; a path ends at its first wait for all.
    def successors(b):
        return [] if segment(b)[1] else [s for s in flow.successors[b] if s in body and s != header]

    reach, stack = set(), [start]
    while stack:
        b = stack.pop()
        if b not in reach:
            reach.add(b)
            stack.extend(successors(b))
    # Spin loops of mbarrier waits are cycles: condensed (their EX2, none, counted once).
    component = strongly_connected(reach, successors)
    best = {}
    for c in reversed(topological(component, reach, successors)):  # sinks first
        cost = sum(segment(b)[0] for b in component[c])
        options = [best[n] for n in {component["of"][s] for b in component[c] for s in successors(b)} - {c}
                   if n in best]
        if any(segment(b)[1] for b in component[c]):
            options.append((0, 0))
        if options:
            best[c] = (cost + min(o[0] for o in options), cost + max(o[1] for o in options))
    return best.get(component["of"][start])


def softmax_exponentials(instructions):
    """MUFU.EX2 less MUFU.RCP (the module docstring: a softcap's tanh issues one of each)."""
    return sum(i.is_("MUFU.EX2") for i in instructions) - sum(i.is_("MUFU.RCP") for i in instructions)


def postorder(roots, successors):
    """Depth-first post-order of everything reachable from `roots` (in their order), iterative."""
    order, seen = [], set()
    for root in roots:
        if root in seen:
            continue
        stack = [(root, iter(successors(root)))]
        seen.add(root)
        while stack:
            node, it = stack[-1]
            nxt = next((s for s in it if s not in seen), None)
            if nxt is None:
                stack.pop()
                order.append(node)
            else:
                seen.add(nxt)
                stack.append((nxt, iter(successors(nxt))))
    return order


def strongly_connected(nodes, successors):
    """Kosaraju: {"of": node -> component id, id: [nodes]}."""
    order = postorder(sorted(nodes), successors)
    reverse = {n: [] for n in nodes}
    for n in nodes:
        for s in successors(n):
            reverse[s].append(n)
    result, of = {}, {}
    for root in reversed(order):
        if root in of:
            continue
        cid, stack = len(result), [root]
        result[cid] = []
        of[root] = cid
        while stack:
            n = stack.pop()
            result[cid].append(n)
            for p in reverse[n]:
                if p not in of:
                    of[p] = cid
                    stack.append(p)
    result["of"] = of
    return result


def topological(component, nodes, successors):
    """Component ids, sources first."""
    edges = {c: set() for c in component if c != "of"}
    for n in nodes:
        for s in successors(n):
            if s in component["of"] and component["of"][s] != component["of"][n]:
                edges[component["of"][n]].add(component["of"][s])
    return list(reversed(postorder(sorted(edges), lambda c: sorted(edges[c]))))


def tma_groups(flow):
    """{barrier offset: [UTMALDG count of each expect-tx group]} over the producer's loops."""
    groups = {}
    loops = innermost(flow.loops, lambda body: any(i.is_("UTMALDG") for i in flow.loop_instructions(body)))
    for _, body in loops:
        current = None
        for ins in flow.loop_instructions(body):
            if is_expect_tx_arrive(ins):
                current = barrier_offset(ins.operands[1])
                groups.setdefault(current, []).append(0)
            elif ins.is_("UTMALDG") and current is not None:
                groups[current][-1] += 1
    return groups


def operand_barriers(flow, main_body):
    """(K's barrier, V's barrier) from the main loop's waits (module docstring)."""
    waits, k_barrier, v_barrier = [], None, None
    for ins in flow.loop_instructions(main_body):
        if is_wait(ins):
            waits.append(barrier_offset(ins.operands[1]))
        elif ins.family() in PRODUCTS and waits:
            if operand_a_in_shared_memory(ins):
                k_barrier = k_barrier or waits[-1]
            elif v_barrier is None:
                # The last wait other than K's: the sm90a decode waits for V(t-1) before K(t)
                # and issues S = Q K^T first, so K's wait is the last before P V there.
                others = [w for w in waits if w != k_barrier]
                v_barrier = others[-1] if others else waits[-1]
    return k_barrier, v_barrier


def named_barrier(ins, kind):
    """BAR.SYNC / BAR.ARV on a barrier other than 0 (__syncthreads' barrier)."""
    return ins.is_("BAR." + kind) and bool(ins.operands) and ins.operands[0] not in ("0x0", "0")


def per_tile(counts):
    """One number when every group of a barrier loads the same, else the distinct counts."""
    if not counts:
        return None
    distinct = sorted(set(counts))
    return distinct[0] if len(distinct) == 1 else distinct


def schedule_facts(sass, exponentials_per_tile=None, forward=True):
    """The facts of the function with the most tensor-core products (the attention kernel of
    an object that also holds a backward's pre- and post-processing kernels)."""
    functions = parse_functions(sass) or {"": []}
    instructions = max(functions.values(), key=lambda code: sum(i.family() in PRODUCTS for i in code))
    if not instructions:  # nothing to read: every fact empty
        instructions = [Instruction(0, "EXIT")]
    flow = ControlFlow(instructions)
    facts = {"exponentials_per_tile": exponentials_per_tile}
    facts["mma"] = max(PRODUCTS, key=lambda p: sum(i.family() == p for i in instructions))

    mains = innermost(flow.loops, lambda body: any(i.family() in PRODUCTS for i in flow.loop_instructions(body)))
    main = max(mains, key=lambda loop: sum(i.family() in PRODUCTS for i in flow.loop_instructions(loop[1])),
               default=None)
    main_code = flow.loop_instructions(main[1]) if main else []
    facts["main_loops"] = len(mains)
    facts["mma_per_iteration"] = sum(i.family() in PRODUCTS for i in main_code)

    softmax = innermost(flow.loops, lambda body: any(i.is_("MUFU.EX2") for i in flow.loop_instructions(body)))
    softmax = max(softmax, key=lambda loop: sum(i.is_("MUFU.EX2") for i in flow.loop_instructions(loop[1])),
                  default=None)
    softmax_code = flow.loop_instructions(softmax[1]) if softmax else []
    facts["ex2_per_iteration"] = softmax_exponentials(softmax_code)
    facts["rcp_per_iteration"] = sum(i.is_("MUFU.RCP") for i in softmax_code)
    between = ex2_between_waits(flow, *main) if main and any(i.family() == "HGMMA" for i in main_code) else None
    facts["ex2_between_waits"] = between[0] if between else None
    facts["ex2_between_waits_most"] = between[1] if between else None

    groups = tma_groups(flow)
    facts["tma_groups"] = {offset: per_tile(counts) for offset, counts in sorted(groups.items())}
    k_barrier, v_barrier = operand_barriers(flow, main[1]) if main and forward else (None, None)
    facts["tma_per_k_tile"] = per_tile(groups.get(k_barrier, [])) if k_barrier else None
    facts["tma_per_v_tile"] = per_tile(groups.get(v_barrier, [])) if v_barrier else None

    for kind in ("SYNC", "ARV"):
        facts["bar_" + kind.lower()] = sum(named_barrier(i, kind) for i in instructions)
        facts["bar_" + kind.lower() + "_in_main_loop"] = sum(named_barrier(i, kind) for i in main_code)
    facts["setmaxnreg"] = [int(i.operands[-1], 16) for i in instructions
                           if i.family() == "USETMAXREG" and i.operands and TARGET.match(i.operands[-1])]
    return facts


# A plan's promises (MANIFEST.json, the kernel's "schedule"), each a check of the facts.
PROMISES = {
    "min_ex2_between_waits": ("ex2_between_waits", lambda fact, bound: fact is not None and fact >= bound,
                              "softmax exponentials (MUFU.EX2) between the wgmma waits of the main loop "
                              "(fewest on a path)", "at least"),
    "max_tma_per_k_tile": ("tma_per_k_tile", lambda fact, bound: isinstance(fact, int) and fact <= bound,
                           "UTMALDG per K tile", "at most"),
    "max_tma_per_v_tile": ("tma_per_v_tile", lambda fact, bound: isinstance(fact, int) and fact <= bound,
                           "UTMALDG per V tile", "at most"),
    "mma_per_iteration": ("mma_per_iteration", lambda fact, bound: fact == bound,
                          "tensor-core products per main-loop iteration", "exactly"),
    "min_bar_sync_in_main_loop": ("bar_sync_in_main_loop", lambda fact, bound: fact >= bound,
                                  "named BAR.SYNC in the main loop", "at least"),
    "min_bar_arv_in_main_loop": ("bar_arv_in_main_loop", lambda fact, bound: fact >= bound,
                                 "named BAR.ARV in the main loop", "at least"),
}


def promise_failures(facts, promise):
    """What the SASS does not show of the schedule a plan promises (an unknown promise fails:
    a misspelt one must not pass unchecked)."""
    failures = []
    for key, bound in sorted((promise or {}).items()):
        if key not in PROMISES:
            failures.append(f"unknown schedule promise '{key}' (known: {', '.join(sorted(PROMISES))})")
            continue
        fact, holds, what, relation = PROMISES[key]
        if not holds(facts.get(fact), bound):
            failures.append(f"schedule: {facts.get(fact)} {what}, the plan promises {relation} {bound}")
    return failures


def summary(facts):
    """The facts as the compile check's PASS line shows them."""
    parts = []
    tile = facts.get("exponentials_per_tile")
    if facts["mma"] == "HGMMA" and tile is not None:  # the forward's overlap (sm_90a)
        fewest, most = facts["ex2_between_waits"], facts["ex2_between_waits_most"]
        shown = "none" if fewest is None else (f"{fewest}" if most == fewest else f"{fewest}-{most}")
        parts.append(f"EX2 between waits {shown} of {tile}")
    parts.append(f"softmax EX2/iteration {facts['ex2_per_iteration']}" +
                 (f" of {tile}" if tile and facts["mma"] != "HGMMA" else "") +
                 (f" (and {facts['rcp_per_iteration']} EX2 + RCP of the softcap's tanh)" if facts["rcp_per_iteration"] else ""))
    parts.append(f"{facts['mma']}/iteration {facts['mma_per_iteration']}")
    if facts.get("tma_per_k_tile") is not None or facts.get("tma_per_v_tile") is not None:
        parts.append(f"UTMALDG per K/V tile {facts.get('tma_per_k_tile')}/{facts.get('tma_per_v_tile')}")
    else:
        parts.append("UTMALDG per producer group " + ("/".join(str(v) for v in facts["tma_groups"].values()) or "none"))
    parts.append(f"named BAR.SYNC/ARV {facts['bar_sync']}/{facts['bar_arv']} "
                 f"({facts['bar_sync_in_main_loop']}/{facts['bar_arv_in_main_loop']} in the main loop)")
    if facts["setmaxnreg"]:
        parts.append("setmaxnreg " + "/".join(str(n) for n in facts["setmaxnreg"]))
    return ", ".join(parts)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sass", help="cuobjdump -sass output")
    parser.add_argument("--exponentials-per-tile", type=int, help="the plan's exponentials per thread and tile")
    parser.add_argument("--backward", dest="forward", action="store_false", help="no K/V naming of the loads")
    parser.add_argument("--promise", help="the plan's schedule promise, as JSON")
    args = parser.parse_args()
    with open(args.sass, encoding="utf-8") as f:
        facts = schedule_facts(f.read(), args.exponentials_per_tile, args.forward)
    print(json.dumps(facts, indent=2))
    print(summary(facts))
    failures = promise_failures(facts, json.loads(args.promise) if args.promise else None)
    for failure in failures:
        print("FAIL " + failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
