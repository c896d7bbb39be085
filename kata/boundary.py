"""The process boundary: the learner's module runs in a process of its own, the grader talks to it.

A hidden test's `impl` is, across the boundary, a `RemoteModule`: each attribute read, call and
operator on it (or on what it returns) is a request over a pair of pipes to a server process
(`python -m kata.boundary`) that imported the learner's file and nothing of the grader's. The
hidden tests, the oracles, the helpers and every comparison stay in the grader's process, which
the learner's code cannot reach: no `sys.modules` to borrow an oracle from, no frame to write an
expected value into, no helper to swap.

What crosses, and how (the codec is JSON with tags; nothing is ever unpickled):

* data: None, bool, int, float, complex, str, bytes, Fraction, Decimal, and lists, tuples, dicts,
  sets and frozensets of data, exactly those types (a subclass is an object, below);
* the learner's objects (instances, classes, functions, iterators, a namedtuple's class) stay in the
  learner's process and cross as handles: `Remote` proxies that forward attributes, calls and
  operators, keeping identity (the same object is the same proxy). A namedtuple instance crosses as
  a local tuple subclass of that name, so `same` compares it as a tuple. Classes cross as local
  classes whose calls build remote instances and whose `isinstance` asks the learner's process; a
  learner's exception class crosses as a local exception class of that name over the nearest
  built-in base, so `pytest.raises(impl.OutOfBlocks)` and `pytest.raises(ValueError)` both work;
* equality of two handles never asks the learner's `__eq__`: the same object, or the same class
  name and the same fields (dataclass fields, slots or instance dict), compared with `same`;
* the grader's own callables and iterators passed in (a factory, a clock, a token stream) cross as
  callbacks the learner's code may call, iterate or measure, and nothing else of them;
* after each call, the state of every list, dict or set argument comes back and is written into
  the grader's object in place, so "leaves its input unchanged" tests still see a mutation;
* the learner's prints come back with each answer and are printed in the grader's process, where
  pytest captures them; CPU time is measured in the learner's process (`remote_cpu`), and a CPU
  budget is enforced there (`budget`).

A learner's process that dies (os._exit, a crash) or runs past a test's timeout is ended; the next
request starts a new one (the module imported afresh), and proxies from the old one say so.
"""

from __future__ import annotations

import base64
import builtins
import dataclasses
import io
import json
import os
import signal
import subprocess
import sys
import threading
import weakref
from decimal import Decimal
from fractions import Fraction
from typing import Any

STATS_ENV = "KATA_BOUNDARY_STATS"  # a file: each client appends its count of calls when it stops
OUTPUT_CAP = 20_000  # characters of the learner's prints kept per answer
REPR_CAP = 2_000

_DATA = (type(None), bool, int, float, str)


_LIVE: weakref.WeakSet = weakref.WeakSet()  # the clients whose learner's process runs now
# set by the pytest plugin: this run's implementations run apart; and this process is a grading
# child of the harness, alone in its process, which may keep itself to one CPU (_share_one_cpu)
MODE = {"apart": False, "one_cpu": False}


def cpu_apart() -> float:
    """CPU seconds used so far by every process this one runs implementations in."""
    return sum(client.remote_cpu() for client in list(_LIVE))


def stop_all() -> None:
    """End every learner's process this one started (the next request starts a fresh one)."""
    for client in list(_LIVE):
        client.stop()


def budget_apart(seconds: float) -> None:
    """A CPU budget (0: none) in every process this one runs implementations in."""
    for client in list(_LIVE):
        client.budget(seconds)


class BoundaryError(Exception):
    """The learner's process could not answer: it could not start, died, or the handle is stale."""


class TooSlow(BaseException):
    """Raised in the learner's process when its CPU budget is spent (see Client.budget)."""


# --- the wire -------------------------------------------------------------------------------


class Wire:
    """One end of the pipe pair: JSON lines out, JSON lines in, and a reentrant request loop (while
    waiting for an answer, a request from the other side is served first)."""

    def __init__(self, rfd: int, wfd: int, serve):
        self.reader = os.fdopen(rfd, "rb", buffering=1 << 16)
        self.wfd = wfd
        self.serve = serve  # message -> reply dict
        self.released: list[int] = []

    def send(self, message: dict) -> None:
        if self.released:
            message["rel"], self.released = self.released, []
        data = (json.dumps(message, separators=(",", ":")) + "\n").encode()
        view = memoryview(data)
        while view:
            view = view[os.write(self.wfd, view):]

    def recv(self) -> dict:
        line = self.reader.readline()
        if not line:
            raise EOFError("the other process closed the pipe")
        return json.loads(line)

    def request(self, message: dict) -> dict:
        self.send(message)
        while True:
            got = self.recv()
            if "q" in got:
                self.send(self.serve(got))
            else:
                return got


