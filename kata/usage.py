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
