"""Commands that run another command: the floor judges what finally runs.

`sudo -u root nice -n 5 timeout 10 busybox rm -rf /` runs `rm -rf /`; `env -S 'rm -rf /'`
and `su -c 'rm -rf /'` run a command written as one word; `xargs rm` gets its arguments
from its input. `unwrap` walks the words once, left to right (linear), skipping each
wrapper's options (and the values of those that take one) and its own positional words
(timeout's duration, chroot's folder), and says where the real command starts.

A wrapper or option missing from this table is not a way round the floor: `dangerous.py`
also looks for a destructive program anywhere in a command's words (`_buried_reason`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Wrapper:
    takes_value: frozenset[str] = frozenset()  # options whose value is the next word
    positionals: int = 0  # its own words before the command (timeout's duration)
    script_options: frozenset[str] = frozenset()  # options whose value is a shell command
    from_input: bool = False  # the command gets arguments from input (xargs)
    runs_rest_as_script: bool = False  # the rest is joined and run by a shell (watch)


def _w(
    takes_value: str = "",
    positionals: int = 0,
    scripts: str = "",
    *,
    from_input: bool = False,
    joins: bool = False,
) -> Wrapper:
    return Wrapper(
        frozenset(takes_value.split()),
        positionals,
        frozenset(scripts.split()),
        from_input,
        joins,
    )


WRAPPERS: dict[str, Wrapper] = {
    "sudo": _w(
        "-u -g -C -D -h -p -r -t -U -T -R --user --group --chdir --prompt --role --type "
        "--other-user --command-timeout --close-from --host --chroot"
    ),
    "doas": _w("-u -C"),
    "env": _w("-u --unset -C --chdir -S --split-string", scripts="-S --split-string"),
    "command": _w(),
    "builtin": _w(),
    "exec": _w("-a"),
    "nohup": _w(),
    "time": _w("-f --format -o --output"),
    "nice": _w("-n --adjustment"),
    "ionice": _w("-c -n --class --classdata"),
    "timeout": _w("-s --signal -k --kill-after", 1),
    "stdbuf": _w("-i -o -e --input --output --error"),
    "setsid": _w(),
    "chrt": _w("-T -P -D --sched-runtime --sched-period --sched-deadline", 1),
    "taskset": _w("", 1),
    "unshare": _w("-S -G -R -w --setuid --setgid --root --wd --map-user --map-group"),
    "flock": _w("-w --timeout -E --conflict-exit-code", 1, "-c --command"),
    "chroot": _w("--userspec --groups", 1),
    "strace": _w("-o -e -p -s -P -u -a -b -E -I -O -S -X"),
    "ltrace": _w("-o -e -p -s -u -a -n -A -D -F -l -L"),
    "xargs": _w(
        "-I -n -P -L -l -d -a -E -e -s --max-args --max-procs --max-lines --delimiter "
        "--arg-file --eof --max-chars --replace --process-slot-var",
        from_input=True,
    ),
    "busybox": _w(),  # multi-call binaries: the next word is the program
    "toybox": _w(),
    "watch": _w("-n --interval -d --differences", joins=True),
    "su": _w("-g -G -s --group --supp-group --shell", scripts="-c --command"),
    "runuser": _w("-u -g -G -s --user --group --supp-group --shell", scripts="-c --command"),
    "script": _w("-E -I -O -T -B --echo --log-in --log-out --log-timing", scripts="-c --command"),
    "gosu": _w("", 1),
    "su-exec": _w("", 1),
    "setpriv": _w("--reuid --regid --groups --inh-caps --bounding-set --securebits"),
    "faketime": _w("", 1),
    "fakeroot": _w("-l -s -i --lib --faked"),
    "eatmydata": _w(),
    "unbuffer": _w(),
    "catchsegv": _w(),
    "proxychains": _w("-f"),
    "torsocks": _w(),
    "systemd-run": _w("-p -u -E --property --unit --setenv --uid --gid --working-directory"),
}


@dataclass(frozen=True)
class Unwrapped:
    start: int  # where the real command starts in the words (len(words): none)
    from_input: bool  # xargs feeds it arguments read from input
    scripts: tuple[str, ...] = field(default=())  # commands given as one word (env -S, su -c)


def unwrap(words: Sequence[str], is_literal: Callable[[int], bool] | None = None) -> Unwrapped:
    """Where the command that really runs starts in `words`, past wrappers, their options
    and `VAR=value` prefixes. `is_literal(i)`: only a literal word names a wrapper."""
    index, from_input = 0, False
    scripts: list[str] = []
    while index < len(words):
        literal = is_literal is None or is_literal(index)
        word = words[index]
        if literal and "=" in word and not word.startswith("=") and not word.startswith("-"):
            index += 1  # VAR=value
            continue
        wrapper = WRAPPERS.get(word.rsplit("/", 1)[-1]) if literal else None
        if wrapper is None:
            break
        index = _past_options(words, index + 1, wrapper, scripts)
        from_input = from_input or wrapper.from_input
        if wrapper.runs_rest_as_script:
            scripts.append(" ".join(words[index:]))
            return Unwrapped(len(words), from_input, tuple(scripts))
    return Unwrapped(index, from_input, tuple(scripts))


def _past_options(words: Sequence[str], index: int, wrapper: Wrapper, scripts: list[str]) -> int:
    positionals = wrapper.positionals
    while index < len(words):
        word = words[index]
        if word == "--":
            return index + 1
        if word.startswith("-") and len(word) > 1:
            name, has_equals, attached = word.partition("=")
            takes = name in wrapper.takes_value or name in wrapper.script_options
            value = attached if has_equals else None
            if value is None and takes and index + 1 < len(words):
                value = words[index + 1]
                index += 1
            if value is not None and name in wrapper.script_options:
                scripts.append(value)
            index += 1
            continue
        if positionals:
            positionals -= 1
            index += 1
            continue
        return index
    return index