def _tag_bytes(b: bytes) -> dict:
    return {"b": base64.b64encode(b).decode()}


class Codec:
    """Values to JSON and back; `other(x)` encodes what is not data (a handle or a callback), and
    `local(v)` decodes a tag that names one."""

    def encode(self, x):
        t = type(x)
        if t in _DATA:
            if t is float and x != x:
                return {"nan": 1}
            return x
        if t is list:
            return {"l": [self.encode(v) for v in x]}
        if t is tuple:
            return {"t": [self.encode(v) for v in x]}
        if t is dict:
            return {"d": [[self.encode(k), self.encode(v)] for k, v in x.items()]}
        if t is set or t is frozenset:
            return {"s" if t is set else "f": [self.encode(v) for v in x]}
        if t is bytes:
            return _tag_bytes(x)
        if t is bytearray:
            return {"ba": base64.b64encode(x).decode()}
        if t is Fraction:
            return {"q": [x.numerator, x.denominator]}
        if t is Decimal:
            return {"D": str(x)}
        if t is complex:
            return {"z": [self.encode(x.real), self.encode(x.imag)]}
        return self.other(x)

    def decode(self, v):
        if type(v) is not dict:
            return v
        (tag, body), = v.items()
        if tag == "l":
            return [self.decode(x) for x in body]
        if tag == "t":
            return tuple(self.decode(x) for x in body)
        if tag == "d":
            return {self.decode(k): self.decode(x) for k, x in body}
        if tag == "s":
            return {self.decode(x) for x in body}
        if tag == "f":
            return frozenset(self.decode(x) for x in body)
        if tag == "b":
            return base64.b64decode(body)
        if tag == "ba":
            return bytearray(base64.b64decode(body))
        if tag == "q":
            return Fraction(*body)
        if tag == "D":
            return Decimal(body)
        if tag == "z":
            return complex(self.decode(body[0]), self.decode(body[1]))
        if tag == "nan":
            return float("nan")
        if tag == "bi":
            return _builtin(body)
        return self.local(tag, body)

    def other(self, x):  # pragma: no cover - each side defines it
        raise TypeError(type(x).__name__)

    def local(self, tag, body):  # pragma: no cover - each side defines it
        raise ValueError(tag)


def _builtin(name: str):
    value = getattr(builtins, name, None)
    if name == "TooSlow":
        return TooSlow
    if not isinstance(value, type):
        raise ValueError(f"not a built-in type: {name!r}")
    return value


def _builtin_name(x) -> str | None:
    name = getattr(x, "__name__", None)
    if isinstance(x, type) and isinstance(name, str) and getattr(builtins, name, None) is x:
        return name
    return None


# --- the learner's side ------------------------------------------------------------------------


class _Callback:
    """In the learner's process: a grader's callable or iterator. Calls, iteration, len and item
    reads go back to the grader; nothing else of it is reachable."""

    __slots__ = ("_server", "_id", "__weakref__")

    def __init__(self, server, cid: int):
        self._server, self._id = server, cid

    def __call__(self, *args, **kwargs):
        return self._server.back("call", self._id, list(args), kwargs)

    def __iter__(self):
        return self._server.back("iter", self._id, [], {})

    def __next__(self):
        return self._server.back("next", self._id, [], {})

    def __len__(self):
        return self._server.back("len", self._id, [], {})

    def __getitem__(self, key):
        return self._server.back("getitem", self._id, [key], {})

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return self._server.back("get", self._id, [name], {})

    def __repr__(self):
        return f"<grader callback {self._id}>"

    def __del__(self):
        try:
            self._server.wire.released.append(-self._id)
        except Exception:  # noqa: BLE001 - at interpreter exit
            pass


_OPS: dict[str, Any] = {
    "len": len, "bool": bool, "hash": hash, "iter": iter, "next": next,
    "getitem": lambda o, k: o[k], "setitem": lambda o, k, v: o.__setitem__(k, v),
    "delitem": lambda o, k: o.__delitem__(k), "contains": lambda o, k: k in o,
    "lt": lambda a, b: a < b, "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b,
    "enter": lambda o: o.__enter__(), "exit": lambda o, *a: o.__exit__(*a),
}


