"""Issue 86, item 7: no kernel or device function in gpu/ takes more than 16 parameters (read-only
scalars and per-search arrays go in bundles: tuples the kernel unpacks). A device function is one
decorated with a `cuda.jit` or with gpu/runtime/lanes.py's `device` (an inline one)."""
import ast

from conftest import ROOT

MOST_PARAMETERS = 16


def is_compiled(decorator):
    """Whether a decorator makes a kernel or device function."""
    text = ast.unparse(decorator)
    return "jit" in text or text == "device"


def wide_kernels(files):
    """(file, function) of every jit-compiled function of `files` ({name: source}) with more than
    MOST_PARAMETERS parameters."""
    wide = set()
    for name, source in files.items():
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef) and any(is_compiled(d) for d in node.decorator_list) \
                    and len(node.args.args) > MOST_PARAMETERS:
                wide.add((name, node.name))
    return wide


def test_no_kernel_in_gpu_takes_more_than_16_parameters():
    files = {str(p.relative_to(ROOT)): p.read_text() for p in (ROOT / "gpu").rglob("*.py")}
    assert len(files) > 20
    assert wide_kernels(files) == set()


def test_a_wide_device_function_is_caught():
    params = ", ".join(f"a{k}" for k in range(MOST_PARAMETERS + 1))
    source = f"from numba import cuda\n\n\n@cuda.jit(device=True)\ndef wide({params}):\n    return a0\n"
    assert wide_kernels({"gpu/x.py": source}) == {("gpu/x.py", "wide")}
    narrow = source.replace(f", a{MOST_PARAMETERS})", ")")
    assert wide_kernels({"gpu/x.py": narrow}) == set()
    inline = source.replace("@cuda.jit(device=True)", "@device")
    assert wide_kernels({"gpu/x.py": inline}) == {("gpu/x.py", "wide")}


LONGEST_FUNCTION = 119  # lines, a kernel's factory with its kernel included (issue 86: under 120)


def test_no_function_in_gpu_is_120_lines_or_longer():
    longest = max((node.end_lineno - node.lineno + 1, str(p.relative_to(ROOT)), node.name)
                  for p in (ROOT / "gpu").rglob("*.py") for node in ast.walk(ast.parse(p.read_text()))
                  if isinstance(node, ast.FunctionDef))
    assert longest[0] <= LONGEST_FUNCTION, longest
