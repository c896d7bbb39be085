"""Behaviour-preserving rewrites of a module, so a test is judged on behaviour, never on text.

A hunt (kata/hunt.py) grades the learner's pinning test against the handed-out code and the
reference after both went through `rewrite`, with a fresh random generator on every run. The
rewritten module does the same thing for every caller of its public names, but its text, its
private names and the order of its definitions differ from run to run, so a test that hashes the
source, compares private attribute names or counts definitions cannot tell the buggy code from the
correct one.

What it changes (each one safe by construction; where it is not sure, it leaves the code alone):

* the local variables of every function get fresh names (parameters keep theirs: a caller may
  pass them by keyword); a function that calls `locals`, `vars`, `eval` or `exec` is skipped;
* private helpers (module-level functions, classes and constants whose names start with one `_`,
  and private methods of classes) get fresh names everywhere they are used;
* runs of undecorated top-level functions, and of undecorated methods, are shuffled;
* control flow and bytecode change too, so that a fingerprint of the compiled code (its opcodes,
  its constants) is no more stable than the text: about half of the `if`/`else` statements are
  turned round (`if c: A else: B` becomes `if not c: B else: A`, which asks `c` for its truth
  once, as before), and every function (but one that reads its locals by name) gets unused
  local stores of random constants at random places in its body;
* the whole module is printed again by `ast.unparse`: comments go, formatting is normalised.

What it cannot hide: what the code does, and so what it calls and in what order; a test that
fingerprints those (the set of names a function reads, say) can still tell two pieces of code
apart. The README says so.

Example:
    rewrite("def _h(x):\\n    y = x + 1  # one more\\n    return y\\n", random.Random(1))
    -> 'def _h2265b1f5(x):\\n    v_91b7584a = x + 1\\n    v_414c343c = 1978347\\n    return v_91b7584a\\n'
       (names, the unused store's constant and its place depend on the generator)
"""

from __future__ import annotations

import ast
import builtins
import random
import threading

_DYNAMIC = {"locals", "vars", "eval", "exec", "globals"}  # calls that see names as strings
_BUILTINS = set(dir(builtins))
# CPython 3.11 keeps one recursion counter for turning a parse into ast objects, shared by every
# thread: two threads parsing at once fail with "AST constructor recursion depth mismatch".
# kata validate runs several katas' jobs (hunts among them) on a thread pool, so every parse here
# and in kata/hunt.py takes this lock.
_PARSE_LOCK = threading.Lock()


def parse(source: str) -> ast.Module:
    """ast.parse, one thread at a time (see _PARSE_LOCK)."""
    with _PARSE_LOCK:
        return ast.parse(source)


def rewrite(source: str, rng: random.Random) -> str:
    """`source` with the same behaviour and a different text (see the module docstring)."""
    tree = parse(source)
    names = _Fresh(rng, _all_names(tree))
    _rename_privates(tree, names)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            _rename_locals(node, names)
    _shuffle_defs(tree.body, rng)
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            _shuffle_defs(node.body, rng)
    _turn_ifs(tree, rng)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            _dead_stores(node, names, rng)
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


# --- control flow and bytecode ----------------------------------------------------------------


def _turn_ifs(tree: ast.AST, rng: random.Random) -> None:
    """`if c: A else: B` -> `if not c: B else: A`, for about half of the ifs with an else."""
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and node.orelse and rng.random() < 0.5:
            node.test = ast.UnaryOp(op=ast.Not(), operand=node.test)
            node.body, node.orelse = node.orelse, node.body


def _dynamic(func: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in _DYNAMIC
               for n in ast.walk(func))


def _dead_stores(func: ast.FunctionDef | ast.AsyncFunctionDef, fresh: _Fresh, rng: random.Random) -> None:
    """One to three stores of a random constant in fresh locals nothing reads, at random places
    of the function's own body (after its docstring; none in a function that reads its locals
    by name, where a new one would show)."""
    if _dynamic(func):
        return
    start = 1 if func.body and isinstance(func.body[0], ast.Expr) and \
        isinstance(func.body[0].value, ast.Constant) and isinstance(func.body[0].value.value, str) else 0
    for _ in range(rng.randint(1, 3)):
        store = ast.Assign(targets=[ast.Name(id=fresh("v_"), ctx=ast.Store())],
                           value=ast.Constant(value=rng.getrandbits(24)), lineno=func.lineno)
        func.body.insert(rng.randint(start, len(func.body)), store)