class Server(Codec):
    """The learner's process: the module, a table of handles, and the answers."""

    def __init__(self, rfd: int, wfd: int):
        self.wire = Wire(rfd, wfd, self.serve)
        self.objects: dict[int, object] = {}
        self.ids: dict[int, int] = {}  # id(object) -> handle
        self.next_id = 1

    # handles
    def handle(self, x) -> int:
        h = self.ids.get(id(x))
        if h is None:
            h, self.next_id = self.next_id, self.next_id + 1
            self.objects[h], self.ids[id(x)] = x, h
        return h

    def other(self, x):
        if type(x) is _Callback and x._server is self:
            return {"cb": x._id}
        name = _builtin_name(x)
        if name is not None:
            return {"bi": name}
        if isinstance(x, tuple) and hasattr(type(x), "_fields"):  # a namedtuple: a tuple of that name
            fields = [f if isinstance(f, str) else str(f) for f in type(x)._fields]
            return {"nt": [type(x).__name__, fields, [self.encode(v) for v in tuple.__iter__(x)]]}
        info: dict = {"h": self.handle(x), "n": type(x).__name__}
        if not isinstance(x, type) and type(x).__module__ not in ("builtins", "__main__"):
            info["c"] = self.encode(type(x))  # its class, so that type(proxy) is impl.ThatClass
        if isinstance(x, type):
            info["n"] = x.__name__
            info["k"] = "class"
            if isinstance(x, type) and issubclass(x, BaseException):
                info["k"] = "exc"
                info["bases"] = [self.encode(b) for b in x.__bases__]
        elif callable(x):
            info["k"] = "fn"
        else:
            params = getattr(type(x), "__dataclass_params__", None)
            if params is not None and getattr(params, "frozen", False) and dataclasses.is_dataclass(x):
                # a frozen dataclass's fields, sent with it: reading them costs no round trip
                info["f"] = [[f.name, self.encode(getattr(x, f.name))] for f in dataclasses.fields(x)]
        return {"o": info}

    def local(self, tag, body):
        if tag == "h":
            if body not in self.objects:
                raise BoundaryError(f"no object {body} in the learner's process")
            return self.objects[body]
        if tag == "cb":
            return _Callback(self, body)
        raise ValueError(f"unknown tag {tag!r}")

    # requests from the grader
    def serve(self, message: dict) -> dict:
        for h in message.get("rel", ()):
            x = self.objects.pop(h, None)
            if x is not None:
                self.ids.pop(id(x), None)
        out, err = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = captured = io.StringIO()
        args: list = []
        kwargs: dict = {}
        try:
            op = message["q"]
            args = [self.decode(a) for a in message.get("a", ())]
            kwargs = {k: self.decode(v) for k, v in message.get("k", {}).items()}
            reply = {"r": self.encode(self.run(op, args, kwargs))}
        except BaseException as exc:  # noqa: BLE001 - SystemExit and all: the learner's code raised it
            reply = {"e": self.error(exc)}
        finally:
            sys.stdout, sys.stderr = out, err
        if "m" in message or "mk" in message:  # the state of mutable arguments, after the call
            reply["m"] = {str(i): self.safe_encode(args[i]) for i in message.get("m", ()) if i < len(args)}
            reply["mk"] = {k: self.safe_encode(kwargs[k]) for k in message.get("mk", ()) if k in kwargs}
        text = captured.getvalue()
        if text:
            reply["o"] = text[:OUTPUT_CAP]
        return reply

    def safe_encode(self, x):
        try:
            return self.encode(x)
        except Exception:  # noqa: BLE001
            return None

    def run(self, op: str, args: list, kwargs: dict):
        if op == "call":
            fn, *rest = args
            return fn(*rest, **kwargs)
        if op == "get":
            return getattr(args[0], args[1])
        if op == "set":
            setattr(args[0], args[1], args[2])
            return None
        if op == "del":
            delattr(args[0], args[1])
            return None
        if op == "repr":
            return repr(args[0])[:REPR_CAP]
        if op == "str":
            return str(args[0])[:REPR_CAP]
        if op == "desc":
            return describe(args[0])
        if op == "isinst":
            return isinstance(args[0], args[1])
        if op == "issub":
            return isinstance(args[0], type) and issubclass(args[0], args[1])
        if op == "cpu":
            return _cpu()
        if op == "budget":
            _budget(args[0])
            return None
        if op == "dir":
            return sorted(n for n in dir(args[0]) if isinstance(n, str))
        fn = _OPS.get(op)
        if fn is None:
            raise ValueError(f"unknown request {op!r}")
        return fn(*args)

    def error(self, exc: BaseException) -> dict:
        t = type(exc)
        try:
            args = [self.encode(a) for a in exc.args]
        except Exception:  # noqa: BLE001 - an argument that cannot cross: its text does
            args = [repr(a)[:REPR_CAP] for a in exc.args]
        try:
            text = str(exc)[:REPR_CAP]
        except Exception:  # noqa: BLE001
            text = t.__name__
        cls = {"bi": "TooSlow"} if t is TooSlow else self.encode(t)
        return {"t": cls, "a": args, "s": text}

    # requests to the grader (a callback called by the learner's code)
    def back(self, op: str, cid: int, args: list, kwargs: dict):
        reply = self.wire.request({"q": op, "cb": cid, "a": [self.encode(a) for a in args],
                                   "k": {k: self.encode(v) for k, v in kwargs.items()}})
        if "e" in reply:
            raise _exception(self, reply["e"])
        return self.decode(reply["r"])


