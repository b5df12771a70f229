"""kgen.torch's builds: the cache key follows content (not paths), a file lock makes
concurrent loaders build once, and the CUDA build (nvcc, sm_90a SASS) links and loads on this
GPU-less machine, where its launcher refuses bad pointers and reports the missing device.
The CUDA kernels themselves never run here: no GPU."""
import os
import shutil
import subprocess
import tempfile
import threading
import time
import unittest
from unittest import mock

import common
import kgen.torch
from kgen.torch import build, interface, native, toolchain
from kgen.errors import GeneratedFolderError


class CacheKeyTest(unittest.TestCase):
    def setUp(self):
        self.scratch = tempfile.mkdtemp()
        self.copy = os.path.join(self.scratch, "copy", common.SUBJECT)
        shutil.copytree(common.folder(), self.copy)
        self.tools = toolchain.toolchain(emulated=True)

    def tearDown(self):
        shutil.rmtree(self.scratch)

    def key(self, folder, kind="emulated"):
        tools = self.tools if kind == "emulated" else toolchain.toolchain(emulated=False)
        return build.cache_key(interface.read_interface(folder), kind, tools)

    def test_same_content_elsewhere_is_the_same_build(self):
        self.assertEqual(self.key(common.folder()), self.key(self.copy))

    def test_a_changed_kernel_source_is_another_build(self):
        original = self.key(self.copy)
        for suffix in ("sm90a.cu", "sm90a.h", "sm90a.backward.cu", "sm90a.backward.h"):
            path = os.path.join(self.copy, f"{common.SUBJECT}.{suffix}")
            with open(path, "a", encoding="utf-8") as f:
                f.write("\n// changed\n")
            changed = self.key(self.copy)
            self.assertNotEqual(original, changed, suffix)
            original = changed

    def test_a_changed_runtime_header_is_another_build(self):
        runtime = os.path.join(self.scratch, "runtime")
        shutil.copytree(self.tools.runtime_include, runtime)
        with mock.patch.dict(os.environ, {"KGEN_RUNTIME_INCLUDE": runtime}):
            tools = toolchain.toolchain(emulated=True)
            original = build.cache_key(interface.read_interface(self.copy), "emulated", tools)
            with open(os.path.join(runtime, "sm90a", "forward", "kernel.cuh"), "a", encoding="utf-8") as f:
                f.write("\n")
            changed = build.cache_key(interface.read_interface(self.copy), "emulated", tools)
        self.assertNotEqual(original, changed)

    def test_cuda_and_emulated_builds_differ(self):
        self.assertNotEqual(self.key(self.copy, "emulated"), self.key(self.copy, "cuda"))

    def test_the_emulator_libraries_are_in_the_key(self):
        self.assertTrue(any(p.endswith("libkgen_emu_cudart.a") for p in self.tools.emulator_libraries()))


class ShimSourceTest(unittest.TestCase):
    """shim.cu compiles against every launcher it can meet: each optional operand present or
    not, with and without a backward (the feature specs and the checked-in kernels), checked by
    the host compiler in seconds rather than by a full nvcc build per kernel."""

    def test_shim_compiles_against_every_launcher(self):
        cuda_include = os.path.join(os.path.dirname(os.path.dirname(toolchain.toolchain(False).nvcc)), "include")
        folders = [os.path.join(root, name) for root in (common.KERNELS, os.path.join(toolchain.REPOSITORY, "generated"))
                   for name in sorted(os.listdir(root)) if os.path.isfile(os.path.join(root, name, "MANIFEST.json"))]
        checked = 0
        for folder in folders:
            try:
                i = interface.read_interface(folder)
            except GeneratedFolderError:
                continue  # no sm90a kernel there
            command = ["g++", "-std=c++20", "-fsyntax-only", "-Wall", "-Wextra", "-Werror", "-I", cuda_include,
                       "-include", i.file("sm90a.h"), f"-DKGEN_FORWARD={i.forward_namespace}"]
            if i.backward:
                command += ["-include", i.file("sm90a.backward.h"), f"-DKGEN_BACKWARD={i.backward_namespace}"]
            result = subprocess.run(command + ["-x", "c++", build.SHIM], capture_output=True, text=True)
            self.assertEqual(result.returncode, 0, f"{i.name}:\n{result.stderr}")
            checked += 1
        self.assertGreaterEqual(checked, 10)


class LockTest(unittest.TestCase):
    def test_concurrent_loaders_build_once(self):
        calls = []

        def slow_build(interface_, tools, folder):
            calls.append(folder)
            time.sleep(0.5)
            with open(os.path.join(folder, f"lib{interface_.name}.so"), "w") as f:
                f.write("built")

        with tempfile.TemporaryDirectory() as cache, mock.patch.dict(os.environ, {"KGEN_CACHE_DIR": cache}), \
                mock.patch.object(build, "_build", slow_build):
            i = interface.read_interface(common.folder())
            results = []
            threads = [threading.Thread(target=lambda: results.append(build.build(i, "emulated"))) for _ in range(3)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            self.assertEqual(len(calls), 1, "one build for three concurrent loaders")
            self.assertEqual(len(set(results)), 1)
            self.assertTrue(os.path.isfile(results[0]))
            self.assertEqual(os.listdir(os.path.dirname(results[0])), [os.path.basename(results[0])])

    def test_a_failed_build_leaves_nothing_behind(self):
        def failing_build(interface_, tools, folder):
            raise build.BuildError("planted")

        with tempfile.TemporaryDirectory() as cache, mock.patch.dict(os.environ, {"KGEN_CACHE_DIR": cache}), \
                mock.patch.object(build, "_build", failing_build):
            with self.assertRaisesRegex(build.BuildError, "planted"):
                build.build(interface.read_interface(common.folder()), "emulated")
            self.assertEqual([n for n in os.listdir(os.path.join(cache, "torch")) if not n.endswith(".lock")], [])


class CudaBuildTest(unittest.TestCase):
    """The library CUDA tensors would use, built by nvcc for sm_90a as on a GPU machine."""

    def test_builds_loads_and_its_launcher_checks_arguments(self):
        attention = kgen.torch.load(common.folder())
        started = time.monotonic()
        path = attention.build("cuda")
        print(f"cuda build (or cache): {time.monotonic() - started:.1f} s")
        shim = native.Shim(path, attention.interface)  # loads without a GPU; checks the compiled interface
        i = attention.interface
        tensors = [native.tensor(None, [i.q_heads * i.q_len * i.head_dim, i.q_len * i.head_dim, i.head_dim])] * 4
        with self.assertRaisesRegex(native.KernelError, r"forward launcher failed \(invalid argument\): .*q"):
            shim.forward(*tensors, None, None, None, None, None, -1, None)
        # Plausible device addresses get past the argument checks to the first CUDA call, which
        # finds no GPU (or no driver) on this machine.
        address = 1 << 20
        tensors = [native.tensor(address, t_strides) for t_strides in
                   ([i.q_heads * i.q_len * 64, i.q_len * 64, 64], [i.kv_heads * i.kv_len * 64, i.kv_len * 64, 64],
                    [i.kv_heads * i.kv_len * 64, i.kv_len * 64, 64], [i.q_heads * i.q_len * 64, i.q_len * 64, 64])]
        with self.assertRaisesRegex(native.KernelError, "CUDA error"):
            shim.forward(*tensors, address, address, address, address, address, -1, None)


if __name__ == "__main__":
    unittest.main()
