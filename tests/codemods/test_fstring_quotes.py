"""A string porter writes inside an f-string's braces takes the quote the f-string does not use:
`f"{(x.device.type == "xla")}"` parses on Python 3.12 only (PEP 701), and porter supports 3.10."""

from __future__ import annotations

import ast

import pytest

from tests.helpers import port

HEAD = "import torch\nx = torch.randn(2).cuda()\n"


@pytest.mark.parametrize(
    "line,want",
    [
        ('print(f"on {x.is_cuda}")', "print(f\"on {(x.device.type == 'xla')}\")"),
        ("print(f'on {x.is_cuda}')", "print(f'on {(x.device.type == \"xla\")}')"),
        (
            "print(rf\"{'GPU' if x.is_cuda else 'CPU'}\\d\")",
            "print(rf\"{'GPU' if (x.device.type == 'xla') else 'CPU'}\\d\")",
        ),
        ('print(f"""{x.is_cuda} "q" """)', 'print(f"""{(x.device.type == "xla")} "q" """)'),  # legal before 3.12
    ],
)
def test_a_string_porter_writes_in_an_f_string_takes_the_other_quote(line, want):
    new, _ = port(HEAD + line + "\n", "xla")
    assert new.splitlines()[-1] == want
    # the grammar of Python before 3.12: an f-string ends at its own quote
    for node in ast.walk(ast.parse(new)):
        if isinstance(node, ast.JoinedStr):
            segment = ast.get_source_segment(new, node)
            quote = (
                segment.lstrip("fFrR")[:3]
                if segment.lstrip("fFrR").startswith(('"""', "'''"))
                else segment.lstrip("fFrR")[0]
            )
            assert (
                quote not in segment[len(segment) - len(segment.lstrip("fFrR")) + len(quote) : -len(quote)]
                or len(quote) == 3
            )


def test_a_file_that_nests_an_f_string_s_quote_itself_keeps_its_strings():
    # its project runs Python 3.12 or later: the file's own `"a"` is not requoted
    new, _ = port(HEAD + 'print(f"{x.is_cuda} {"a"}")\n', "xla")
    assert new.splitlines()[-1] == 'print(f"{(x.device.type == "xla")} {"a"}")'
