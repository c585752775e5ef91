"""Compose files (docker-compose.yml, compose.yaml): services' images, GPUs, environment, commands.

Each service's `image` is checked against NVIDIA's images, its `runtime: nvidia`, its device
reservations (`driver: nvidia`, `capabilities: [gpu]`) and `/dev/nvidia*` devices are GPU
requests (CTR002), its `environment` and build `args` go to the environment-variable checks, and
a `command`/`entrypoint` string is shell, a list a command of words.
"""

from __future__ import annotations

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from porter.config.settings import Settings
from porter.files.readers.yamlpos import documents, get, items, scalar, sequence
from porter.files.containers.images import image_sites
from porter.files.facts import environment
from porter.files.shell import env as envvars
from porter.files.shell.words import Command, Word
from porter.files.sites import Site, Text


def port(text: Text, path: str, settings: Settings) -> list[Site]:
    out: list[Site] = []
    for doc in documents(text):
        services = get(doc, "services")
        for _, _, service in items(services) if services is not None else []:
            out.extend(_service(text, service, settings.target))
    return out


def _service(text: Text, service: Node, target: str) -> list[Site]:
    out: list[Site] = []
    image = get(service, "image")
    if isinstance(image, ScalarNode):
        s = scalar(text, image)
        out.extend(image_sites(s.value, s.inner[0] if s.inner else s.start, target))
    out.extend(_gpu_requests(text, service, target))
    out.extend(_environment(text, get(service, "environment"), target))
    build = get(service, "build")
    if build is not None:
        out.extend(_environment(text, get(build, "args"), target))
    for key in ("command", "entrypoint"):
        node = get(service, key)
        if node is not None:
            out.extend(_command(text, node, target))
    return out


def _gpu_requests(text: Text, service: Node, target: str) -> list[Site]:
    """The three ways a service asks for NVIDIA GPUs (CTR002): NVIDIA's container runtime, a
    device reservation of the `nvidia` driver or the `gpu` capability, a `/dev/nvidia*` device."""
    out: list[Site] = []
    runtime = get(service, "runtime")
    if isinstance(runtime, ScalarNode) and runtime.value == "nvidia":
        out.append(_gpus(text, runtime, target, "`runtime: nvidia` runs the service on NVIDIA's container runtime"))
    for device in sequence(_path(service, ("deploy", "resources", "reservations", "devices"))):
        driver = get(device, "driver")
        caps = [c.value for c in sequence(get(device, "capabilities")) if isinstance(c, ScalarNode)]
        if (isinstance(driver, ScalarNode) and driver.value == "nvidia") or "gpu" in caps:
            out.append(_gpus(text, device, target, "the service reserves NVIDIA GPUs"))
    for device in sequence(get(service, "devices")):
        if isinstance(device, ScalarNode) and "/dev/nvidia" in device.value:
            out.append(_gpus(text, device, target, f"`{device.value}` maps an NVIDIA device in"))
    return out


def _path(node: Node, keys: tuple[str, ...]) -> Node | None:
    for key in keys:
        got = get(node, key)
        if got is None:
            return None
        node = got
    return node


def _gpus(text: Text, node: Node, target: str, what: str) -> Site:
    from porter.files.readers.yamlpos import span

    start, end = span(text, node)
    line_end = text.line_span(text.position(start).line)[1]
    end = min(end, line_end) if text.position(end).line != text.position(start).line else end
    return Site(
        "CTR002",
        start,
        end,
        None,
        message=f"{what}; the target's containers take {environment(target).get('compose_devices')}",
    )


def _environment(text: Text, node: Node | None, target: str) -> list[Site]:
    out: list[Site] = []
    if isinstance(node, MappingNode):
        for name, key, value in items(node):
            assert key is not None
            s = scalar(text, key)
            name_span = (s.start, s.end)
            if isinstance(value, ScalarNode):
                v = scalar(text, value)
                value_span = v.inner if v.inner is not None else (v.start, v.end)
                literal = v.value if v.inner is not None else None
                out.extend(envvars.assignment(text.text, target, name, name_span, literal, value_span))
    elif isinstance(node, SequenceNode):
        for item in node.value:
            if not isinstance(item, ScalarNode):
                continue
            v = scalar(text, item)
            if v.inner is None:
                continue
            name, eq, value = v.value.partition("=")
            start = v.inner[0]
            name_span = (start, start + len(name))
            after = (start + len(name) + 1, v.inner[1]) if eq else None
            out.extend(envvars.assignment(text.text, target, name, name_span, value if eq else None, after))
    return out


def _command(text: Text, node: Node, target: str) -> list[Site]:
    if isinstance(node, ScalarNode):
        s = scalar(text, node)
        if s.inner is None:
            return []
        from porter.files.shell.script import shell_sites

        return shell_sites(s.value, s.inner[0], text.text, target)
    words: list[Word] = []
    for item in sequence(node):
        if not isinstance(item, ScalarNode):
            return []
        s = scalar(text, item)
        # a scalar whose characters are not its value (escapes, folding) is read, never edited
        words.append(
            Word(s.value, s.value, *s.inner)
            if s.inner is not None
            else Word(text.text[s.start : s.end], None, s.start, s.end)
        )
    if not words or words[0].value is None:
        return []
    cmd = Command(words[0].value.rsplit("/", 1)[-1], words[0], tuple(words[1:]), words[0].start, words[-1].end)
    from porter.files.shell.script import command_sites  # (tree-sitter's bash, loaded where a command is read)

    return command_sites(cmd, text.text, target)
