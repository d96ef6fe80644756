"""Engine arguments read the way vLLM and SGLang read them (Python argparse, with vLLM's spelling leniency).

- `--flag value` and `--flag=value`;
- dashes and underscores alike in long flags (`--served_model_name` is `--served-model-name`: vLLM's
  FlexibleArgumentParser rewrites underscores, and both engines accept either spelling of many flags);
- unambiguous prefixes of a long flag (argparse's `allow_abbrev`: `--served-model` is `--served-model-name`);
- a repeated flag keeps its last value (argparse's `store`), so a flag PodStart reads may appear once only.

A flag PodStart owns (the model, where it is served, the API key) is refused whatever its spelling.
"""

from __future__ import annotations

from dataclasses import dataclass

# Flags PodStart sets itself from the endpoint's model, Service and API key: a user value would fight them.
OWNED = ("--model", "--model-path", "--host", "--port", "--served-model-name", "--download-dir", "--api-key",
         "--uds", "--root-path")


@dataclass(frozen=True)
class Arg:
    index: int
    flag: str  # canonical: `--words-with-dashes` for long flags, as given for short ones (`-tp`)
    value: str | None  # `--x=v` or `--x v` (None: a switch, or the next element is another flag)
    spelled: str  # as the user wrote the flag


def canonical(flag: str) -> str:
    """`--Served_Model_Name` stays case-sensitive (argparse is) but `_` becomes `-` in long flags."""
    return "--" + flag[2:].replace("_", "-") if flag.startswith("--") else flag


def parse(args: list[str]) -> list[Arg]:
    """Every flag in `args` with its value, in order; positional elements are values of the flag before them."""
    out: list[Arg] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a.startswith("-") and len(a) > 1 and not _number(a):
            name, eq, val = a.partition("=")
            value: str | None = val if eq else None
            if not eq and i + 1 < len(args) and (not args[i + 1].startswith("-") or _number(args[i + 1])):
                value = args[i + 1]
                out.append(Arg(i, canonical(name), value, name))
                i += 2
                continue
            out.append(Arg(i, canonical(name), value, name))
        i += 1
    return out


def _number(s: str) -> bool:
    try:
        float(s)
        return True
    except ValueError:
        return False


def owned_flag(flag: str, owned: tuple[str, ...] = OWNED) -> str | None:
    """The owned flag `flag` means (itself, or as an abbreviation argparse would expand), or None."""
    if flag in owned:
        return flag
    if flag.startswith("--") and len(flag) > 3:
        hits = [o for o in owned if o.startswith(flag)]
        if hits:
            return hits[0]
    return None


def refusals(args: list[str], read_once: tuple[tuple[str, ...], ...] = ()) -> list[tuple[int, str]]:
    """(index, why) for each argument PodStart refuses: an owned flag in any spelling, and a flag PodStart reads
    given more than once, in any of its aliases (`read_once`: groups of aliases, e.g. `--tp` and `--tp-size`)."""
    out: list[tuple[int, str]] = []
    group_of = {canonical(n): g for g, names in enumerate(read_once) for n in names}
    seen: dict[int, Arg] = {}
    for a in parse(args):
        owned = owned_flag(a.flag)
        if owned is not None:
            how = "" if a.spelled == owned else f" ({a.spelled} means {owned})"
            out.append((a.index, f"{owned} is set by PodStart from the endpoint's model, Service and API key{how}"))
            continue
        g = group_of.get(a.flag)
        if g is not None:
            if g in seen:
                out.append((a.index, f"{a.spelled} repeats engine_args[{seen[g].index}] ({seen[g].spelled}): "
                                     f"give it once"))
            seen.setdefault(g, a)
    return out


def value_of(args: list[str], names: tuple[str, ...]) -> tuple[str | None, int | None, str | None]:
    """(value, index, spelled) of the flag among `names` (canonical spellings), or (None, None, None)."""
    wanted = {canonical(n) for n in names}
    for a in parse(args):
        if a.flag in wanted:
            return a.value, a.index, a.spelled
    return None, None, None
