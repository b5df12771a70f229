"""README.md's kgen.torch example runs as written, on the CPU (the kernels on ptxemu), with a
feature spec's kernel in place of generated/splash (which takes minutes to emulate: the time
is in docs/benchmarks.md): sm90a_mla_and_or, which like splash has a backward and neither
segment ids nor sinks (head_dim 192, head_dim_v 128, a composed mask, ragged lengths). Its
gradients are compared with the float64 reference's."""
import os
import re
import unittest

import common
import reference

README = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "README.md")
MARKER = "<!-- kgen.torch example"
SUBJECT = "sm90a_mla_and_or"


def example():
    with open(README, encoding="utf-8") as f:
        text = f.read()
    start = text.index(MARKER)
    return re.search(r"```python\n(.*?)```", text[start:], re.DOTALL).group(1)


class ReadmeExampleTest(unittest.TestCase):
    def test_example_runs_and_gives_gradients(self):
        code = example()
        self.assertLessEqual(len(code.strip().splitlines()), 10, "the README example is at most 10 lines")
        self.assertIn('"generated/splash"', code)
        namespace = {}
        exec(code.replace('"generated/splash"', repr(common.folder(SUBJECT))), namespace)  # noqa: S102
        leaves = [namespace[name].detach().double().requires_grad_() for name in ("q", "k", "v")]
        out, _ = reference.attention(common.spec(SUBJECT), *leaves)
        out.square().mean().backward()
        for name, leaf in zip(("q", "k", "v"), leaves):
            error = reference.relative_error(namespace[name].grad, leaf.grad)
            print(f"d{name} error {error:.2e}")
            self.assertLessEqual(error, reference.GRADIENT_TOLERANCE, name)


if __name__ == "__main__":
    unittest.main()