def describe(x):
    """[class name, [[field, value], ...], kind] of one of the learner's objects (kind: "dataclass",
    "enum", "exception" or "object"), or None where it has no fields to read."""
    import enum

    cls = type(x)
    if isinstance(x, enum.Enum):
        return [cls.__name__, [["name", x.name], ["value", x.value]], "enum"]
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return [cls.__name__, [[f.name, getattr(x, f.name)] for f in dataclasses.fields(x)], "dataclass"]
    if isinstance(x, BaseException):
        return [cls.__name__, [["args", tuple(x.args)]], "exception"]
    if hasattr(x, "__dict__") and not isinstance(x, type) and not callable(x):
        return [cls.__name__, [[k, v] for k, v in sorted(vars(x).items()) if isinstance(k, str)], "object"]
    if getattr(cls, "__slots__", None) is not None:
        names = [cls.__slots__] if isinstance(cls.__slots__, str) else list(cls.__slots__)
        return [cls.__name__, [[n, getattr(x, n)] for n in names if hasattr(x, n)], "object"]
    return None


def _cpu() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _budget(seconds) -> None:
    if not seconds:
        signal.setitimer(signal.ITIMER_PROF, 0)
        return

    def on_prof(signum, frame):
        raise TooSlow()

    signal.signal(signal.SIGPROF, on_prof)
    signal.setitimer(signal.ITIMER_PROF, float(seconds))


class LearnerExit(Exception):
    """The learner's code raised SystemExit, KeyboardInterrupt or GeneratorExit: in the grader's
    process that is only the test's failure, never the end of the run."""


def _exception(codec: Codec, e: dict) -> BaseException:
    cls = codec.decode(e["t"])
    if isinstance(cls, type) and issubclass(cls, BaseException) and not issubclass(cls, (Exception, TooSlow)):
        return LearnerExit(f"the code raised {cls.__name__}: {e['s']}"[:REPR_CAP])
    if not (isinstance(cls, type) and issubclass(cls, BaseException)):
        cls = RuntimeError
    try:
        args = [codec.decode(a) for a in e["a"]]
    except Exception:  # noqa: BLE001
        args = [e["s"]]
    try:
        exc = cls(*args)
    except Exception:  # noqa: BLE001 - a constructor with other arguments: the message crosses
        exc = cls.__new__(cls)
        exc.args = (e["s"],)
    if getattr(cls, "_remote_text", False):
        exc._text = e["s"]
    return exc


def serve_module(rfd: int, wfd: int, path: str, name: str) -> None:
    """The learner's process: import `path` as `name`, say ready (or why not), then answer."""
    import importlib.util

    try:  # end with the grader (the sandbox's --die-with-parent does so too, where there is one)
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        pass
    server = Server(rfd, wfd)
    out, err = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = captured = io.StringIO()
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"{os.path.basename(path)}: not an importable Python file")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    except BaseException as exc:  # noqa: BLE001 - SystemExit included: report it, never exit
        sys.stdout, sys.stderr = out, err
        where, said = "", str(exc)
        if isinstance(exc, SyntaxError) and exc.lineno:
            where, said = f" at line {exc.lineno}", exc.msg or said
        server.wire.send({"load": f"importing {os.path.basename(path)} raised {type(exc).__name__}{where}: {said}"})
        return
    sys.stdout, sys.stderr = out, err
    server.wire.send({"ready": server.handle(module), "o": captured.getvalue()[:OUTPUT_CAP]})
    while True:
        try:
            message = server.wire.recv()
        except EOFError:
            return
        try:
            reply = server.serve(message)
        except TooSlow:  # the budget ran out just after the learner's code returned
            reply = {"e": {"t": {"bi": "TooSlow"}, "a": [], "s": "TooSlow"}}
        server.wire.send(reply)


