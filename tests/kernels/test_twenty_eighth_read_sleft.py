"""The twenty-seventh read's scaffold leftovers (issue 24, sleft of the twenty-eighth read): each test
failed on 110255d."""

from __future__ import annotations

from porter.kernels.inventory import scan

# flash-attn's form: a macro that ends at the kernel's parameters, its body written after each use
FLASH = """
#define KERNEL_PARAM_MODIFIER
#define DEFINE_FLASH_FORWARD_KERNEL(kernelName, ...) \\
template<typename Kernel_traits, __VA_ARGS__> \\
__global__ void kernelName(KERNEL_PARAM_MODIFIER const float* q, float* o, int n)

DEFINE_FLASH_FORWARD_KERNEL(flash_fwd_kernel, bool Is_dropout, bool Is_causal) {
    int i = threadIdx.x;
    if (i < n) o[i] = q[i];
}

struct Traits { static constexpr int kHeadDim = 64; };

void run(float* q, float* o, int n) {
    auto kernel = &flash_fwd_kernel<Traits, true, false>;
    kernel<<<1, 256>>>(q, o, n);
}
"""


def test_a_kernel_whose_macro_ends_at_its_parameters_is_attached_to_its_launch(tmp_path):
    # the kernel was listed with no body (the macro ends at `(...)`, the `{...}` follows the use), so
    # no launch was attached and the launch's note said no kernel of that name is listed
    (tmp_path / "fa.cu").write_text(FLASH)
    inv = scan(tmp_path, limit=None)
    (k,) = inv.kernels
    assert k.name == "flash_fwd_kernel"
    assert "o[i] = q[i];" in k.source
    assert [c.line for c in k.calls] == [16]
    assert not [p for p in inv.problems if "flash_fwd_kernel" in p]

# a comparison in parentheses among a pointed-to kernel's template arguments, and a launch's own
COMPARED = """
constexpr int X = 256;
template <typename T, bool Big, int N>
__global__ void fk(T* x, int n) { if (Big && threadIdx.x < n) x[threadIdx.x] *= N; }

void run(float* x, int n) {
    auto kernel = &fk<float, (X > 128), 2>;
    kernel<<<1, 256>>>(x, n);
    fk<float, (X > 128), 4><<<1, 256>>>(x, n);
}
"""


def test_a_comparison_in_parentheses_among_template_arguments_is_no_bracket(tmp_path):
    # the `>` of `(X > 128)` closed the argument list: the pointer's launch was a note ("a name no
    # kernel porter lists has"), and the direct launch's template arguments were `128), 4`
    (tmp_path / "fk.cu").write_text(COMPARED)
    inv = scan(tmp_path, limit=None)
    (k,) = inv.kernels
    assert [(c.line, c.template) for c in k.calls] == [
        (8, ["float", "(X > 128)", "2"]),
        (9, ["float", "(X > 128)", "4"]),
    ]
    assert not inv.problems

