"""The twenty-seventh read of the scaffold writers (issue 24): each test failed on ec8b33c."""

from __future__ import annotations

from porter.kernels.inventory import scan

BRANCHED = (
    "#ifdef USE_ROCM\n"
    "__global__ void rk(float* x, int n, int wave) { x[0] = wave; }\n"
    "#else\n"
    "__global__ void rk(float* x, int n) { x[0] = 1; }\n"
    "#endif\n"
    "#if 0\n"
    "__global__ void dead_k(float* x) { x[0] = 1; }\n"
    "#endif\n"
    "#ifdef USE_FAST\n"
    "__global__ void fast_k(float* x, int n) { x[0] = n; }\n"
    "#else\n"
    "__global__ void fast_k(float* x, int n, float alpha) { x[0] = alpha; }\n"
    "#endif\n"
    "__global__ void plain_k(float* x) { x[0] = 1; }\n"
    "__global__ void plain_k(double* x) { x[0] = 1; }\n"
    "void go(float* x, double* y, int n) { rk<<<1, 1>>>(x, n); plain_k<<<1, 1>>>(x); plain_k<<<1, 1>>>(y); }\n"
)


def test_a_kernel_in_an_if_branch_nvcc_does_not_compile_or_in_another_branch_is_said(tmp_path):
    # a kernel only a ROCm build (`#ifdef USE_ROCM`) or no build (`#if 0`) compiles was listed and
    # scaffolded as any other, unsaid (vllm 0.34.0: 30 such kernels); the same name defined in the
    # two branches of an `#if` with other parameters was "an overload", though a build compiles one
    (tmp_path / "k.cu").write_text(BRANCHED)
    kernels = {(k.name, k.line): k for k in scan(tmp_path).kernels}
    assert "does not compile (`#ifdef USE_ROCM` of the `#if` at line 1)" in kernels["rk", 2].detail
    assert "does not compile (`#if 0` of the `#if` at line 6)" in kernels["dead_k", 7].detail
    cuda = kernels["rk", 4].detail
    assert "does not compile" not in cuda and "overload" not in cuda
    assert "line 2's kernel defined again in another branch of the `#if` at line 1 (`#else`" in cuda
    # a branch the build's -D decides: both said as the other's branch, neither as not compiled
    fast = kernels["fast_k", 12].detail
    assert "another branch of the `#if` at line 9 (`#else`, line 10 in `#ifdef USE_FAST`)" in fast
    assert "does not compile" not in kernels["fast_k", 10].detail + fast
    # the control: a true overload (no `#if`) is still one
    assert kernels["plain_k", 15].detail == "__global__; an overload of line 14: `double* x` for `float* x`"


def test_a_launch_s_character_literal_argument_is_listed_as_written(tmp_path):
    # a launch's arguments were read from the code with its literals blanked: `'x'` (and `','`) was
    # an empty argument in the table, `--json` and the scaffold's TODO ("(o, , 3)")
    (tmp_path / "c.cu").write_text(
        "__global__ void ck(float* o, char c, int n) { o[0] = c; }\n"
        "void go(float* o) {\n  ck<<<1, 1>>>(o, 'x', 3);  // 'a comment'\n  ck<<<1, 1>>>(o, ',', /* 'c' */ 4);\n}\n"
    )
    (kernel,) = scan(tmp_path).kernels
    assert [c.args for c in kernel.calls] == [["o", "'x'", "3"], ["o", "','", "4"]]


def test_a_launch_that_runs_no_listed_kernel_is_said(tmp_path):
    # `f<<<` of a launcher's parameter, `kp<<<` of a function pointer (vllm 0.34.0's `kernel =
    # pick_...(...)` then `kernel<<<`, 11 launches; flash-attn's 11) and a launch of too few arguments
    # were attached to no kernel and said nowhere: `k1` and `k2` listed as never launched
    (tmp_path / "f.cu").write_text(
        "__global__ void k1(float* x, int n) { x[0] = n; }\n"
        "__global__ void k2(float* x, int n) { x[0] = n; }\n"
        "template <typename F> void launch(F f, float* x, int n) { f<<<1, 1>>>(x, n); }\n"
        "void go(float* x, int n) {\n  launch(k1, x, n);\n  void (*kp)(float*, int) = k2;\n  kp<<<1, 1>>>(x, n);\n"
        "  k1<<<1, 1>>>(x);\n  k2<<<1, 1>>>(x, n);\n}\n"
    )
    inv = scan(tmp_path)
    # (the control: `k2<<<` of its two arguments; `kp<<<` is `k2`'s since the second wave's S4, as
    # `auto kp = &k2;` was: no note)
    assert [len(k.calls) for k in inv.kernels] == [0, 2]
    assert sorted(inv.problems) == [
        "f.cu:3: a launch of `f`, a name no kernel porter lists has (a function pointer, a launcher's parameter,"
        " a kernel outside the tree): the kernel it runs is not read",
        "f.cu:8: a launch of `k1`, with 1 argument(s), which no kernel of that name porter lists takes: the kernel"
        " it runs is not read",
    ]


def test_the_listing_counts_its_notes_as_notes_not_unread_files(tmp_path):
    # a launch note (above) was counted in "1 kernel(s); 1 file(s) not read", every file read
    from typer.testing import CliRunner

    from porter.cli import app

    (tmp_path / "f.cu").write_text(
        "__global__ void k1(float* x, int n) { x[0] = n; }\nvoid go(float* x, int n, F f) {\n  f<<<1, 1>>>(x, n);\n}\n"
    )
    out = CliRunner().invoke(app, ["kernels", str(tmp_path)], env={"COLUMNS": "200"})
    assert out.exit_code == 1, out.output
    assert out.stdout.splitlines()[-1] == "1 kernel(s); 1 note(s) on stderr"
    assert "f.cu:3: a launch of `f`" in out.stderr
