// Ops of the `tpu` dialect that appear in pre-layout Mosaic kernels. Only the operand,
// attribute and assembly structure is reproduced; lower_tpu_ops.cc gives them meaning.

#ifndef KGEN_TPU_OPS
#define KGEN_TPU_OPS

include "dialect/TpuBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

class TPU_Op<string mnemonic, list<Trait> traits = []>
    : Op<TPU_Dialect, mnemonic, traits>;

def DefaultMemWrite : MemoryEffects<[MemWrite<DefaultResource>]>;
def DefaultMemRead : MemoryEffects<[MemRead<DefaultResource>]>;

// result = acc + contraction(lhs, rhs) as described by dimension_numbers. Without
// dimension_numbers the legacy transpose flags describe a plain 2-D matmul.
def TPU_MatmulOp : TPU_Op<"matmul", [Pure]> {
  let arguments = (ins
    AnyVectorOfNonZeroRank:$lhs,
    AnyVectorOfNonZeroRank:$rhs,
    AnyVectorOfNonZeroRank:$acc,
    DefaultValuedAttr<BoolAttr, "false">:$transpose_lhs,
    DefaultValuedAttr<BoolAttr, "false">:$transpose_rhs,
    OptionalAttr<TPU_ContractPrecisionEnum>:$precision,
    OptionalAttr<TPU_DotDimensionNumbersAttr>:$dimension_numbers,
    // Required by the newest real dialect, absent from older emitters: accept both.
    OptionalAttr<BoolAttr>:$transpose_lhs_hint
  );
  let results = (outs AnyVectorOfNonZeroRank:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs `,` $acc attr-dict `:` type($lhs) `,` type($rhs) `,` type($acc) `->` type($result)
  }];
  let hasVerifier = 1;
}

// Values count up from 0 along the row-major collapse of `dimensions`; constant along
// every other dimension.
def TPU_IotaOp : TPU_Op<"iota", [Pure]> {
  let arguments = (ins DenseI32ArrayAttr:$dimensions);
  let results = (outs VectorOfNonZeroRankOf<[AnyInteger, Index]>:$output);
  let assemblyFormat = [{ attr-dict `:` type($output) }];
  let hasVerifier = 1;
}

def TPU_VectorStoreOp : TPU_Op<"vector_store", [DefaultMemWrite, AttrSizedOperandSegments]> {
  let arguments = (ins
    AnyVectorOfNonZeroRank:$valueToStore,
    AnyMemRef:$base,
    Variadic<Index>:$indices,
    DenseI32ArrayAttr:$strides,
    Optional<AnyVectorOfNonZeroRank>:$mask,
    DefaultValuedAttr<BoolAttr, "false">:$add
  );
  let results = (outs);
  let assemblyFormat = [{
    $base `[` $indices `]` `,` $valueToStore (`masked` $mask^)? attr-dict `:` type($base) `,` type($valueToStore) `,` type($mask)
  }];
  let hasVerifier = 1;
}

def TPU_VectorLoadOp : TPU_Op<"vector_load", [DefaultMemRead, AttrSizedOperandSegments]> {
  let arguments = (ins
    AnyMemRef:$base,
    Variadic<Index>:$indices,
    DenseI32ArrayAttr:$strides,
    Optional<AnyVectorOfNonZeroRank>:$mask
  );
  let results = (outs AnyVectorOfNonZeroRank:$result);
  let assemblyFormat = [{
    $base `[` $indices `]` (`masked` $mask^)? attr-dict `:` type($base) `,` type($result) `,` type($mask)
  }];
  let hasVerifier = 1;
}

def TPU_ConcatenateOp : TPU_Op<"concatenate", [Pure]> {
  let arguments = (ins
    Variadic<AnyVectorOfNonZeroRank>:$sources,
    I32Attr:$dimension
  );
  let results = (outs AnyVectorOfNonZeroRank:$output);
  let assemblyFormat = [{
    $sources `in` $dimension attr-dict `:` type($sources) `->` type($output)
  }];
  let hasVerifier = 1;
}

// Tiles `source` `times` times along `dimension` (what the real dialect canonicalizes
// into a concatenate of copies).
def TPU_RepeatOp : TPU_Op<"repeat", [Pure]> {
  let arguments = (ins
    AnyVectorOfNonZeroRank:$source,
    I32Attr:$dimension,
    I32Attr:$times
  );
  let results = (outs AnyVectorOfNonZeroRank:$output);
  let assemblyFormat = [{ $source `,` $dimension `x` $times attr-dict `:` type($source) `->` type($output) }];
  let hasVerifier = 1;
}