# --- fresh names ------------------------------------------------------------------------------


class _Fresh:
    """New identifiers that clash with no name of the module."""

    def __init__(self, rng: random.Random, taken: set[str]):
        self.rng, self.taken = rng, set(taken)

    def __call__(self, prefix: str) -> str:
        while True:
            name = f"{prefix}{self.rng.getrandbits(32):08x}"
            if name not in self.taken:
                self.taken.add(name)
                return name


def _all_names(tree: ast.AST) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, ast.arg):
            found.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
    return found


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


# --- private helpers --------------------------------------------------------------------------


def _rename_privates(tree: ast.Module, fresh: _Fresh) -> None:
    """Module-level private functions, classes and constants, and private methods."""
    module_level: dict[str, str] = {}
    for top in tree.body:
        if isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and _private(top.name):
            module_level[top.name] = fresh("_h")
        elif isinstance(top, ast.Assign):
            for target in top.targets:
                if isinstance(target, ast.Name) and _private(target.id):
                    module_level[target.id] = fresh("_c")
    methods: dict[str, str] = {}
    method_nodes: set[int] = set()  # id() of each method renamed
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and _private(item.name) \
                        and not item.decorator_list:
                    methods.setdefault(item.name, fresh("_m"))
                    method_nodes.add(id(item))
    args = {n.arg for n in ast.walk(tree) if isinstance(n, ast.arg)}
    nested = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef,
              ast.ClassDef)) and n not in tree.body and id(n) not in method_nodes}
    for name in list(module_level):
        if name in args or name in nested:  # shadowed somewhere: renaming could change meaning
            del module_level[name]
    if _uses_strings_for(tree, set(module_level) | set(methods)) or nested & set(methods):
        return  # a name used as a string (getattr, __all__, __slots__): leave every name alone
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in module_level:
            node.id = module_level[node.id]
        elif isinstance(node, ast.Attribute) and node.attr in methods:
            node.attr = methods[node.attr]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name in module_level and node in tree.body:
                node.name = module_level[node.name]
            elif id(node) in method_nodes:
                node.name = methods[node.name]
        elif isinstance(node, ast.Global):
            node.names = [module_level.get(n, n) for n in node.names]


def _uses_strings_for(tree: ast.AST, names: set[str]) -> bool:
    return any(isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value in names
               for n in ast.walk(tree))


# --- locals -----------------------------------------------------------------------------------


def _rename_locals(func: ast.FunctionDef | ast.AsyncFunctionDef, fresh: _Fresh) -> None:
    nested_args: set[str] = set()
    declared: set[str] = set()
    stored: set[str] = set()
    for node in ast.walk(func):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _DYNAMIC:
            return
        if isinstance(node, ast.arg):
            nested_args.add(node.arg)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            declared.update(node.names)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            stored.add(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            stored.add(node.name)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not func:
            declared.add(node.name)  # a nested definition's name: left alone
    own = {n for n in stored - nested_args - declared if n not in _BUILTINS and not n.startswith("__")}
    if not own:
        return
    new = {name: fresh("v_") for name in sorted(own)}
    for node in ast.walk(func):
        if isinstance(node, ast.Name) and node.id in new:
            node.id = new[node.id]
        elif isinstance(node, ast.ExceptHandler) and node.name in new:
            node.name = new[node.name]


# --- order of definitions ---------------------------------------------------------------------


def _shuffle_defs(body: list[ast.stmt], rng: random.Random) -> None:
    """Shuffle each run of consecutive undecorated functions (their order is not behaviour)."""
    i = 0
    while i < len(body):
        j = i
        while j < len(body) and isinstance(fn := body[j], (ast.FunctionDef, ast.AsyncFunctionDef)) \
                and not fn.decorator_list:
            j += 1
        if j - i > 1:
            run = body[i:j]
            rng.shuffle(run)
            body[i:j] = run
        i = max(j, i + 1)
