"""The twenty-sixth read's scaffold leftovers (issue 24, sleft of the twenty-seventh read): each test
failed on ec8b33c."""

from __future__ import annotations

from porter.analysis import native_ops

# a key given by a macro: the file's own (`DEVICE_KEY`, `DEV`), and one it does not define
KEYED = b"""
#define DEVICE_KEY c10::DispatchKey::CUDA
#define DEV CUDA
static auto r = torch::RegisterOperators()
    .op(torch::RegisterOperators::options().schema("ts::a(Tensor x) -> Tensor").kernel<decltype(a), &a>(DEVICE_KEY))
    .op(torch::RegisterOperators::options().schema("ts::b(Tensor x) -> Tensor").kernel<decltype(b), &b>(OTHER_KEY))
    .op(torch::RegisterOperators::options().schema("ts::c(Tensor x) -> Tensor").catchAllKernel<decltype(c), &c>());
TORCH_LIBRARY_IMPL(ts, DEV, m) { m.impl("d", &d); }
TORCH_LIBRARY(ts, m) {
  m.def("e(Tensor x) -> Tensor");
  m.impl("e", DEVICE_KEY, &e);
  m.impl("f", HOST_KEY, &f);
  m.impl("g", torch::dispatch(c10::DispatchKey::CUDA, TORCH_FN(g)));
  m.def("h", h);
}
"""


def test_a_key_given_by_a_macro_is_read_where_the_file_defines_it():
    # each was "any device" (`d`'s the macro's name): `a`, `d`, `e` and `g` have a CUDA kernel only, and
    # lint said none of them; a macro the file does not define is no device porter names, never "any"
    assert native_ops.registrations(KEYED) == [
        ("ts", "a", "CUDA"),
        ("ts", "b", "unread:OTHER_KEY"),
        ("ts", "c", "any"),  # (a catch-all kernel: every device runs it)
        ("ts", "d", "CUDA"),
        ("ts", "e", "CUDA"),
        ("ts", "f", "unread:HOST_KEY"),
        ("ts", "g", "CUDA"),
        ("ts", "h", "any"),  # (`m.def(schema, fn)`: no key)
    ]
    assert sorted(native_ops.cuda_only_ops([("k.cpp", KEYED)])["ts"]) == ["a", "d", "e", "g"]
