# lit configuration: each test is a .test file that embeds its specs (split-file), or reads
# the checked-in ones (generated/), and pins the generated text with FileCheck.
import os
import sys

import lit.formats

config.name = "kgen"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.kgen_binary_dir, "tests", "lit")
config.substitutions.append(("%kgen", config.kgen))
# %{...}, not %name: lit's own %s would otherwise eat the start of "%source...".
config.substitutions.append(("%{root}", config.kgen_source_dir))
config.substitutions.append(("%{python}", sys.executable))
config.environment["PATH"] = os.pathsep.join([config.llvm_bin, config.environment.get("PATH", "")])