# --- the grader's side -------------------------------------------------------------------------


_NAMES = ("__name__", "__qualname__", "__doc__", "__module__")  # the dunders a proxy forwards


class Remote:
    """In the grader's process: one of the learner's objects, by handle."""

    __slots__ = ("_c", "_h", "_gen", "_n", "_f", "__weakref__")

    def __init__(self, client, h: int, gen: int, name: str, fields: dict | None = None):
        object.__setattr__(self, "_c", client)
        object.__setattr__(self, "_h", h)
        object.__setattr__(self, "_gen", gen)
        object.__setattr__(self, "_n", name)
        object.__setattr__(self, "_f", fields)  # a frozen dataclass's fields, as sent with it

    def _op(self, op, *args, **kwargs):
        if op == "desc" and self._f is not None:
            return [self._n, [[k, v] for k, v in self._f.items()], "dataclass"]
        return self._c.op(op, self, *args, **kwargs)

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__") and name not in _NAMES:
            raise AttributeError(name)
        fields = self._f
        if fields is not None and name in fields:
            return fields[name]
        return self._op("get", name)

    def __setattr__(self, name, value):
        self._op("set", name, value)

    def __delattr__(self, name):
        self._op("del", name)

    def __call__(self, *args, **kwargs):
        return self._c.call(self, args, kwargs)

    def __repr__(self):
        try:
            return self._op("repr")
        except BaseException:  # noqa: BLE001 - a message must not fail for want of a repr
            return f"<{self._n} object>"

    def __str__(self):
        return self._op("str")

    def __len__(self):
        return self._op("len")

    def __bool__(self):
        return self._op("bool")

    def __hash__(self):
        return self._op("hash")

    def __iter__(self):
        return self._op("iter")

    def __next__(self):
        return self._op("next")

    def __getitem__(self, key):
        return self._op("getitem", key)

    def __setitem__(self, key, value):
        self._op("setitem", key, value)

    def __delitem__(self, key):
        self._op("delitem", key)

    def __contains__(self, key):
        return self._op("contains", key)

    def __lt__(self, other):
        return self._op("lt", other)

    def __le__(self, other):
        return self._op("le", other)

    def __gt__(self, other):
        return self._op("gt", other)

    def __ge__(self, other):
        return self._op("ge", other)

    def __enter__(self):
        return self._op("enter")

    def __exit__(self, *exc):
        return self._op("exit", *(None,) * 3)

    def __dir__(self):
        return self._op("dir")

    def __eq__(self, other):
        """The same object, or the same class name and the same fields (never the learner's __eq__)."""
        if not isinstance(other, Remote):
            return NotImplemented
        if other._c is self._c and other._h == self._h and other._gen == self._gen:
            return True
        from kata.strict import same

        mine, theirs = self._op("desc"), other._op("desc")
        if mine is None or theirs is None:
            return False
        return mine[0] == theirs[0] and mine[2] == theirs[2] and \
            same([tuple(f) for f in mine[1]], [tuple(f) for f in theirs[1]])

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __del__(self):
        try:
            if self._gen == self._c.gen:
                self._c.wire.released.append(self._h)
        except Exception:  # noqa: BLE001 - at interpreter exit, or the process is gone
            pass


