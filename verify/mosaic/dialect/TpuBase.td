// The subset of Mosaic's `tpu` dialect that kgen's kernels (and the Splash kernels Pallas
// emits) use. Mnemonics, enum spellings and assembly formats follow the real dialect
// (jaxlib/mosaic/dialect/tpu) so that one text parses under both; semantics beyond
// parsing live in the lowering to upstream MLIR, not here.

#ifndef KGEN_TPU_BASE
#define KGEN_TPU_BASE

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/IR/BuiltinTypeInterfaces.td"

def TPU_Dialect : Dialect {
  let name = "tpu";
  let cppNamespace = "::kgen::tpu";
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
}

class TPU_Attr<string name, string mnemonic_, list<Trait> traits = []>
    : AttrDef<TPU_Dialect, name, traits> {
  let mnemonic = mnemonic_;
}

class TPU_Type<string name, string mnemonic_, list<Trait> traits = []>
    : TypeDef<TPU_Dialect, name, traits> {
  let mnemonic = mnemonic_;
}

// What a DMA signals when its bytes have landed (`!tpu.dma_semaphore`); kernels that copy by
// hand hold them in scratch memrefs of memory space semaphore_mem.
def TPU_DMASemaphoreType : TPU_Type<"DMASemaphore", "dma_semaphore", [MemRefElementTypeInterface]>;

// Enum values are those of the real dialect: bytecode and attribute dictionaries that
// carry the integer form then mean the same thing in both.
def TPU_CoreType : I32EnumAttr<"CoreType", "Core type", [
  I32EnumAttrCase<"kTc", 0, "tc">,
  I32EnumAttrCase<"kScScalarSubcore", 1, "sc_scalar_subcore">,
  I32EnumAttrCase<"kScVectorSubcore", 2, "sc_vector_subcore">
]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::kgen::tpu";
}
def TPU_CoreTypeEnum : EnumAttr<TPU_Dialect, TPU_CoreType, "core_type"> {
  let assemblyFormat = "`<` $value `>`";
}

def TPU_PipelineMode : I32EnumAttr<"PipelineMode", "Pipeline mode", [
  I32EnumAttrCase<"kSynchronous", 1, "synchronous">,
  I32EnumAttrCase<"kDoubleBuffered", 2, "double_buffered">
]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::kgen::tpu";
}
def TPU_PipelineModeEnum : EnumAttr<TPU_Dialect, TPU_PipelineMode, "pipeline_mode"> {
  let assemblyFormat = "`<` $value `>`";
}

def TPU_DimensionSemantics : I32EnumAttr<"DimensionSemantics", "Dimension semantics", [
  I32EnumAttrCase<"parallel", 0>,
  I32EnumAttrCase<"arbitrary", 1>,
  I32EnumAttrCase<"core_parallel", 2>,
  I32EnumAttrCase<"subcore_parallel", 3>
]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::kgen::tpu";
}
def TPU_DimensionSemanticsEnum
    : EnumAttr<TPU_Dialect, TPU_DimensionSemantics, "dimension_semantics"> {
  let assemblyFormat = "`<` $value `>`";
}

def TPU_ContractPrecision : I32EnumAttr<"ContractPrecision", "Contraction precision", [
  I32EnumAttrCase<"kBF16", 0, "bf16">,
  I32EnumAttrCase<"kFP32", 1, "fp32">,
  I32EnumAttrCase<"kBF16x3", 2, "bf16x3">
]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::kgen::tpu";
}
def TPU_ContractPrecisionEnum
    : EnumAttr<TPU_Dialect, TPU_ContractPrecision, "contract_precision"> {
  let assemblyFormat = "`<` $value `>`";
}

def TPU_MemorySpace : I32EnumAttr<"MemorySpace", "Memory space", [
  I32EnumAttrCase<"kAny", 4294967295, "any">,
  I32EnumAttrCase<"kVmem", 0, "vmem">,
  I32EnumAttrCase<"kSmem", 1, "smem">,
  I32EnumAttrCase<"kHbm", 2, "hbm">,
  I32EnumAttrCase<"kCmem", 3, "cmem">,
  I32EnumAttrCase<"kSemaphoreMem", 4, "semaphore_mem">,
  I32EnumAttrCase<"kVmemShared", 5, "vmem_shared">,
  I32EnumAttrCase<"kHost", 6, "host">
]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::kgen::tpu";
}
def TPU_MemorySpaceEnum : EnumAttr<TPU_Dialect, TPU_MemorySpace, "memory_space"> {
  let assemblyFormat = "`<` $value `>`";
}

// output_dim_order is a flat list of (operand, dim) pairs: operand 0 is lhs, 1 is rhs.
def TPU_DotDimensionNumbersAttr
    : TPU_Attr<"DotDimensionNumbers", "dot_dimension_numbers"> {
  let parameters = (ins
    ArrayRefParameter<"int64_t", "">:$lhs_contracting_dims,
    ArrayRefParameter<"int64_t", "">:$rhs_contracting_dims,
    OptionalArrayRefParameter<"int64_t", "">:$lhs_non_contracting_dims,
    OptionalArrayRefParameter<"int64_t", "">:$rhs_non_contracting_dims,
    ArrayRefParameter<"int64_t", "">:$output_dim_order,
    OptionalArrayRefParameter<"int64_t", "">:$lhs_batch_dims,
    OptionalArrayRefParameter<"int64_t", "">:$rhs_batch_dims
  );
  let assemblyFormat =
      "`<` `[` $lhs_contracting_dims `]` `,` `[` $rhs_contracting_dims `]` `,` "
      "`[` (`]`):($lhs_non_contracting_dims^ `]`)? `,` "
      "`[` (`]`):($rhs_non_contracting_dims^ `]`)? `,` "
      "`[` $output_dim_order `]` `,` "
      "`[` (`]`):($lhs_batch_dims^ `]`)? `,` "
      "`[` (`]`):($rhs_batch_dims^ `]`)? `>`";
}

#endif  // KGEN_TPU_BASE
