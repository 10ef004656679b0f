"""engine/ imports nothing but NumPy and the standard library; ui's pure modules import no Streamlit; no module of the
project imports itself through others (no import cycle) and no ui/ package holds more than MAX_MODULES modules; the
tests of the engine run without Playwright (only the browser fixtures import it); and no line of the project's Python
is longer than MAX_LINE characters."""
import ast
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
FORBIDDEN = ("streamlit", "plotly", "pandas", "sympy", "torch", "scipy", "matplotlib")
# The ui modules that draw with Streamlit; every other one is pure (tested without it) and must stay so.
STREAMLIT_UI = {"core.runs", "core.session", "core.session_store", "core.sidebar", "core.streamlit_internals",
                "classroom.follow", "classroom.presenter", "classroom.quiz", "classroom.quiz_views", "classroom.scroll",
                "classroom.share",
                "views.draw", "views.drawn", "views.drill", "views.editors", "views.exports", "views.frame",
                "views.pickers", "views.steps", "views.style", "views.vocabulary",
                "lessons.animation_views", "lessons.batch_views", "lessons.blocks", "lessons.derivation_views",
                "lessons.embedding_views", "lessons.exercise_views", "lessons.generation_views",
                "lessons.positional_views", "lessons.training_views", "handout.download",
                "vision.vit_frame", "vision.vit_training",
                "vision.vit_evaluation", "vision.vit_encoder_views", "vision.vit_head_views", "vision.pixel_pad",
                "vision.image_views", "vision.embed_views"}
MAX_MODULES = 15  # a ui/ package's modules (its __init__ aside): past that, a part hides in a long list
MAX_LINE = 120  # characters, not bytes: a line of Chinese or of math symbols is as wide as its characters (issue 39)
# a ui/ package imports only those before it
UI_LAYERS = ("stores", "core", "classroom", "views", "lessons", "handout", "vision")
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
    assert STREAMLIT_UI <= set(modules) and {"core.format", "core.i18n", "core.labels", "core.state.link"} <= set(pure)
    imported = imported_top_modules("import sys, importlib\nfor m in sys.argv[1:]: importlib.import_module(f'ui.{m}')",
                                    *pure)
    assert "streamlit" not in imported and "ui" in imported
    assert "streamlit" in imported_top_modules("import sys, ui.classroom.share")  # the check sees Streamlit where it is


def project_modules() -> dict[str, pathlib.Path]:
    """Every module of engine/, ui/, app_pages/ and app.py, by dotted name (a package by its own name)."""
    paths = [ROOT / "app.py", *(p for folder in ("engine", "ui", "app_pages") for p in (ROOT / folder).rglob("*.py"))]
    modules = {}
    for path in paths:
        parts = path.relative_to(ROOT).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def imports_of(name: str, path: pathlib.Path, modules: dict) -> set[str]:
    """The project's modules that `name` imports, wherever in its source (a function's import counts too): the
    module named, or a name imported from a package when it is a module (`from ui.core import session`)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in modules:  # `import ui.core.state` names a module; a name in one: its module
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each set of modules that import one another (Tarjan's strongly connected components), as one cycle through
    them, e.g. ["ui.a", "ui.b", "ui.a"]."""
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def visit(module):
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for other in sorted(graph[module]):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in on_stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            component = []
            while not component or component[-1] != module:
                component.append(stack.pop())
                on_stack.discard(component[-1])
            if len(component) > 1 or module in graph[module]:
                cycles.append(_cycle_through(graph, set(component), module))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return cycles


def _cycle_through(graph, component, start) -> list[str]:
    """A path from start back to start inside one strongly connected component (breadth first: the shortest)."""
    paths = {start: [start]}
    queue = [start]
    while queue:
        module = queue.pop(0)
        for other in sorted(graph[module] & component):
            if other == start:
                return paths[module] + [start]
            if other not in paths:
                paths[other] = paths[module] + [other]
                queue.append(other)
    return [start, start]


