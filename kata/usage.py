"""Usage lines the way Python tools write them: `kata init DIRECTORY`, `kata check [SLUG]`.

Typer marks a required argument with braces (`{directory}`) and keeps the parameter's lower-case
name; a learner reads braces as a literal or a set, and `-h` of pip, pytest or git says DIRECTORY.
Every kata command is a KataCommand (through KataTyper.command), whose usage line and Arguments
section name each argument in capitals: in the usage line a required one bare and an optional one
in brackets, with `...` after one that takes several values.
"""

from __future__ import annotations

import typer
import typer.core


def argument_usage(name: str, required: bool, nargs: int) -> str:
    """One argument as the usage line shows it.

    Example: argument_usage("input_dir", True, 1) -> "INPUT_DIR"; ("session", False, 1) -> "[SESSION]"
    """
    shown = name.upper()
    if nargs != 1:
        shown += "..."
    return shown if required else f"[{shown}]"


class KataCommand(typer.core.TyperCommand):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:  # the help's Arguments section names them as the usage line does
            if isinstance(param, typer.core.TyperArgument) and not param.metavar and param.name:
                param.metavar = param.name.upper()

    def collect_usage_pieces(self, ctx) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if isinstance(param, typer.core.TyperArgument):
                name = param.metavar or param.name or "arg"
                pieces.append(argument_usage(name, param.required, param.nargs))
            else:
                pieces.extend(param.get_usage_pieces(ctx))
        return pieces


class KataTyper(typer.Typer):
    """A Typer whose commands are KataCommands unless a command names its own class."""

    def command(self, *args, cls=None, **kwargs):  # type: ignore[override]
        return super().command(*args, cls=cls or KataCommand, **kwargs)


def error_words(message: str, possibilities=()) -> str:
    """Click's words for a usage error as kata says its own errors: lower case first (a name in
    capitals such as SLUG stays), no full stop at the end, and Click's close matches
    (`possibilities`) as "Did you mean ...?", as kata suggests a mistyped kata.

    Example: error_words("Missing argument 'N'.") -> "missing argument 'N'";
             error_words("No such option: --jsn", ["--json"]) -> "no such option: --jsn. Did you mean --json?"
    """
    message = " ".join(message.split())  # one line
    if possibilities:
        names = sorted(possibilities)
        either = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
        message = f"{message.rstrip('.')}. Did you mean {either}?"
    if message[:1].isupper() and message[1:2].islower():
        message = message[0].lower() + message[1:]
    return message.removesuffix(".")
