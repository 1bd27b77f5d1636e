"""Validators: the rules a provider payload breaks (**beyond pi**).

Owns: :func:`validate_openai_chat`, :func:`validate_openai_responses`,
:func:`validate_anthropic_messages` and the checks they share (payload
list, call ids, tool names, argument JSON text, non-blank text, image data
URLs, lone UTF-16 surrogates), which live in
:mod:`pi_session.adapters.checks`. An adapter's output always validates clean.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .canonical import SUPPORTED_IMAGE_TYPES
from .checks import (
    check_answer,
    check_arguments_text,
    check_data_url,
    check_list,
    check_nonblank,
    check_object,
    check_text,
    check_unicode,
    check_unique_safe_id,
    nonblank,
    payload_list,
    payload_system,
)


def validate_openai_chat(payload: Any, *, allow_empty: bool = True) -> list[str]:
    """Rules of the OpenAI Chat Completions ``messages`` a payload breaks.

    Args:
        payload: an :class:`AdapterResult`, a dict with ``messages``, or the
            messages list itself.
        allow_empty: when False an empty list is a violation.

    Returns:
        One line per violation (``messages[i]...: problem``); empty when valid.
        Checked: roles; user content non-empty (string or ``text`` /
        ``image_url`` parts); assistant has content or ``tool_calls``; call
        shape (id ≤ 40 chars, unique; type function; name; arguments a JSON
        object text); each assistant's calls answered by exactly the run of
        ``tool`` messages directly after it; no other tool messages; no
        string (nor the JSON text of ``arguments``) holds a lone UTF-16
        surrogate.
    """
    msgs = payload_list(payload, "messages")
    problems: list[str] = []
    if not check_list(msgs, "messages", allow_empty, problems):
        return problems
    seen_ids: set[str] = set()
    expecting: list[str] | None = None  # call ids of the assistant whose tool run we are in
    answered: set[str] = set()

    def close(at: str) -> None:
        nonlocal expecting
        if expecting is not None:
            missing = [c for c in expecting if c not in answered]
            if missing:
                problems.append(f"{at}: tool calls without a tool message right after the assistant: {missing}")
        expecting = None

    for i, m in enumerate(msgs):
        w = f"messages[{i}]"
        if not check_object(m, w, problems):
            continue
        role = m.get("role")
        if role != "tool":
            close(w)
        content = m.get("content")
        if role in ("system", "developer"):
            if not nonblank(content) and not (isinstance(content, list) and content):
                problems.append(f"{w}: {role} content empty")
        elif role == "user":
            if isinstance(content, str):
                if not content:
                    problems.append(f"{w}: user content empty")
            elif isinstance(content, list) and content:
                for j, part in enumerate(content):
                    pw = f"{w}.content[{j}]"
                    ptype = part.get("type") if isinstance(part, Mapping) else None
                    if ptype == "text":
                        check_text(part.get("text"), pw, problems)
                    elif ptype == "image_url":
                        iu = part.get("image_url")
                        check_data_url(iu.get("url") if isinstance(iu, Mapping) else None, pw, problems)
                    else:
                        problems.append(f"{pw}: unknown part type {ptype!r}")
            else:
                problems.append(f"{w}: user content must be a non-empty string or part list")
        elif role == "assistant":
            calls = m.get("tool_calls")
            has_content = (isinstance(content, str) and content != "") or (isinstance(content, list) and content)
            if content is not None and not isinstance(content, (str, list)):
                problems.append(f"{w}: assistant content must be a string, parts or null")
            if calls is not None and (not isinstance(calls, list) or not calls):
                problems.append(f"{w}: tool_calls must be a non-empty list when present")
                calls = None
            if not has_content and not calls:
                problems.append(f"{w}: assistant message has neither content nor tool_calls")
            if calls:
                expecting, answered = [], set()
                for j, c in enumerate(calls):
                    cw = f"{w}.tool_calls[{j}]"
                    if not check_object(c, cw, problems):
                        continue
                    cid = c.get("id")
                    if not isinstance(cid, str) or not cid:
                        problems.append(f"{cw}: id missing")
                        continue
                    if len(cid) > 40:
                        problems.append(f"{cw}: id longer than 40 characters")
                    if cid in seen_ids:
                        problems.append(f"{cw}: duplicate tool call id {cid}")
                    seen_ids.add(cid)
                    expecting.append(cid)
                    if c.get("type") != "function":
                        problems.append(f"{cw}: type must be 'function'")
                    fn = c.get("function")
                    if not isinstance(fn, Mapping):
                        problems.append(f"{cw}: function name missing")
                    elif check_nonblank(fn.get("name"), cw, "function name missing", problems):
                        check_arguments_text(fn.get("arguments"), cw, problems)
        elif role == "tool":
            tid = m.get("tool_call_id")
            if not isinstance(content, str) and not (isinstance(content, list) and content):
                problems.append(f"{w}: tool content must be a string or text parts")
            if expecting is None:
                problems.append(f"{w}: tool message {tid} does not directly follow an assistant message with tool_calls")
            else:
                check_answer(
                    tid,
                    expecting,
                    answered,
                    problems,
                    unknown=f"{w}: tool message {tid} answers no call of the preceding assistant message",
                    second=f"{w}: second tool message for call {tid}",
                )
        else:
            problems.append(f"{w}: unknown role {role!r}")
    close(f"messages[{len(msgs)}] (end)")
    check_unicode(problems, (msgs, "messages"))
    return problems


def validate_openai_responses(payload: Any, *, allow_empty: bool = True) -> list[str]:
    """Rules of the OpenAI Responses ``input`` a payload breaks.

    Args:
        payload: an :class:`AdapterResult`, a dict with ``input`` (and
            optional ``instructions``), or the item list itself.
        allow_empty: when False an empty list is a violation.

    Returns:
        One line per violation (``input[i]...: problem``). Checked: message
        items (role, non-empty content; user parts ``input_text`` /
        ``input_image``; assistant a string or ``output_text`` parts);
        ``function_call`` (call_id ``[A-Za-z0-9_-]``, ≤ 64 chars, unique;
        name; arguments a JSON object text); ``function_call_output``
        answers an earlier call exactly once, with only function call items
        between the call and its output; every call answered; no string
        (``instructions`` and ``arguments`` JSON text included) holds a
        lone UTF-16 surrogate.
    """
    items = payload_list(payload, "input")
    problems: list[str] = []
    if isinstance(payload, Mapping) and "instructions" in payload and not isinstance(payload["instructions"], str):
        problems.append("instructions: not a string")
    if not check_list(items, "input", allow_empty, problems):
        return problems
    calls: set[str] = set()
    answered: set[str] = set()
    open_calls: set[str] = set()  # calls since the last message item

    def close(at: str) -> None:
        missing = sorted(c for c in open_calls if c not in answered)
        if missing:
            problems.append(f"{at}: function calls without an output before this item: {missing}")
        open_calls.clear()

    for i, it in enumerate(items):
        w = f"input[{i}]"
        if not check_object(it, w, problems):
            continue
        itype = it.get("type", "message")
        if itype == "message":
            close(w)
            role = it.get("role")
            content = it.get("content")
            if role not in ("user", "assistant", "system", "developer"):
                problems.append(f"{w}: unknown role {role!r}")
            if isinstance(content, str):
                if not content:
                    problems.append(f"{w}: content empty")
            elif isinstance(content, list) and content:
                allowed = ("output_text", "refusal") if role == "assistant" else ("input_text", "input_image")
                for j, part in enumerate(content):
                    pw = f"{w}.content[{j}]"
                    ptype = part.get("type") if isinstance(part, Mapping) else None
                    if ptype not in allowed:
                        problems.append(f"{pw}: part type {ptype!r} not allowed for role {role}")
                    elif ptype == "input_image":
                        check_data_url(part.get("image_url"), pw, problems)
                    elif ptype in ("input_text", "output_text"):
                        check_text(part.get("text"), pw, problems)
            else:
                problems.append(f"{w}: content must be a non-empty string or part list")
        elif itype == "function_call":
            cid = it.get("call_id")
            if check_unique_safe_id(cid, w, "call_id", calls, problems):
                open_calls.add(cid)
            check_nonblank(it.get("name"), w, "name missing", problems)
            check_arguments_text(it.get("arguments"), w, problems)
        elif itype == "function_call_output":
            cid = it.get("call_id")
            output = it.get("output")
            if not isinstance(cid, str):
                problems.append(f"{w}: call_id must be a string, not {type(cid).__name__}")
            elif cid not in calls:
                problems.append(f"{w}: output for call {cid} that no earlier function_call made")
            elif cid in answered:
                problems.append(f"{w}: second output for call {cid}")
            elif cid not in open_calls:
                problems.append(f"{w}: output for call {cid} separated from its call by a message")
            else:
                answered.add(cid)
            if isinstance(output, list):
                for j, part in enumerate(output):
                    pw = f"{w}.output[{j}]"
                    ptype = part.get("type") if isinstance(part, Mapping) else None
                    if ptype == "input_image":
                        check_data_url(part.get("image_url"), pw, problems)
                    elif ptype != "input_text" or not isinstance(part.get("text"), str):
                        problems.append(f"{pw}: output part must be input_text or input_image")
                if not output:
                    problems.append(f"{w}: output list empty")
            elif not isinstance(output, str):
                problems.append(f"{w}: output must be a string or part list")
        else:
            problems.append(f"{w}: unknown item type {itype!r}")
    close(f"input[{len(items)}] (end)")
    check_unicode(problems, (payload_system(payload, "instructions"), "instructions"), (items, "input"))
    return problems


def validate_anthropic_messages(payload: Any, *, allow_empty: bool = True) -> list[str]:
    """Rules of the Anthropic Messages ``messages`` (and ``system``) a payload breaks.

    Args:
        payload: an :class:`AdapterResult`, a dict with ``messages`` (and
            optional ``system``), or the messages list itself.
        allow_empty: when False an empty list is a violation (the API needs
            at least one message; an adapter returns [] for an empty context).

    Returns:
        One line per violation (``messages[i]...: problem``). Checked: first
        message is user, roles alternate; content a non-blank string or a
        non-empty block list; text blocks non-blank; images base64 with a
        supported media type; no thinking blocks; ``tool_use`` (id
        ``[A-Za-z0-9_-]`` ≤ 64, unique; name; input an object) only in
        assistant messages, each answered by exactly one ``tool_result`` in
        the very next (user) message; ``tool_result`` blocks only answer the
        previous assistant's calls and come before other blocks; a final
        assistant message does not end with whitespace; no string (``system``
        included) holds a lone UTF-16 surrogate.
    """
    msgs = payload_list(payload, "messages")
    problems: list[str] = []
    system = payload_system(payload, "system")
    if system is not None and not isinstance(system, (str, list)):
        problems.append("system: must be a string or text blocks")
    if not check_list(msgs, "messages", allow_empty, problems):
        return problems
    seen_ids: set[str] = set()
    prev_calls: list[str] = []
    prev_role: str | None = None
    for i, m in enumerate(msgs):
        w = f"messages[{i}]"
        if not check_object(m, w, problems):
            prev_calls, prev_role = [], None
            continue
        role = m.get("role")
        if role not in ("user", "assistant"):
            problems.append(f"{w}: role must be user or assistant, not {role!r}")
        if i == 0 and role != "user":
            problems.append(f"{w}: the first message must be from the user")
        if prev_role is not None and role == prev_role:
            problems.append(f"{w}: two {role} messages in a row")
        content = m.get("content")
        blocks: list[Any]
        if isinstance(content, str):
            check_nonblank(content, w, "content is blank", problems)
            blocks = [{"type": "text", "text": content}]
        elif isinstance(content, list):
            if not content:
                problems.append(f"{w}: content is empty")
            blocks = content
        else:
            problems.append(f"{w}: content must be a string or a block list")
            blocks = []
        results: set[str] = set()
        calls: list[str] = []
        seen_other = False
        for j, b in enumerate(blocks):
            bw = f"{w}.content[{j}]"
            btype = b.get("type") if isinstance(b, Mapping) else None
            if btype == "text":
                check_nonblank(b.get("text"), bw, "text block is blank", problems)
                seen_other = True
            elif btype == "image":
                _check_anthropic_image(b, bw, problems)
                if role != "user":
                    problems.append(f"{bw}: image in a {role} message")
                seen_other = True
            elif btype == "tool_use":
                if role != "assistant":
                    problems.append(f"{bw}: tool_use in a {role} message")
                tid = b.get("id")
                if check_unique_safe_id(tid, bw, "tool_use id", seen_ids, problems):
                    calls.append(tid)
                check_nonblank(b.get("name"), bw, "tool_use name missing", problems)
                if not isinstance(b.get("input"), Mapping):
                    problems.append(f"{bw}: tool_use input must be an object")
            elif btype == "tool_result":
                if role != "user":
                    problems.append(f"{bw}: tool_result in a {role} message")
                if seen_other:
                    problems.append(f"{bw}: tool_result after other content (tool results must come first)")
                tid = b.get("tool_use_id")
                check_answer(
                    tid,
                    prev_calls,
                    results,
                    problems,
                    unknown=f"{bw}: tool_result {tid} answers no tool_use of the previous assistant message",
                    second=f"{bw}: second tool_result for {tid}",
                )
                rc = b.get("content")
                if isinstance(rc, list):
                    for k, rb in enumerate(rc):
                        rbt = rb.get("type") if isinstance(rb, Mapping) else None
                        if rbt == "text":
                            check_nonblank(rb.get("text"), f"{bw}.content[{k}]", "text block is blank", problems)
                        elif rbt == "image":
                            _check_anthropic_image(rb, f"{bw}.content[{k}]", problems)
                        else:
                            problems.append(f"{bw}.content[{k}]: tool_result content must be text or image")
                elif rc is not None and not isinstance(rc, str):
                    problems.append(f"{bw}: tool_result content must be a string or blocks")
                if "is_error" in b and not isinstance(b["is_error"], bool):
                    problems.append(f"{bw}: is_error must be a boolean")
            elif btype in ("thinking", "redacted_thinking"):
                if not b.get("signature") and btype == "thinking":
                    problems.append(f"{bw}: thinking block without a signature")
                seen_other = True
            else:
                problems.append(f"{bw}: unknown block type {btype!r}")
                seen_other = True
        missing = [c for c in prev_calls if c not in results]
        if missing:
            problems.append(f"{w}: tool_use ids without a tool_result in this message: {missing}")
        prev_calls, prev_role = calls, role
    if prev_calls:
        problems.append(f"messages[{len(msgs)}] (end): tool_use ids never answered: {prev_calls}")
    if msgs and isinstance(msgs[-1], Mapping) and msgs[-1].get("role") == "assistant":
        content = msgs[-1].get("content")
        last = content if isinstance(content, str) else (
            content[-1].get("text") if isinstance(content, list) and content and isinstance(content[-1], Mapping)
            and content[-1].get("type") == "text" else None
        )
        if isinstance(last, str) and last != last.rstrip():
            problems.append(f"messages[{len(msgs) - 1}]: final assistant content ends with whitespace")
    check_unicode(problems, (system, "system"), (msgs, "messages"))
    return problems


def _check_anthropic_image(b: Mapping[str, Any], where: str, problems: list[str]) -> None:
    src = b.get("source")
    if not isinstance(src, Mapping):
        problems.append(f"{where}: image source missing")
        return
    if src.get("type") == "base64":
        if src.get("media_type") not in SUPPORTED_IMAGE_TYPES:
            problems.append(f"{where}: unsupported image media_type {src.get('media_type')!r}")
        if not isinstance(src.get("data"), str) or not src.get("data"):
            problems.append(f"{where}: image data missing")
    elif src.get("type") != "url":
        problems.append(f"{where}: image source type must be base64 or url")