class _RemoteType(type):
    """The metaclass of a learner's class in the grader's process: calling builds a remote
    instance, attributes are read remotely, isinstance asks the learner's process."""

    def __call__(cls, *args, **kwargs):
        return cls._rc.call(cls, args, kwargs)

    def __getattr__(cls, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return cls._rc.op("get", cls, name)

    def __instancecheck__(cls, obj):
        if isinstance(obj, Remote):
            return obj._c is cls._rc and cls._rc.op("isinst", obj, cls)
        return False

    def __subclasscheck__(cls, sub):
        if isinstance(sub, _RemoteType):
            return sub._rc is cls._rc and cls._rc.op("issub", sub, cls)
        return False

    def __repr__(cls):
        return f"<class {cls.__name__!r}>"


class _RemoteException(Exception):
    """The base of a learner's exception class's stand-in: its message is the learner's str()."""

    _remote_text = True
    _text: str | None = None

    def __str__(self):
        return self._text if self._text is not None else super().__str__()


_STALE = ("an object of an earlier run of the implementation's process (it was restarted after an "
          "earlier test failed it)")


class Client(Codec):
    """The grader's end: starts the learner's process, and re-starts it after it dies."""

    def __init__(self, path: str, name: str, sandbox: list[str] | None = None):
        self.path, self.name, self.sandbox = path, name, sandbox
        self.gen = 0
        self.proc: subprocess.Popen | None = None
        self.wire: Wire | None = None
        self.module_h: int | None = None
        self.module_proxy: Remote | None = None
        self.load_error: str | None = None
        self.callbacks: dict[int, Any] = {}
        self.next_cb = 1
        self.proxies: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        self.classes: dict[tuple[int, int], type] = {}
        self.calls = 0
        self.restarts = 0
        self.lock = threading.RLock()
        self.cpu_before = 0.0  # CPU time of processes that ended

    # the process
    def start(self) -> None:
        _share_one_cpu()
        self.gen += 1
        down_r, down_w = os.pipe()  # grader -> learner
        up_r, up_w = os.pipe()  # learner -> grader
        # -s -P: no user site, not the server's own folder on sys.path; not -I, whose -E would
        # drop PYTHONHASHSEED: string hashes (a set's order) must be the same every run
        cmd = [sys.executable, "-s", "-P", os.path.abspath(__file__), str(down_r), str(up_w), self.path, self.name]
        if self.sandbox is not None:
            cmd = self.sandbox + cmd
        env = {k: v for k, v in os.environ.items() if not k.startswith(("KATA_", "PYTEST_", "PYTHON"))}
        env.update(PYTHONHASHSEED="0", PYTHONDONTWRITEBYTECODE="1")  # the same order every run; no .pyc
        try:
            self.proc = subprocess.Popen(cmd, pass_fds=(down_r, up_w), stdin=subprocess.DEVNULL,
                                         env=env, start_new_session=True)
        except OSError:
            for fd in (down_r, down_w, up_r, up_w):
                os.close(fd)
            raise
        os.close(down_r)
        os.close(up_w)
        self.wire = Wire(up_r, down_w, self.serve_callback)
        try:
            first = self.wire.recv()
        except (EOFError, ValueError):
            self.stop()
            raise BoundaryError("the implementation's process ended before it imported the module") from None
        if "load" in first:
            self.load_error = first["load"]
            self.stop()
            raise BoundaryError(first["load"])
        self.module_h = first["ready"]
        _LIVE.add(self)
        if first.get("o"):
            sys.stdout.write(first["o"])

    def stop(self) -> None:
        _LIVE.discard(self)
        stats = os.environ.get(STATS_ENV)
        if stats and self.calls:  # for benchmarks/boundary_calls.py: this client's calls so far
            with open(stats, "a", encoding="utf-8") as f:
                f.write(json.dumps({"client": id(self), "path": self.path, "calls": self.calls,
                                    "restarts": self.restarts}) + "\n")
        proc, self.proc = self.proc, None
        if self.wire is not None:
            try:
                os.close(self.wire.wfd)
            except OSError:
                pass
            self.wire.reader.close()
            self.wire = None
        if proc is not None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass
            proc.wait()

    def alive(self) -> bool:
        return self.proc is not None and self.wire is not None

    def module(self) -> Remote:
        if not self.alive():
            if self.load_error is not None:
                raise BoundaryError(self.load_error)
            if self.gen:
                self.restarts += 1
            self.start()
        assert self.module_h is not None
        if self.module_proxy is None or self.module_proxy._gen != self.gen:
            self.module_proxy = self.proxy(self.module_h, "module")  # held: the module is never released
        return self.module_proxy

    # the codec
    def proxy(self, h: int, name: str, cls: type = None, fields: dict | None = None) -> Remote:  # type: ignore[assignment]
        key = (self.gen, h)
        found = self.proxies.get(key)
        if found is None:
            if self.wire is not None and h in self.wire.released:  # dropped, then sent again: keep it
                self.wire.released.remove(h)
            found = Remote.__new__(cls or Remote)
            Remote.__init__(found, self, h, self.gen, name, fields)
            self.proxies[key] = found
        return found

    def other(self, x):
        if isinstance(x, Remote):
            if x._c is not self or x._gen != self.gen:
                raise BoundaryError(_STALE)
            return {"h": x._h}
        if isinstance(x, type) and x.__dict__.get("_remote_of") is self:
            if x.__dict__["_rgen"] != self.gen:
                raise BoundaryError(_STALE)
            return {"h": x.__dict__["_rh"]}
        name = _builtin_name(x)
        if name is not None:
            return {"bi": name}
        if isinstance(x, tuple) and type(x) in _NAMEDTUPLES.values():  # one of the learner's, come back
            return {"t": [self.encode(v) for v in x]}
        if callable(x) or hasattr(x, "__next__") or hasattr(x, "__iter__") or hasattr(x, "__getitem__"):
            cid, self.next_cb = self.next_cb, self.next_cb + 1
            self.callbacks[cid] = x
            return {"cb": cid}
        raise TypeError(f"a {type(x).__name__} cannot be passed to the implementation across the "
                        "process boundary (only data, its own objects and callables)")

    def local(self, tag, body):
        if tag == "o":
            kind = body.get("k")
            if kind in ("class", "exc"):
                return self.remote_class(body)
            cls = self.decode(body["c"]) if "c" in body else Remote
            fields = {name: self.decode(v) for name, v in body["f"]} if "f" in body else None
            return self.proxy(body["h"], body["n"], cls if isinstance(cls, _RemoteType) else Remote, fields)
        if tag == "nt":
            name, fields, values = body
            return _namedtuple(name, tuple(fields))(*(self.decode(v) for v in values))
        if tag == "cb":
            return self.callbacks[body]
        raise ValueError(f"unknown tag {tag!r}")

    def remote_class(self, info: dict) -> type:
        key = (self.gen, info["h"])
        cls = self.classes.get(key)
        if cls is not None:
            return cls
        ns = {"_rc": self, "_rh": info["h"], "_rgen": self.gen, "_remote_of": self, "__module__": self.name}
        if info["k"] == "exc":
            bases = tuple(b for b in (self.decode(b) for b in info.get("bases", ()))
                          if isinstance(b, type) and issubclass(b, Exception)) or (Exception,)
            if not any(issubclass(b, _RemoteException) for b in bases):
                bases = (_RemoteException, *[b for b in bases if b is not Exception])
            cls = type(info["n"], bases, ns)
        else:
            cls = _RemoteType(info["n"], (Remote,), {**ns, "__slots__": ()})
        self.classes[key] = cls
        return cls

    # requests
    def request(self, message: dict):
        with self.lock:  # one request at a time on the pipe: a grader's threads take turns
            return self._request(message)

    def _request(self, message: dict):
        if not self.alive():
            self.module()
        assert self.wire is not None
        self.calls += 1
        try:
            reply = self.wire.request(message)
        except BaseException as exc:  # noqa: BLE001 - died, or a timeout interrupted the wait
            if not isinstance(exc, (EOFError, ValueError, OSError)):
                self.stop()  # interrupted (a test's time limit): its state is unknown, so it goes
                raise
            try:
                code = self.proc.wait(timeout=2) if self.proc is not None else None
            except subprocess.TimeoutExpired:
                code = None
            self.stop()
            raise BoundaryError(f"the implementation's process ended (exit code {code}) during the call") from None
        if reply.get("o"):
            sys.stdout.write(reply["o"])
        return reply

    def finish(self, reply: dict, message: dict, args, kwargs):
        for i, state in reply.get("m", {}).items():
            _write_back(args[int(i)], self.decode(state))
        for k, state in reply.get("mk", {}).items():
            _write_back(kwargs[k], self.decode(state))
        if "e" in reply:
            raise _exception(self, reply["e"])
        return self.decode(reply["r"])

    def op(self, op: str, *args):
        message = {"q": op, "a": [self.encode(a) for a in args]}
        return self.finish(self.request(message), message, args, {})

    def call(self, fn, args: tuple, kwargs: dict):
        args = (fn, *args)
        message: dict = {"q": "call", "a": [self.encode(a) for a in args],
                         "k": {k: self.encode(v) for k, v in kwargs.items()}}
        mutable = [i for i, a in enumerate(args) if type(a) in _MUTABLE]
        if mutable:
            message["m"] = mutable
        mk = [k for k, v in kwargs.items() if type(v) in _MUTABLE]
        if mk:
            message["mk"] = mk
        return self.finish(self.request(message), message, args, kwargs)

    def serve_callback(self, message: dict) -> dict:
        """A request from the learner's process: call, iterate or measure one of our callbacks."""
        try:
            target = self.callbacks[message["cb"]]
            args = [self.decode(a) for a in message.get("a", ())]
            kwargs = {k: self.decode(v) for k, v in message.get("k", {}).items()}
            op = message["q"]
            if op == "call":
                value = target(*args, **kwargs)
            elif op == "iter":
                value = iter(target)
            elif op == "next":
                value = next(target)
            elif op == "len":
                value = len(target)
            elif op == "getitem":
                value = target[args[0]]
            elif op == "get" and isinstance(args[0], str) and not args[0].startswith("_"):
                value = getattr(target, args[0])
            else:
                raise ValueError(f"unknown request {op!r}")
            return {"r": self.encode(value)}
        except Exception as exc:  # noqa: BLE001 - the grader's callback raised: the learner's code sees it
            name = _builtin_name(type(exc)) or "RuntimeError"
            return {"e": {"t": {"bi": name}, "a": [str(exc)], "s": str(exc)}}

    def remote_cpu(self) -> float:
        """CPU seconds the learner's process has used (the live one)."""
        if not self.alive():
            return self.cpu_before
        return float(self.op("cpu"))

    def budget(self, seconds: float) -> None:
        """Raise TooSlow inside the learner's code once it has used `seconds` more CPU (0: off)."""
        if self.alive():
            self.op("budget", seconds)


_MUTABLE = (list, dict, set, bytearray)


def _share_one_cpu() -> None:
    """Keep this process, and the learner's processes it starts (they inherit it), on the CPU it
    runs on now. The two take turns, never run at once; on one CPU a round trip is a switch of
    processes, on two it is a wake-up of the other CPU, 3 to 4 times slower in a virtual machine.
    The CPU is the one the scheduler chose for this process, so two gradings side by side are
    on two CPUs, as before."""
    if _PINNED or not MODE["one_cpu"]:
        return
    _PINNED.append(True)
    try:
        allowed = os.sched_getaffinity(0)
        with open("/proc/self/stat", encoding="ascii") as f:
            cpu = int(f.read().rsplit(")", 1)[1].split()[36])  # field 39, "processor"
        if len(allowed) > 1 and cpu in allowed:
            os.sched_setaffinity(0, {cpu})
    except (OSError, AttributeError, ValueError, IndexError):  # not Linux, or no /proc: as it was
        pass


_PINNED: list[bool] = []


def _write_back(target, state) -> None:
    if type(target) is bytearray and type(state) is bytearray:
        target[:] = state
    elif type(target) is list and type(state) is list:
        target[:] = state
    elif type(target) is dict and type(state) is dict:
        target.clear()
        target.update(state)
    elif type(target) is set and type(state) is set:
        target.clear()
        target.update(state)


_NAMEDTUPLES: dict[tuple[str, tuple], type] = {}


def _namedtuple(name: str, fields: tuple) -> type:
    from collections import namedtuple

    key = (name, fields)
    if key not in _NAMEDTUPLES:
        try:
            _NAMEDTUPLES[key] = namedtuple(name, fields)  # type: ignore[misc]
        except ValueError:
            _NAMEDTUPLES[key] = namedtuple(name, [f"_{i}" for i in range(len(fields))], rename=True)  # type: ignore[misc]
    return _NAMEDTUPLES[key]


class RemoteModule:
    """`impl` across the boundary: attribute reads go to the learner's module in its process."""

    def __init__(self, client: Client):
        object.__setattr__(self, "_client", client)

    @staticmethod
    def _client_of(module: RemoteModule) -> Client:
        return object.__getattribute__(module, "_client")

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__") and name not in ("__name__", "__file__", "__doc__"):
            raise AttributeError(name)
        client = object.__getattribute__(self, "_client")
        return client.op("get", client.module(), name)

    def __setattr__(self, name, value):
        client = object.__getattribute__(self, "_client")
        client.op("set", client.module(), name, value)

    def __repr__(self):
        return f"<module {object.__getattribute__(self, '_client').name!r} in its own process>"


if __name__ == "__main__":
    serve_module(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4])