def test_no_module_of_the_project_imports_itself_through_others():
    """An import made inside a function counts: a cycle it hides is a dependency the wrong way round."""
    modules = project_modules()
    graph = {name: imports_of(name, path, modules) for name, path in modules.items()}
    assert graph["ui.views.frame"] >= {"ui.core.session", "ui.classroom.follow"}  # the parser sees the imports
    assert {"ui.core.session", "ui.views.pickers"} <= graph["ui.views.editors"]  # "from ui.core import session" too
    assert import_cycles(graph) == [], " | ".join(" -> ".join(cycle) for cycle in import_cycles(graph))


def test_import_cycles_are_found_and_named():
    graph = {"ui.a": {"ui.b"}, "ui.b": {"ui.c"}, "ui.c": {"ui.a", "ui.d"}, "ui.d": set(), "ui.e": {"ui.e"}}
    assert import_cycles(graph) == [["ui.a", "ui.b", "ui.c", "ui.a"], ["ui.e", "ui.e"]]
    assert import_cycles({"ui.a": {"ui.b"}, "ui.b": set()}) == []


def test_each_ui_package_imports_only_the_packages_before_it():
    modules = project_modules()
    layer = {name: UI_LAYERS.index(name.split(".")[1]) for name in modules if name.count(".") >= 2
             and name.startswith("ui.")}
    assert set(name.split(".")[1] for name in layer) == set(UI_LAYERS)
    upward = sorted(f"{name} -> {other}" for name in layer for other in imports_of(name, modules[name], modules)
                    if layer.get(other, -1) > layer[name])
    assert upward == []


def test_no_ui_package_holds_more_than_fifteen_modules():
    folders = [ROOT / "ui", *(p for p in (ROOT / "ui").rglob("*") if p.is_dir() and (p / "__init__.py").exists())]
    sizes = {folder.relative_to(ROOT).as_posix(): len([p for p in folder.glob("*.py") if p.name != "__init__.py"])
             for folder in folders}
    assert len(sizes) > 2 and sizes["ui"] == 0, sizes  # the parts are packages; ui/ holds only them
    assert {folder: n for folder, n in sizes.items() if n > MAX_MODULES} == {}, sizes


def test_engine_tests_run_without_playwright(tmp_path):
    (tmp_path / "sitecustomize.py").write_text(NO_PLAYWRIGHT)
    env = {"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    hidden = subprocess.run([sys.executable, "-c", "import playwright"], env=env, capture_output=True, text=True)
    assert "No module named 'playwright' (hidden)" in hidden.stderr
    tests = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "tests/test_properties.py"],
                           cwd=ROOT, env=env, capture_output=True, text=True)
    assert tests.returncode == 0, tests.stdout[-2000:] + tests.stderr[-2000:]


# The one module that reads and writes Streamlit's session_state; and the one that reaches Streamlit's private
# SessionState object (its widget metadata, not the session's values: forget_stale_widgets).
SESSION_STATE_DOORS = {"ui.core.session_store", "ui.core.streamlit_internals"}


def session_state_uses(path: pathlib.Path) -> list[int]:
    """The lines of a source that name Streamlit's session state: `st.session_state`, or an import of it."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text())):
        named = (node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None)
        imported = [alias.name for alias in node.names] if isinstance(node, ast.ImportFrom) else []
        if named == "session_state" or {"session_state", "get_session_state"} & set(imported):
            lines.append(node.lineno)
    return lines


def test_session_state_is_reached_through_the_store_alone():
    modules = {name: path for name, path in project_modules().items() if not name.startswith("engine")}
    uses = {name: session_state_uses(path) for name, path in modules.items()}
    assert all(uses[door] for door in SESSION_STATE_DOORS)  # the check sees a use where there is one
    assert {name: lines for name, lines in uses.items() if lines and name not in SESSION_STATE_DOORS} == {}


def test_no_line_of_the_projects_python_is_longer_than_max_line():
    tracked = subprocess.run(["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True, text=True, check=True)
    paths = tracked.stdout.splitlines()
    assert "tests/test_engine_imports.py" in paths  # the check reads the project's files
    too_long = [f"{path}:{number} ({len(line)} characters)" for path in paths
                for number, line in enumerate((ROOT / path).read_text(encoding="utf-8").split("\n"), 1)
                if len(line) > MAX_LINE]
    assert too_long == [], "\n".join(too_long)
