"""Startup hook of shadow test runs (stdlib only): imports bound for the user's project land in the shadow.

The runner copies this file beside the report plugin as `fixloop_shadow_site.py`, with a `sitecustomize.py`
that calls `install()`. Python runs sitecustomize after the site-packages `.pth` files, so editable installs
have already put their path entries on `sys.path` and their finders on `sys.meta_path`, and before pytest
or any test module is imported. `install()` then moves, from $FIXLOOP_REAL_ROOT to the same place under
$FIXLOOP_SHADOW_ROOT:

- `sys.path` entries (the `.pth` path entries of setuptools' compat mode and src layouts, hatchling,
  pdm-backend, flit, poetry-core, uv, `setup.py develop`; the link tree of setuptools' strict mode is
  replaced by the shadow's copy of the folder it mirrors);
- the path tables of editable finders on `sys.meta_path` (setuptools ≥ 64 `MAPPING` and `NAMESPACES`,
  the `editables` redirector of hatchling's and pdm-backend's exact mode), found as dicts of paths on the
  finder, its class or its module;

never anything inside a virtual environment, and never to a path the shadow does not have. Every Python
process the tests start inherits the environment, so it is redirected too, and each one appends to the
report, at exit, the modules it still loaded from the user's real files: the runner refuses such a run.
$FIXLOOP_NO_IMPORT_REDIRECT=1 switches the redirection off (the record stays): the control that proves
the record can catch a run that tested the user's files.
"""

import atexit
import json
import os
import sys

REAL_ENV = "FIXLOOP_REAL_ROOT"
SHADOW_ENV = "FIXLOOP_SHADOW_ROOT"
OFF_ENV = "FIXLOOP_NO_IMPORT_REDIRECT"
REPORT_ENV = "FIXLOOP_REPORT_FILE"
_MAX_LISTED = 50

_real = ""
_shadow = ""
_prefixes = ()
_environment_dirs = {}
redirected = []  # what install() moved, one short line each


def _norm(path):
    return os.path.normcase(os.path.realpath(path))


def _inside(path, root):
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _in_environment(path):
    """Whether a (normalized) path lies in a virtualenv, an interpreter prefix or a site-packages folder."""
    if any(_inside(path, prefix) for prefix in _prefixes):
        return True
    parts = path.split(os.sep)
    if "site-packages" in parts or "dist-packages" in parts:
        return True
    folder = os.path.dirname(path)
    while _inside(folder, _real) and folder != _real:
        if folder not in _environment_dirs:
            _environment_dirs[folder] = os.path.isfile(os.path.join(folder, "pyvenv.cfg"))
        if _environment_dirs[folder]:
            return True
        folder = os.path.dirname(folder)
    return False


def real_file(path):
    """`path` relative to the user's project when it is one of the user's own files there, else None."""
    if not _real or not isinstance(path, str) or not os.path.isabs(path):
        return None
    real = _norm(path)
    if not _inside(real, _real) or _inside(real, _shadow) or _in_environment(real):
        return None
    return os.path.relpath(real, _real)


def shadow_path(path):
    """The shadow's counterpart of `path` when `path` is in the user's project and the shadow has it."""
    rel = real_file(path)
    if rel is None:
        return None
    target = _shadow if rel == os.curdir else os.path.join(_shadow, rel)
    return target if os.path.exists(target) else None


def _link_tree_base(entry, limit=200):
    """The source folder a link tree mirrors (setuptools' strict editable mode: build/__editable__.* holds
    links to the user's files, absent from the shadow), read from its first link; None when not one."""
    seen = 0
    for folder, _, files in os.walk(entry):
        for name in files:
            seen += 1
            path = os.path.join(folder, name)
            if os.path.islink(path):
                rel = os.path.relpath(path, entry)
                target = _norm(path)
                if target.endswith(os.sep + rel):
                    return target[: -len(rel) - 1]
                return None
            if seen > limit:
                return None
    return None