def TPU_TransposeOp : TPU_Op<"transpose", [Pure]> {
  let arguments = (ins AnyVectorOfAnyRank:$vector, DenseI64ArrayAttr:$permutation);
  let results = (outs AnyVectorOfAnyRank:$result);
  let assemblyFormat = [{
    $vector `,` $permutation attr-dict `:` type($vector) `->` type($result)
  }];
  let hasVerifier = 1;
}

// `approx` only licenses the hardware to be inexact; the CPU computes 1/x exactly.
def TPU_ReciprocalOp : TPU_Op<"reciprocal", [Pure, SameOperandsAndResultType]> {
  let arguments = (ins
    AnyVectorOfNonZeroRank:$input,
    DefaultValuedAttr<BoolAttr, "false">:$approx
  );
  let results = (outs AnyVectorOfNonZeroRank:$output);
  let assemblyFormat = [{ $input attr-dict `:` type($input) `->` type($output) }];
}

// A divisibility hint for Mosaic's layout passes; a value-preserving no-op here. The
// real op has no custom assembly, so it appears in generic form.
def TPU_AssumeMultipleOp : TPU_Op<"assume_multiple", [Pure, SameOperandsAndResultType]> {
  let arguments = (ins AnyTypeOf<[Index, AnyInteger]>:$value, I32Attr:$multiple);
  let results = (outs AnyTypeOf<[Index, AnyInteger]>:$result);
}

// A view of `mem_ref` of the result's static shape, starting at `base_idx` (i32, one per
// dimension). Only what the lowering needs of the real op: no dynamic sizes.
def TPU_MemRefSliceOp : TPU_Op<"memref_slice", [Pure, AttrSizedOperandSegments]> {
  let arguments = (ins
    AnyMemRef:$mem_ref,
    Variadic<I32>:$base_idx,
    Variadic<I32>:$dynamic_sizes
  );
  let results = (outs AnyMemRef:$result);
  let assemblyFormat = [{
    $mem_ref `[` $base_idx `]` (`<` $dynamic_sizes^ `>`)? attr-dict `:` type($mem_ref) `->` type($result)
  }];
  let hasVerifier = 1;
}

// The same memory without some of its size-1 dimensions.
def TPU_MemRefSqueezeOp : TPU_Op<"memref_squeeze", [Pure]> {
  let arguments = (ins AnyMemRef:$input);
  let results = (outs AnyMemRef:$result);
  let assemblyFormat = [{ $input attr-dict `:` type($input) `->` type($result) }];
  let hasVerifier = 1;
}

// Starts copying `source` into `target`; `target_semaphore` counts the bytes as they land.
// Until a wait_dma2 for the same copy returns, `target` holds nothing defined.
def TPU_EnqueueDMAOp : TPU_Op<"enqueue_dma", [AttrSizedOperandSegments]> {
  let arguments = (ins
    AnyMemRef:$source,
    Optional<AnyMemRef>:$source_semaphore,
    AnyMemRef:$target,
    AnyMemRef:$target_semaphore,
    Optional<I32>:$device_id,
    Optional<I32>:$core_id,
    DefaultValuedAttr<I32Attr, "0">:$priority,
    DefaultValuedAttr<BoolAttr, "false">:$strict_ordering
  );
  let assemblyFormat = [{
    `source` `(` $source `:` type($source) `)`
    `target` `(` $target `:` type($target) `)`
    (`source_semaphore` `(` $source_semaphore^ `:` type($source_semaphore) `)`)?
    `target_semaphore` `(` $target_semaphore `:` type($target_semaphore) `)`
    (`device_id` `(` $device_id^ `)`)?
    (`core_id` `(` $core_id^ `)`)?
    attr-dict
  }];
  let hasVerifier = 1;
}

// Waits until `semaphore` has counted the bytes of `dst` (the copy from `src`).
def TPU_WaitDMA2Op : TPU_Op<"wait_dma2", [AttrSizedOperandSegments]> {
  let arguments = (ins
    AnyMemRef:$semaphore,
    AnyMemRef:$src,
    AnyMemRef:$dst,
    Optional<I32>:$device_id,
    Optional<I32>:$core_id,
    DefaultValuedAttr<BoolAttr, "false">:$strict_ordering
  );
  let assemblyFormat = [{
    `semaphore` `(` $semaphore `:` type($semaphore) `)`
    `src` `(` $src `:` type($src) `)`
    `dst` `(` $dst `:` type($dst) `)`
    (`device_id` `(` $device_id^ `)`)?
    (`core_id` `(` $core_id^ `)`)?
    attr-dict
  }];
  let hasVerifier = 1;
}

#endif  // KGEN_TPU_OPS
