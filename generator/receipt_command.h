// `kgen receipt`: records a check's facts in a kernel's receipt, and checks that every
// generated kernel has a current receipt (docs/receipts.md).
//
//   kgen receipt add SPEC --target T --check NAME --facts FILE [--generated DIR] [--receipts DIR] [--root DIR]
//   kgen receipt check [--generated DIR] [--receipts DIR]
//
// Exit status: 0 done / every receipt current, 1 a receipt is not current, 2 bad arguments.
#pragma once

namespace kgen {

// argv[1] is "receipt". `project_root` is the default of --root.
int run_receipt_command(int argc, char** argv, const char* project_root);

}  // namespace kgen
