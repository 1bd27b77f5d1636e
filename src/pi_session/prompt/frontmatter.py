"""Markdown frontmatter read as pi 1.6 reads it: the ``---`` block, parsed as YAML 1.2.

Skills (:mod:`pi_session.prompt.skills`) take their name and description
from it. pi parses the block with the JavaScript ``yaml`` package; PyYAML's
safe loader is narrowed here to the same YAML 1.2 core-schema reading
(:func:`parse_frontmatter`). PyYAML is imported only when a file has a
frontmatter block.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from ..errors import PiSessionError
from ._paths import normalize_text

__all__ = ["FrontmatterError", "parse_frontmatter"]


class FrontmatterError(PiSessionError, ValueError):
    """The frontmatter block is not valid YAML (message names the problem)."""


@functools.cache
def _yaml12_loader() -> type:
    """PyYAML's safe loader narrowed to YAML 1.2 core-schema scalars, as the
    JavaScript ``yaml`` package reads them: only ``true``/``false`` are booleans
    (``yes``/``on`` stay strings), dates stay strings, ``012`` is twelve,
    duplicate mapping keys are an error, ``<<`` is an ordinary key (no merge),
    a tab may separate tokens within a line, and a node with a tag the loader
    does not know is read as if untagged. Built on first use (PyYAML is only
    imported when a skill has frontmatter).

    Why not ``ruamel.yaml`` (a YAML 1.2 reader): with ``typ="safe"`` and
    version 1.2 it reads 18 of the frontmatter variants of
    tests/test_prompt_trees.py (``YAML_VARIANTS``, golden
    tests/goldens/prompt/skills.json) differently from pi: ``1_000``,
    ``0b101``, ``-0o7`` become numbers and ``2024-01-01`` a date (pi: strings);
    it merges ``<<`` keys and refuses ``<<: x`` and ``=``; it refuses unknown
    tags (``!custom``, ``!!python/str``) and tabs between tokens."""
    import yaml

    class Yaml12Loader(yaml.SafeLoader):
        def scan_to_next_token(self) -> None:
            # PyYAML's own loop, which also passes over tabs that do not indent a line.
            if self.index == 0 and self.peek() == "\ufeff":
                self.forward()
            while True:
                while self.peek() == " " or (self.peek() == "\t" and (self.column > 0 or self.flow_level)):
                    self.forward()
                if self.peek() == "#":
                    while self.peek() not in "\0\r\n\x85\u2028\u2029":
                        self.forward()
                if not self.scan_line_break():
                    return
                if not self.flow_level:
                    self.allow_simple_key = True

        def scan_plain_spaces(self, indent: int, start_mark: Any) -> Any:
            # Tabs between the words of a plain scalar belong to it (PyYAML stops at them).
            length = 0
            while self.peek(length) in " \t":
                length += 1
            if "\t" in self.prefix(length) and self.peek(length) not in "\0\r\n\x85\u2028\u2029#":
                whitespace = self.prefix(length)
                self.forward(length)
                return [whitespace]
            return super().scan_plain_spaces(indent, start_mark)

    Yaml12Loader.yaml_implicit_resolvers = {
        first: [
            (tag, rx)
            for tag, rx in resolvers
            if not tag.endswith((":bool", ":int", ":float", ":timestamp", ":merge", ":value"))
        ]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    Yaml12Loader.add_implicit_resolver(
        "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
    )
    Yaml12Loader.add_implicit_resolver(
        "tag:yaml.org,2002:int", re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"), list("-+0123456789")
    )
    Yaml12Loader.add_implicit_resolver(
        "tag:yaml.org,2002:float",
        re.compile(
            r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
            r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
        ),
        list("-+.0123456789"),
    )

    def construct_int(loader: Any, node: Any) -> int:
        text = str(loader.construct_scalar(node))
        if text.startswith("0o"):
            return int(text[2:], 8)
        if text.startswith("0x"):
            return int(text[2:], 16)
        return int(text, 10)

    def construct_mapping(loader: Any, node: Any) -> dict[Any, Any]:
        result: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            try:
                hash(key)
            except TypeError:
                key = repr(key)
            if key in result:
                raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
            result[key] = loader.construct_object(value_node, deep=True)
        return result

    def construct_untagged(loader: Any, node: Any) -> Any:
        if isinstance(node, yaml.MappingNode):
            return construct_mapping(loader, node)
        if isinstance(node, yaml.SequenceNode):
            return [loader.construct_object(child, deep=True) for child in node.value]
        return loader.construct_scalar(node)

    Yaml12Loader.add_constructor("tag:yaml.org,2002:int", construct_int)
    Yaml12Loader.add_constructor("tag:yaml.org,2002:map", construct_mapping)
    Yaml12Loader.add_constructor(None, construct_untagged)
    return Yaml12Loader


def _split_frontmatter(text: str) -> tuple[str | None, str]:
    normalized = normalize_text(text)
    if not normalized.startswith("---"):
        return None, normalized
    end = normalized.find("\n---", 3)
    if end == -1:
        return None, normalized
    return normalized[4:end], normalized[end + 4 :].strip()


def _position(block: str, index: int) -> str:
    """``line L, column C`` (both from 1) of ``index`` in the block as the
    file has it; an error found in the line break added after the block
    (the end of the stream) is placed at the block's end, as pi's YAML
    reader places it."""
    index = min(index, len(block))
    before = block[:index]
    line = before.count("\n") + 1
    column = index - (before.rfind("\n") + 1) + 1
    return f"line {line}, column {column}"


def parse_frontmatter(text: str) -> tuple[Any, str]:
    """Split a markdown file into ``(frontmatter, body)`` as pi 1.6 does.

    A leading byte-order mark is dropped and line ends are normalised to
    ``\n`` first. The frontmatter is the text between a leading ``---`` and
    the next line starting with ``---``, parsed as YAML 1.2 (see
    :func:`_yaml12_loader`). As in pi's YAML reader, a block scalar (``|``,
    ``>``) that ends the block keeps its final line break although the block
    text stops before it. Returns ``({}, text)`` when there is no (or an
    empty) block; the parsed value may be any YAML value (callers treat
    non-mappings as ``{}``). Pure function.

    Raises :class:`FrontmatterError` when the YAML is invalid."""
    block, body = _split_frontmatter(text)
    if not block:
        return {}, body
    import yaml

    source = block
    if not block.endswith("\n"):
        block += "\n"
    try:
        parsed = yaml.load(block, Loader=_yaml12_loader())  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        mark = getattr(exc, "problem_mark", None)
        where = f" (frontmatter {_position(source, mark.index)})" if mark is not None else ""
        raise FrontmatterError(f"invalid YAML frontmatter: {problem}{where}") from None
    return ({} if parsed is None else parsed), body
