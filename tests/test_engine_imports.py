"""engine/ imports nothing but NumPy and the standard library; ui's pure modules import no Streamlit; and the tests
of the engine run without Playwright (only the browser fixtures import it)."""
import ast
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
FORBIDDEN = ("streamlit", "plotly", "pandas", "sympy", "torch", "scipy", "matplotlib")
# The ui modules that draw with Streamlit; every other one is pure (tested without it) and must stay so.
STREAMLIT_UI = {"core.runs", "core.session", "core.sidebar", "core.streamlit_internals",
                "classroom.follow", "classroom.presenter", "classroom.share",
                "views.draw", "views.drawn", "views.drill", "views.editors", "views.frame", "views.pickers", "views.steps",
                "lessons.animation_views", "lessons.batch_views", "lessons.blocks", "lessons.derivation_views",
                "lessons.embedding_views", "lessons.generation_views", "lessons.positional_views",
                "lessons.training_views"}
# Makes `import playwright` fail in a Python started with this folder first on PYTHONPATH, as where it is not installed.
NO_PLAYWRIGHT = """
import importlib.abc, sys
class NoPlaywright(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "playwright":
            raise ModuleNotFoundError(f"No module named {name!r} (hidden)", name=name)
sys.meta_path.insert(0, NoPlaywright())
"""


def imported_top_modules(code: str, *args: str) -> set[str]:
    code += "\nprint(','.join(sorted({m.split('.')[0] for m in sys.modules})))"
    result = subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True, text=True, check=True)
    return set(result.stdout.strip().split(","))


def test_engine_import_graph_is_numpy_only():
    assert imported_top_modules("import sys, engine, engine.__main__, engine.export") & set(FORBIDDEN) == set()


def test_engine_sources_import_only_numpy_and_stdlib():
    allowed = set(sys.stdlib_module_names) | {"numpy", "engine"}
    for path in (ROOT / "engine").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module]
            else:
                continue
            assert all(n.split(".")[0] in allowed for n in names), (path, names)


def test_pure_ui_modules_import_no_streamlit():
    modules = sorted(".".join(path.relative_to(ROOT / "ui").with_suffix("").parts)
                     for path in (ROOT / "ui").rglob("*.py") if path.stem != "__init__")
    pure = [m for m in modules if m not in STREAMLIT_UI]
    assert STREAMLIT_UI <= set(modules) and {"core.format", "core.i18n", "core.labels", "core.state"} <= set(pure)
    imported = imported_top_modules("import sys, importlib\nfor m in sys.argv[1:]: importlib.import_module(f'ui.{m}')",
                                    *pure)
    assert "streamlit" not in imported and "ui" in imported
    assert "streamlit" in imported_top_modules("import sys, ui.classroom.share")  # the check sees Streamlit where it is


def test_engine_tests_run_without_playwright(tmp_path):
    (tmp_path / "sitecustomize.py").write_text(NO_PLAYWRIGHT)
    env = {"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    hidden = subprocess.run([sys.executable, "-c", "import playwright"], env=env, capture_output=True, text=True)
    assert "No module named 'playwright' (hidden)" in hidden.stderr
    tests = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "tests/test_properties.py"],
                           cwd=ROOT, env=env, capture_output=True, text=True)
    assert tests.returncode == 0, tests.stdout[-2000:] + tests.stderr[-2000:]
