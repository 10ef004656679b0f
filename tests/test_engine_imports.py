"""engine/ imports nothing but NumPy and the standard library."""
import subprocess
import sys

FORBIDDEN = ("streamlit", "plotly", "pandas", "sympy", "torch", "scipy", "matplotlib")


def test_engine_import_graph_is_numpy_only():
    code = ("import sys, engine, engine.__main__, engine.export\n"
            "bad = sorted({m.split('.')[0] for m in sys.modules} & set(sys.argv[1:]))\n"
            "print(','.join(bad))")
    result = subprocess.run([sys.executable, "-c", code, *FORBIDDEN], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == ""


def test_engine_sources_import_only_numpy_and_stdlib():
    import ast
    import pathlib

    allowed = set(sys.stdlib_module_names) | {"numpy", "engine"}
    for path in pathlib.Path("engine").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module]
            else:
                continue
            assert all(n.split(".")[0] in allowed for n in names), (path, names)