def _moved(value):
    """`value` (a path or a list of paths) with its paths moved into the shadow, or None if none moved."""
    if isinstance(value, str):
        return shadow_path(value)
    if isinstance(value, list) and value and all(isinstance(item, str) for item in value):
        moved = [shadow_path(item) or item for item in value]
        return moved if moved != value else None
    return None


def _redirect_tables(owner, label):
    for name, table in list(vars(owner).items()):
        if name.startswith("__") or not isinstance(table, dict) or not table:
            continue
        for key, value in list(table.items()):
            moved = _moved(value)
            if moved is not None:
                table[key] = moved
                redirected.append(f"{label}.{name}[{key!r}]")


def _redirect_finder(finder):
    module_name = getattr(finder, "__module__", "") or ""
    if module_name.startswith(("_frozen_importlib", "importlib", "zipimport")):
        return
    label = getattr(finder, "__name__", None) or type(finder).__name__
    owners = [finder] if hasattr(finder, "__dict__") else []
    if not isinstance(finder, type):
        owners.append(type(finder))
    module = sys.modules.get(module_name)
    if module is not None:
        owners.append(module)
    for owner in owners:
        try:
            _redirect_tables(owner, label)
        except TypeError:  # an owner without a __dict__
            continue


def install():
    """Redirect this process's imports from the user's project into the shadow; record the rest at exit."""
    global _real, _shadow, _prefixes
    real, shadow = os.environ.get(REAL_ENV), os.environ.get(SHADOW_ENV)
    if not real or not shadow or _real:
        return
    _real, _shadow = _norm(real), _norm(shadow)
    prefixes = (sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix)
    _prefixes = tuple({_norm(prefix) for prefix in prefixes})
    atexit.register(record_real_imports)
    if os.environ.get(OFF_ENV):
        return
    for index, entry in enumerate(list(sys.path)):
        moved = shadow_path(entry)
        if moved is None and real_file(entry) is not None:
            base = _link_tree_base(entry)
            moved = shadow_path(base) if base is not None else None
        if moved is not None:
            sys.path[index] = moved
            sys.path_importer_cache.pop(entry, None)
            redirected.append(f"sys.path {os.path.relpath(_norm(entry), _real)}")
    for finder in list(sys.meta_path):
        _redirect_finder(finder)


def real_imports():
    """(module, path relative to the user's project) of each loaded module that came from the user's files."""
    found = []
    for name, module in list(sys.modules.items()):
        rel = real_file(getattr(module, "__file__", None))
        if rel is not None:
            found.append([name, rel.replace(os.sep, "/")])
    return sorted(found)


def installed_packages():
    """(name, folder or file) of each top-level module loaded from an environment (site-packages)."""
    found = []
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if "." in name or not isinstance(file, str) or not os.path.isabs(file):
            continue
        path = _norm(file)
        parts = path.split(os.sep)
        if "site-packages" in parts or "dist-packages" in parts:
            found.append([name, os.path.dirname(file) if file.endswith("__init__.py") else file])
    return sorted(found)


def record_real_imports():
    """Append this process's real imports to the report (at exit, and from the plugin at session end)."""
    path = os.environ.get(REPORT_ENV)
    found = real_imports()
    if not path or not found:
        return
    record = {"kind": "real_imports", "pid": os.getpid(), "modules": found[:_MAX_LISTED], "count": len(found)}
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, (json.dumps(record) + "\n").encode("utf-8"))
        finally:
            os.close(fd)
    except OSError:
        pass


SITECUSTOMIZE = '''"""fixloop: redirect imports into the shadow, then run the sitecustomize this one hides."""
import fixloop_shadow_site

fixloop_shadow_site.install()
fixloop_shadow_site.chain_sitecustomize(__file__)
'''


def chain_sitecustomize(ours):
    """Run the next `sitecustomize` on sys.path (the environment's own), which ours shadows."""
    import importlib.machinery
    import importlib.util

    here = _norm(os.path.dirname(ours))
    path = [entry for entry in sys.path if _norm(entry or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as error:  # as Python itself does: say so and go on
        print(f"Error in sitecustomize; set PYTHONVERBOSE for traceback:\n{error!r}", file=sys.stderr)
